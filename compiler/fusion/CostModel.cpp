//===- CostModel.cpp - Device descriptions and kernel times -----------------===//

#include "compiler/fusion/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>

namespace kiln::fusion {

namespace {

struct Published {
  const char *name;
  double fp32, fp16, bytesPerSecond, launchSeconds;
  int64_t parallelUnits, cacheMiB;
};

constexpr Published kDevices[] = {
    // Two cores with AVX2 FMA at about 3 GHz (2 x 16 fp32 FLOPs per cycle each); one channel
    // pair of DDR4; a thread-pool wake-up per kernel.
    {"cpu", 2 * 96e9, 2 * 96e9, 20e9, 3e-6, 2, 32},
    // A100 SXM4 80 GB: 19.5 TFLOP/s fp32, 312 fp16 tensor, 2039 GB/s, 40 MB L2, 108 SMs.
    {"a100", 19.5e12, 312e12, 2039e9, 2e-6, 108, 40},
    // H100 SXM5: 67 TFLOP/s fp32, 989 fp16 tensor (dense), 3.35 TB/s, 50 MB L2, 132 SMs.
    {"h100", 67e12, 989e12, 3350e9, 2e-6, 132, 50},
    // L4: 30.3 TFLOP/s fp32, 121 fp16 tensor (dense), 300 GB/s, 48 MB L2, 58 SMs.
    {"l4", 30.3e12, 121e12, 300e9, 2e-6, 58, 48},
};

} // namespace

std::optional<DeviceDescription> DeviceDescription::named(llvm::StringRef name) {
  for (const Published &published : kDevices) {
    if (name != published.name)
      continue;
    DeviceDescription d;
    d.name = published.name;
    d.fp32FlopsPerSecond = published.fp32;
    d.fp16FlopsPerSecond = published.fp16;
    d.bytesPerSecond = published.bytesPerSecond;
    d.launchSeconds = published.launchSeconds;
    d.parallelUnits = published.parallelUnits;
    d.cacheBytes = published.cacheMiB << 20;
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

double tensorBytes(mlir::Type type) {
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  mlir::Type element = tensor.getElementType();
  unsigned bits = 64; // index, and what has no fixed width here
  if (element.isIntOrFloat())
    bits = element.getIntOrFloatBitWidth();
  else if (auto complex = mlir::dyn_cast<mlir::ComplexType>(element);
           complex && complex.getElementType().isIntOrFloat())
    bits = 2 * complex.getElementType().getIntOrFloatBitWidth();
  return static_cast<double>(tensor.getNumElements()) * std::max(8u, bits) / 8;
}

} // namespace kiln::fusion
