//===- CostModel.h - Device descriptions and kernel times -------*- C++ -*-===//
//
// What the fusion planner knows about a device: peak arithmetic rate, memory bandwidth, the
// cost of starting a kernel, how many kernels' worth of work runs at once, and the size of the
// last-level cache. A kernel's time is a roofline with overlap (XLA's GPU performance model):
// compute + memory - 0.95 * min(compute, memory), plus the launch, where the compute part is
// charged for the units a kernel of few workgroups leaves idle and for its last, partial wave
// (wave quantization). The figures are the vendors' published peaks (GPUs), a conservative
// two-core host (CPU), or a description measured on the host (`kiln calibrate`) and read from a
// JSON file; they rank fusion decisions, they do not predict absolute times.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_FUSION_COSTMODEL_H
#define KILN_COMPILER_FUSION_COSTMODEL_H

#include "mlir/IR/Types.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::fusion {

struct DeviceDescription {
  std::string name;
  /// Peak fp32 (non-tensor-core) and fp16 tensor-core arithmetic, in operations per second.
  double fp32FlopsPerSecond = 0;
  double fp16FlopsPerSecond = 0;
  /// Sustained memory bandwidth in bytes per second.
  double bytesPerSecond = 0;
  /// The cost of one kernel: a launch on a GPU, a thread-pool dispatch on the CPU.
  double launchSeconds = 0;
  /// Streaming multiprocessors (GPU) or cores (CPU).
  int64_t parallelUnits = 1;
  /// Last-level cache (recorded; the kernel time does not use it yet).
  int64_t cacheBytes = 0;
  /// Workgroups of a kernel that share one unit's turn: a GPU block holds several rows of a row
  /// kernel (a warp each); a CPU core takes one tile at a time.
  int64_t workgroupsPerBlock = 1;
  /// Where the figures come from: "published" (the table in CostModel.cpp) or what a
  /// description file says (`kiln calibrate` writes "measured on HOST, DATE").
  std::string source = "published";

  /// The description named `name` (cpu, a100, h100, l4), or nothing.
  static std::optional<DeviceDescription> named(llvm::StringRef name);
  /// The description named `nameOrPath`, or the JSON description in the file of that path
  /// (`kiln calibrate` writes one); nothing, with `error` naming the file and the field, when
  /// neither.
  static std::optional<DeviceDescription> load(llvm::StringRef nameOrPath, std::string &error);
  /// The description as the JSON a file holds (what `load` reads back).
  std::string toJson() const;
  /// The description of the GPU a CUDA architecture names (sm_80: a100, sm_89: l4, sm_90: h100).
  static std::optional<DeviceDescription> forCudaArch(llvm::StringRef arch);
};

/// The work one kernel does.
struct KernelWork {
  double flops = 0;
  /// Bytes read from and written to memory.
  double bytes = 0;
};

/// The modeled time of one kernel doing `work` on `device`, its launch included, split into
/// `workgroups` parallel pieces (0: as many as fill the device). With B =
/// ceil(workgroups / workgroupsPerBlock) blocks on U units, the compute part takes
/// U * ceil(B / U) / B times the full device's: a kernel of one block on a two-core CPU computes
/// at half the peak, 133 blocks on 132 SMs take two waves (XLA's GPU model charges compute by
/// the active cores the same way). The memory part is not scaled: a few units can draw most of
/// the bandwidth.
double kernelSeconds(const DeviceDescription &device, const KernelWork &work,
                     int64_t workgroups = 0);

/// The bytes a value of `type` occupies: a statically shaped tensor's elements, each at least a
/// byte (0 for anything else).
double tensorBytes(mlir::Type type);

} // namespace kiln::fusion

#endif // KILN_COMPILER_FUSION_COSTMODEL_H
