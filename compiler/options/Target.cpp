//===- Target.cpp - Resolving the target description once --------------------===//

#include "compiler/fusion/CostModel.h"
#include "compiler/options/CompileOptions.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <limits>
#include <memory>

namespace kiln {

std::string resolveTarget(Target &target) {
  // The CPU code object is built for the host, with its features (compiler/codegen/cpu/CpuObject),
  // or for the CPU --target-cpu names, with LLVM's features of that CPU.
  if (target.cpu.empty()) {
    target.cpu = llvm::sys::getHostCPUName().str();
    target.cpuFeatures.clear();
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      target.cpuFeatures.push_back((enabled ? "+" : "-") + feature.str());
  } else if (target.cpuFeatures.empty()) {
    llvm::InitializeNativeTarget();
    llvm::Triple triple(llvm::sys::getProcessTriple());
    std::string error;
    const llvm::Target *registered = llvm::TargetRegistry::lookupTarget(triple, error);
    if (!registered)
      return "--target-cpu: no code generator for the host (" + triple.str() + "): " + error;
    // (Asked of the generic CPU first: LLVM warns on stderr about a CPU it does not know.)
    std::unique_ptr<llvm::MCSubtargetInfo> generic(
        registered->createMCSubtargetInfo(triple, "", ""));
    if (!generic || !generic->isCPUStringValid(target.cpu))
      return "--target-cpu '" + target.cpu + "' is not a CPU LLVM knows for " + triple.str();
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        registered->createMCSubtargetInfo(triple, target.cpu, ""));
    for (const llvm::SubtargetFeatureKV &feature : info->getAllProcessorFeatures()) {
      std::string name = feature.Key;
      target.cpuFeatures.push_back((info->checkFeatures("+" + name) ? "+" : "-") + name);
    }
  }
  // The fusion passes' cost model: --cost-model's, or the CPU's published figures, or the
  // oldest GPU the artifact is built for.
  if (target.costModel.empty()) {
    target.costModel = "cpu";
    if (target.kind == TargetKind::Cuda) {
      target.costModel = "a100";
      unsigned oldest = std::numeric_limits<unsigned>::max();
      for (unsigned arch : target.gpuArchs) {
        auto description = fusion::DeviceDescription::forCudaArch(Target::gpuArchName(arch));
        if (description && arch < oldest) {
          oldest = arch;
          target.costModel = description->name;
        }
      }
    }
  }
  return "";
}

} // namespace kiln
