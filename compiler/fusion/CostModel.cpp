//===- CostModel.cpp - Device descriptions and kernel times -----------------===//

#include "compiler/fusion/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

namespace kiln::fusion {

namespace {

struct Published {
  const char *name;
  double fp32, fp16, bytesPerSecond, launchSeconds;
  int64_t parallelUnits, cacheMiB, workgroupsPerBlock;
};

constexpr Published kDevices[] = {
    // Two cores with AVX2 FMA at about 3 GHz (2 x 16 fp32 FLOPs per cycle each); one channel
    // pair of DDR4; a thread-pool wake-up per kernel.
    {"cpu", 2 * 96e9, 2 * 96e9, 20e9, 3e-6, 2, 32, 1},
    // A100 SXM4 80 GB: 19.5 TFLOP/s fp32, 312 fp16 tensor, 2039 GB/s, 40 MB L2, 108 SMs. A
    // block of 256 threads holds 8 rows of a row kernel (a warp each).
    {"a100", 19.5e12, 312e12, 2039e9, 2e-6, 108, 40, 8},
    // H100 SXM5: 67 TFLOP/s fp32, 989 fp16 tensor (dense), 3.35 TB/s, 50 MB L2, 132 SMs.
    {"h100", 67e12, 989e12, 3350e9, 2e-6, 132, 50, 8},
    // L4: 30.3 TFLOP/s fp32, 121 fp16 tensor (dense), 300 GB/s, 48 MB L2, 58 SMs.
    {"l4", 30.3e12, 121e12, 300e9, 2e-6, 58, 48, 8},
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
    d.workgroupsPerBlock = published.workgroupsPerBlock;
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

namespace {

constexpr int64_t kDescriptionVersion = 1;

} // namespace

std::optional<DeviceDescription> DeviceDescription::load(llvm::StringRef nameOrPath,
                                                         std::string &error) {
  if (std::optional<DeviceDescription> published = named(nameOrPath))
    return published;
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath);
  if (!buffer) {
    error = llvm::formatv("'{0}' is neither a device the cost model knows (cpu, a100, h100, l4) "
                          "nor a readable description file: {1}",
                          nameOrPath, buffer.getError().message());
    return std::nullopt;
  }
  auto fail = [&](const llvm::Twine &why) -> std::optional<DeviceDescription> {
    error = (nameOrPath + ": " + why).str();
    return std::nullopt;
  };
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return fail("not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return fail("a device description is a JSON object");
  std::optional<int64_t> version = object->getInteger("kiln_device_description");
  if (version != kDescriptionVersion)
    return fail(llvm::formatv("'kiln_device_description' must be {0} (the format this build "
                              "reads)",
                              kDescriptionVersion));
  DeviceDescription d;
  std::optional<llvm::StringRef> name = object->getString("name");
  if (!name || name->empty())
    return fail("'name' must be a non-empty string");
  d.name = name->str();
  d.source = object->getString("source").value_or(nameOrPath).str();
  // A figure: a finite number, positive (or non-negative where `zero` is allowed).
  auto number = [&](llvm::StringRef key, double &into, bool required, bool zero) {
    const llvm::json::Value *value = object->get(key);
    if (!value) {
      if (required)
        fail("'" + key + "' is missing");
      return !required;
    }
    std::optional<double> read = value->getAsNumber();
    if (!read || !std::isfinite(*read) || *read < 0 || (*read == 0 && !zero)) {
      fail("'" + key + "' must be a " + (zero ? "non-negative" : "positive") + " number");
      return false;
    }
    into = *read;
    return true;
  };
  double units = 1, cacheBytes = 0, perBlock = 1;
  d.fp16FlopsPerSecond = 0;
  if (!number("fp32_flops_per_second", d.fp32FlopsPerSecond, true, false) ||
      !number("bytes_per_second", d.bytesPerSecond, true, false) ||
      !number("launch_seconds", d.launchSeconds, true, true) ||
      !number("parallel_units", units, true, false) ||
      !number("fp16_flops_per_second", d.fp16FlopsPerSecond, false, false) ||
      !number("cache_bytes", cacheBytes, false, true) ||
      !number("workgroups_per_block", perBlock, false, false))
    return std::nullopt;
  // Whole numbers, and bounded so that the wave arithmetic stays within 64 bits.
  constexpr double kMostUnits = 1 << 20;
  if (units != std::floor(units) || perBlock != std::floor(perBlock) || units > kMostUnits ||
      perBlock > kMostUnits)
    return fail("'parallel_units' and 'workgroups_per_block' must be whole numbers from 1 to "
                "1048576");
  d.parallelUnits = static_cast<int64_t>(units);
  d.workgroupsPerBlock = static_cast<int64_t>(perBlock);
  d.cacheBytes = static_cast<int64_t>(cacheBytes);
  if (d.fp16FlopsPerSecond == 0)
    d.fp16FlopsPerSecond = d.fp32FlopsPerSecond;
  return d;
}

std::string DeviceDescription::toJson() const {
  llvm::json::Object object{
      {"kiln_device_description", kDescriptionVersion},
      {"name", name},
      {"source", source},
      {"fp32_flops_per_second", fp32FlopsPerSecond},
      {"fp16_flops_per_second", fp16FlopsPerSecond},
      {"bytes_per_second", bytesPerSecond},
      {"launch_seconds", launchSeconds},
      {"parallel_units", parallelUnits},
      {"workgroups_per_block", workgroupsPerBlock},
      {"cache_bytes", cacheBytes},
  };
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(object))).str() + "\n";
}

double kernelSeconds(const DeviceDescription &device, const KernelWork &work, int64_t workgroups) {
  double compute = work.flops / device.fp32FlopsPerSecond;
  if (workgroups > 0) {
    int64_t perBlock = std::max<int64_t>(device.workgroupsPerBlock, 1);
    int64_t units = std::max<int64_t>(device.parallelUnits, 1);
    int64_t blocks = (workgroups + perBlock - 1) / perBlock;
    int64_t waves = (blocks + units - 1) / units;
    compute *= static_cast<double>(waves * units) / static_cast<double>(blocks);
  }
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
