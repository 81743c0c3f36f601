//===- GeneralizeReductions.cpp - linalg.reduce as linalg.generic ------------===//
//
// Upstream elementwise fusion fuses producers into linalg.generic consumers only: written as
// generics, reductions absorb the elementwise ops that feed them (softmax's exp(x - max) into its
// sum, layer norm's (x - mean)^2 into its variance), so what passes between the ops of a
// normalization is one value per row.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_GENERALIZEREDUCTIONSPASS
#include "compiler/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

struct GeneralizeReductionsPass : impl::GeneralizeReductionsPassBase<GeneralizeReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::ReduceOp> reductions;
    getOperation().walk([&](linalg::ReduceOp op) { reductions.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::ReduceOp op : reductions) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op.emitError("cannot write the reduction as a linalg.generic");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
} // namespace kiln
