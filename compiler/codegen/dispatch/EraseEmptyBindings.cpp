//===- EraseEmptyBindings.cpp - Dispatch bindings with no elements --------===//
//
// A binding with no elements is never accessed, but the bare-pointer calling convention of the
// LLVM lowering refuses a memref like memref<2x0x4xf32> (a zero dimension after the first). Such
// arguments become memref<0xT>, and the function body sees an equally empty local buffer of the
// original type.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace kiln {
#define GEN_PASS_DEF_ERASEEMPTYBINDINGSPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Whether `type` is a statically shaped memref with no elements and the identity layout that
/// the bare-pointer convention would refuse (any rank but 1).
bool isEmptyMultiDimensional(Type type) {
  auto memref = llvm::dyn_cast<MemRefType>(type);
  return memref && memref.hasStaticShape() && memref.getNumElements() == 0 &&
         memref.getRank() != 1 && memref.getLayout().isIdentity();
}

struct EraseEmptyBindingsPass : impl::EraseEmptyBindingsPassBase<EraseEmptyBindingsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp function) {
      if (!function->hasAttr(kDispatchAttr) || function.isExternal())
        return;
      Block &entry = function.getBody().front();
      OpBuilder builder = OpBuilder::atBlockBegin(&entry);
      SmallVector<Type> inputs(function.getArgumentTypes());
      bool changed = false;
      for (auto [index, argument] : llvm::enumerate(entry.getArguments())) {
        if (!isEmptyMultiDimensional(argument.getType()))
          continue;
        auto type = llvm::cast<MemRefType>(argument.getType());
        // A zero-sized local buffer with the layout the uses expect: nothing is read or stored
        // through either.
        Value local = memref::AllocaOp::create(builder, function.getLoc(), type);
        argument.replaceAllUsesWith(local);
        auto flat = MemRefType::get({0}, type.getElementType(), MemRefLayoutAttrInterface{},
                                    type.getMemorySpace());
        argument.setType(flat);
        inputs[index] = flat;
        changed = true;
      }
      if (changed)
        function.setFunctionType(
            FunctionType::get(function.getContext(), inputs, function.getResultTypes()));
    });
  }
};

} // namespace
} // namespace kiln
