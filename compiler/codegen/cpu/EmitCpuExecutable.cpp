//===- EmitCpuExecutable.cpp - The CPU kernels as a shared object -------------===//

#include "compiler/codegen/cpu/CpuObject.h"
#include "compiler/codegen/Executable.h"
#include "compiler/codegen/Passes.h"

namespace kiln {

#define GEN_PASS_DEF_EMITCPUEXECUTABLEPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

struct EmitCpuExecutablePass : impl::EmitCpuExecutablePassBase<EmitCpuExecutablePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    for (auto kernels : llvm::to_vector(top.getOps<ModuleOp>())) {
      if (kernels.getSymName() != program::kKernelsSymbol)
        continue;
      // The dispatches, lowered to the LLVM dialect, keep their attributes; each is exported as
      // kiln_<name> (kiln-export-cpu-dispatch-abi).
      KernelTable table;
      CodeObjectImage image;
      image.format = program::CodeFormat::elf;
      for (auto function : kernels.getOps<LLVM::LLVMFuncOp>()) {
        if (!function->hasAttr(kDispatchAttr) || function.isExternal())
          continue;
        KernelTable::Entry entry;
        entry.symbol = ("kiln_" + function.getName()).str();
        if (auto count = function->getAttrOfType<IntegerAttr>(kWorkgroupCountAttr))
          entry.workgroupCount = count.getInt();
        if (auto dims = function->getAttrOfType<DenseI64ArrayAttr>(kWorkgroupDimsAttr))
          entry.workgroupDims.assign(dims.asArrayRef().begin(), dims.asArrayRef().end());
        image.kernels.push_back(entry.symbol);
        table.dispatches[function.getName()] = entry;
      }
      FailureOr<CpuObject> object = emitCpuSharedObject(
          kernels, cpu, SmallVector<std::string>(features.begin(), features.end()));
      if (failed(object))
        return signalPassFailure();
      image.target = object->target;
      image.data = std::move(object->sharedObject);
      table.codeObjects.push_back(std::move(image));
      replaceWithExecutable(kernels, table);
    }
  }
};

} // namespace
} // namespace kiln
