//===- ExportCpuDispatchAbi.cpp - Kiln's CPU kernel entry points --------------===//
//
// Lowered dispatch functions take one bare pointer per binding and the workgroup id. The
// runtime calls every kernel the same way, through `kiln_cpu_dispatch_fn`
// (runtime/include/kiln/kernel_abi.h): this pass adds that entry point for each dispatch.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace kiln {
#define GEN_PASS_DEF_EXPORTCPUDISPATCHABIPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

struct ExportCpuDispatchAbiPass : impl::ExportCpuDispatchAbiPassBase<ExportCpuDispatchAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    auto pointer = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);
    SmallVector<LLVM::LLVMFuncOp> dispatches;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (function->hasAttr(kDispatchAttr) && !function.isExternal())
        dispatches.push_back(function);
    // A dispatch the LLVM lowering left behind (it does so for a kernel over a zero-sized
    // tensor) would otherwise surface as an untranslatable func.func much later.
    for (auto function : module.getOps<func::FuncOp>())
      if (function->hasAttr(kDispatchAttr) && !function.isExternal()) {
        function.emitError("a dispatch was not lowered to the LLVM dialect (does it compute a "
                           "zero-sized tensor?)");
        return signalPassFailure();
      }

    for (LLVM::LLVMFuncOp dispatch : dispatches) {
      LLVM::LLVMFunctionType type = dispatch.getFunctionType();
      if (type.getNumParams() == 0) {
        dispatch.emitError("a lowered dispatch must take the workgroup id last and return "
                           "nothing");
        return signalPassFailure();
      }
      unsigned bindingCount = type.getNumParams() - 1;
      for (unsigned i = 0; i < bindingCount; ++i)
        if (type.getParamType(i) != pointer) {
          dispatch.emitError() << "binding " << i << " lowered to " << type.getParamType(i)
                               << ", not a bare pointer (is its shape static?)";
          return signalPassFailure();
        }
      if (type.getParamType(bindingCount) != i64 || !type.getReturnType() ||
          !isa<LLVM::LLVMVoidType>(type.getReturnType())) {
        dispatch.emitError("a lowered dispatch must take the workgroup id last and return "
                           "nothing");
        return signalPassFailure();
      }

      OpBuilder builder(module.getBodyRegion());
      builder.setInsertionPointToEnd(module.getBody());
      Location loc = dispatch.getLoc();
      auto entryType =
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {pointer, i64});
      auto entry = LLVM::LLVMFuncOp::create(builder, loc, ("kiln_" + dispatch.getName()).str(),
                                            entryType);
      Block *block = entry.addEntryBlock(builder);
      builder.setInsertionPointToStart(block);
      SmallVector<Value> arguments;
      for (unsigned i = 0; i < bindingCount; ++i) {
        Value slot = LLVM::GEPOp::create(builder, loc, pointer, pointer, block->getArgument(0),
                                         ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        arguments.push_back(LLVM::LoadOp::create(builder, loc, pointer, slot));
      }
      arguments.push_back(block->getArgument(1));
      LLVM::CallOp::create(builder, loc, dispatch, arguments);
      LLVM::ReturnOp::create(builder, loc, ValueRange());
      dispatch.setLinkage(LLVM::Linkage::Internal);
    }
  }
};

} // namespace
} // namespace kiln
