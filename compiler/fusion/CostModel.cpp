//===- CostModel.cpp - Device descriptions and kernel times -----------------===//

#include "compiler/fusion/CostModel.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>

namespace kiln::fusion {

std::optional<DeviceDescription> DeviceDescription::named(llvm::StringRef name) {
  DeviceDescription d;
  d.name = name.str();
  if (name == "cpu") {
    // Two cores with AVX2 FMA at about 3 GHz (2 x 16 fp32 FLOPs per cycle each); one channel
    // pair of DDR4; a thread-pool wake-up per kernel.
    d.fp32FlopsPerSecond = 2 * 96e9;
    d.fp16FlopsPerSecond = d.fp32FlopsPerSecond;
    d.bytesPerSecond = 20e9;
    d.launchSeconds = 3e-6;
    d.parallelUnits = 2;
    d.cacheBytes = 32ll << 20;
    return d;
  }
  if (name == "a100") {
    // A100 SXM4 80 GB: 19.5 TFLOP/s fp32, 312 fp16 tensor, 2039 GB/s, 40 MB L2, 108 SMs.
    d.fp32FlopsPerSecond = 19.5e12;
    d.fp16FlopsPerSecond = 312e12;
    d.bytesPerSecond = 2039e9;
    d.launchSeconds = 2e-6;
    d.parallelUnits = 108;
    d.cacheBytes = 40ll << 20;
    return d;
  }
  if (name == "h100") {
    // H100 SXM5: 67 TFLOP/s fp32, 989 fp16 tensor (dense), 3.35 TB/s, 50 MB L2, 132 SMs.
    d.fp32FlopsPerSecond = 67e12;
    d.fp16FlopsPerSecond = 989e12;
    d.bytesPerSecond = 3350e9;
    d.launchSeconds = 2e-6;
    d.parallelUnits = 132;
    d.cacheBytes = 50ll << 20;
    return d;
  }
  if (name == "l4") {
    // L4: 30.3 TFLOP/s fp32, 121 fp16 tensor (dense), 300 GB/s, 48 MB L2, 58 SMs.
    d.fp32FlopsPerSecond = 30.3e12;
    d.fp16FlopsPerSecond = 121e12;
    d.bytesPerSecond = 300e9;
    d.launchSeconds = 2e-6;
    d.parallelUnits = 58;
    d.cacheBytes = 48ll << 20;
    return d;
  }
  return std::nullopt;
}

std::optional<DeviceDescription> DeviceDescription::forCudaArch(llvm::StringRef arch) {
  llvm::StringRef device = llvm::StringSwitch<llvm::StringRef>(arch)
                               .StartsWith("sm_8", "a100")
                               .StartsWith("sm_9", "h100")
                               .StartsWith("sm_10", "h100")
                               .StartsWith("sm_12", "h100")
                               .Default("");
  if (arch == "sm_89")
    device = "l4";
  if (device.empty())
    return std::nullopt;
  return named(device);
}

double kernelSeconds(const DeviceDescription &device, const KernelWork &work) {
  double compute = work.flops / device.fp32FlopsPerSecond;
  double memory = work.bytes / device.bytesPerSecond;
  return compute + memory - 0.95 * std::min(compute, memory) + device.launchSeconds;
}

} // namespace kiln::fusion
