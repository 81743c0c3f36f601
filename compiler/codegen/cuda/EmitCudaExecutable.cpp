//===- EmitCudaExecutable.cpp - The CUDA kernels as cubins and PTX ------------===//

#include "compiler/codegen/Executable.h"
#include "compiler/codegen/Passes.h"
#include "compiler/codegen/sim/CudaSimObject.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln {

#define GEN_PASS_DEF_EMITCUDAEXECUTABLEPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

struct EmitCudaExecutablePass : impl::EmitCudaExecutablePassBase<EmitCudaExecutablePass> {
  using Base::Base;

  /// Serializes a copy of `kernels` for `arch` into a cubin or PTX: serializing replaces the
  /// gpu.module, which every code object needs. The copy stands alone while it is serialized.
  FailureOr<CodeObjectImage> serialize(ModuleOp kernels, StringRef arch, bool ptx) {
    OwningOpRef<ModuleOp> owned = cast<ModuleOp>(kernels->clone());
    ModuleOp copy = *owned;
    std::string target = "nvvm-attach-target{module=" + kCudaKernelModule.str() +
                         " chip=" + arch.str() + " features=" + ptxFeatures(arch)->str() + " O=3";
    if (!libdevice.empty())
      target += " l=" + libdevice;
    target += "},gpu-module-to-binary{format=" + std::string(ptx ? "isa" : "bin") + "}";
    PassManager pm(&getContext(), ModuleOp::getOperationName());
    if (failed(parsePassPipeline(target, pm, llvm::errs())) || failed(pm.run(copy)))
      return failure();
    auto binary = copy.lookupSymbol<gpu::BinaryOp>(kCudaKernelModule);
    if (!binary)
      return kernels.emitError("the CUDA kernels were not serialized");
    CodeObjectImage image;
    image.format = ptx ? program::CodeFormat::ptx : program::CodeFormat::cubin;
    for (Attribute attribute : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attribute);
      image.target = cast<NVVM::NVVMTargetAttr>(object.getTarget()).getChip().str();
      image.data = object.getObject().getValue().str();
    }
    return image;
  }

  void runOnOperation() override {
    ModuleOp top = getOperation();
    SmallVector<std::string> archs(gpuArchs.begin(), gpuArchs.end());
    if (failed(verifyGpuArchs(top, archs, "gpu-archs")))
      return signalPassFailure();
    for (auto kernels : llvm::to_vector(top.getOps<ModuleOp>())) {
      if (kernels.getSymName() != program::kKernelsSymbol)
        continue;
      // The kernels in launch order; every code object lists them alike.
      KernelTable table;
      std::vector<std::string> names;
      for (auto function : kernels.getOps<func::FuncOp>()) {
        auto launches = function->getAttrOfType<ArrayAttr>(kCudaLaunchesAttr);
        if (!launches)
          continue;
        KernelTable::Entry entry;
        if (auto scratch = function->getAttrOfType<ArrayAttr>(kCudaScratchAttr))
          entry.scratch.assign(scratch.begin(), scratch.end());
        if (auto dims = function->getAttrOfType<ArrayAttr>(kCudaScratchDimsAttr))
          entry.scratchDims.assign(dims.begin(), dims.end());
        entry.cudaLaunches.emplace();
        for (Attribute launch : launches) {
          auto fields = cast<ArrayAttr>(launch);
          names.push_back(cast<StringAttr>(fields[0]).getValue().str());
          entry.cudaLaunches->push_back(program::CudaLaunchAttr::get(
              &getContext(), names.back(), cast<IntegerAttr>(fields[1]).getInt(),
              cast<IntegerAttr>(fields[2]).getInt(),
              fields.size() > 3 ? cast<AffineMapAttr>(fields[3]) : AffineMapAttr()));
        }
        table.dispatches[function.getSymName()] = entry;
      }
      // A cubin per architecture; PTX for the oldest is the fallback: the driver compiles PTX
      // for any GPU at least as new as its target, so it covers every GPU the cubins do not
      // (sm_86 and sm_89 for sm_80,sm_90 take the sm_80 cubin; sm_100 and sm_120 compile the
      // PTX).
      for (const std::string &arch : gpuArchs) {
        if (arch == kCudaSimArch)
          continue;
        FailureOr<CodeObjectImage> cubin = serialize(kernels, arch, /*ptx=*/false);
        if (failed(cubin))
          return signalPassFailure();
        cubin->kernels = names;
        table.codeObjects.push_back(std::move(*cubin));
      }
      if (std::string fallback = ptxFallbackArch(archs); !fallback.empty()) {
        FailureOr<CodeObjectImage> ptx = serialize(kernels, fallback, /*ptx=*/true);
        if (failed(ptx))
          return signalPassFailure();
        ptx->kernels = names;
        table.codeObjects.push_back(std::move(*ptx));
      }
      // The simulated device's code: the same NVVM kernels, retargeted to the host.
      if (llvm::is_contained(archs, kCudaSimArch.str())) {
        auto gpuModule = kernels.lookupSymbol<gpu::GPUModuleOp>(kCudaKernelModule);
        if (!gpuModule) {
          kernels.emitError("no gpu.module @") << kCudaKernelModule << " to simulate";
          return signalPassFailure();
        }
        FailureOr<std::string> object = emitCudaSimObject(gpuModule, libdevice);
        if (failed(object))
          return signalPassFailure();
        CodeObjectImage image;
        image.target = kCudaSimArch.str();
        image.format = program::CodeFormat::elf;
        image.data = std::move(*object);
        image.kernels = names;
        table.codeObjects.push_back(std::move(image));
      }
      replaceWithExecutable(kernels, table);
    }
  }
};

} // namespace
} // namespace kiln
