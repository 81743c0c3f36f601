//===- LowerMemRefCopies.cpp - memref.copy as a linalg copy ------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace kiln {

#define GEN_PASS_DEF_LOWERMEMREFCOPIESPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

struct LowerMemRefCopiesPass : impl::LowerMemRefCopiesPassBase<LowerMemRefCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::makeMemRefCopyOp(builder, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
} // namespace kiln
