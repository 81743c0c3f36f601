//===- PartitionCost.h - The modeled time of a partitioned run ---*- C++ -*-===//

#ifndef KILN_COMPILER_PARTITION_PARTITIONCOST_H
#define KILN_COMPILER_PARTITION_PARTITIONCOST_H

#include "compiler/fusion/CostModel.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

namespace kiln::partition {

/// Gloo's collectives over loopback TCP on one host, by an alpha-beta model (25 us and 4 GB/s
/// a step): the ring all-reduce (2 (N - 1) steps, each moving 1/N of the tensor), the ring
/// all-gather (N - 1 steps of one device's part, `bytes` being the whole), and the broadcast from
/// one device (N - 1 sends of the whole).
double allReduceSeconds(double bytes, int64_t devices);
double allGatherSeconds(double bytes, int64_t devices);
double broadcastSeconds(double bytes, int64_t devices);
/// One point-to-point transfer of `bytes` between two devices (one step).
double transferSeconds(double bytes);

/// Records the cost model's time of one run of the partitioned model, each device on a host of
/// its own (ms), as the module's kiln.partition_predicted_ms (what `--partition auto` compares).
void setPredictedRun(mlir::ModuleOp module, double milliseconds);

/// The arithmetic and memory traffic of one graph op at its types: 2 M N K for a matmul or gemm,
/// 2 (C / groups) kh kw per output element for a convolution, an operation per result element
/// otherwise; every operand and result read or written once.
/// Constants cost nothing.
fusion::KernelWork workOf(mlir::Operation *op);

} // namespace kiln::partition

#endif // KILN_COMPILER_PARTITION_PARTITIONCOST_H
