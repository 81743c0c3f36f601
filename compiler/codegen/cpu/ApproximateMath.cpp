//===- ApproximateMath.cpp - Polynomial approximations of f32 math ------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

struct ApproximateMathPass : impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("the approximation of math functions did not converge");
      signalPassFailure();
    }
  }
};

} // namespace
} // namespace kiln
