//===- Target.cpp - Resolving the target description once --------------------===//

#include "compiler/fusion/CostModel.h"
#include "compiler/options/CompileOptions.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <limits>

namespace kiln {

std::string resolveTarget(Target &target) {
  // The CPU code object is built for the host, with its features (compiler/codegen/CpuObject).
  if (target.cpu.empty()) {
    target.cpu = llvm::sys::getHostCPUName().str();
    target.cpuFeatures.clear();
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      target.cpuFeatures.push_back((enabled ? "+" : "-") + feature.str());
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
