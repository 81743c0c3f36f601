//===- VerifyGraphLowered.cpp - No graph op left after the lowering ---------===//

#include "compiler/conversion/Passes.h"
#include "dialects/graph/GraphDialect.h"

namespace kiln {

#define GEN_PASS_DEF_VERIFYGRAPHLOWEREDPASS
#include "compiler/conversion/Passes.h.inc"

using namespace mlir;

namespace {

struct VerifyGraphLoweredPass : impl::VerifyGraphLoweredPassBase<VerifyGraphLoweredPass> {
  void runOnOperation() override {
    Dialect *graph = getContext().getLoadedDialect<graph::GraphDialect>();
    bool ok = true;
    getOperation().walk([&](Operation *op) {
      if (graph && op->getDialect() == graph) {
        op->emitError() << "'" << op->getName() << "' has no code generation yet";
        ok = false;
      }
    });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
