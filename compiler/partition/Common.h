//===- Common.h - What the partitioning passes share -------------*- C++ -*-===//

#ifndef KILN_COMPILER_PARTITION_COMMON_H
#define KILN_COMPILER_PARTITION_COMMON_H

#include "compiler/fusion/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::partition {

/// How a value is divided between the devices: coordinate c of dimension `dim` belongs to device
/// (c / block) % devices, and a device holds size / devices of that dimension. In flat (row-major)
/// element terms the owner of element f is (f / U) % devices with U = block times the stride of
/// `dim`, which is what lets a reshape carry a split to whichever dimension of its result holds
/// that pattern.
struct Split {
  int64_t dim;
  int64_t block;
  bool operator==(const Split &other) const { return dim == other.dim && block == other.block; }
};

/// `type` with its split dimension divided between `devices`.
mlir::RankedTensorType localType(mlir::RankedTensorType type, Split split, int64_t devices);

/// Whether `type`'s split dimension holds whole blocks for every one of `devices`.
bool divides(mlir::RankedTensorType type, Split split, int64_t devices);

/// A new constant holding device `rank`'s part of the constant `value` (a graph.constant).
mlir::Value sliceConstant(mlir::OpBuilder &builder, mlir::Value value, Split split,
                          int64_t devices, int64_t rank);

/// Where a reshape-like op (reshape, squeeze, unsqueeze, flatten: the element order kept) carries
/// the split `split` of its operand of type `from` to, in its result of shape `to`: the result
/// dimension that holds the same ownership pattern, or nothing when the reshape pulls it apart.
std::optional<Split> reshapedSplit(mlir::RankedTensorType from, llvm::ArrayRef<int64_t> to,
                                   Split split, int64_t devices);

/// Runs `partition` on the function a partitioning pass rewrites: `@main`, or the module's one
/// public function (none: nothing to do). Fails, with an error naming `pass`, when that function
/// has more than one block, or when `partition` fails.
mlir::LogicalResult
partitionEntry(mlir::ModuleOp module, llvm::StringRef pass,
               llvm::function_ref<mlir::LogicalResult(mlir::func::FuncOp)> partition);

/// The value's type when it is a static ranked tensor, else null.
mlir::RankedTensorType staticType(mlir::Value value);

bool isConstant(mlir::Value value);

/// "graph.matmul 'node name'": an op as reports name it.
std::string describe(mlir::Operation *op);

/// "12.50 MiB".
std::string mebibytes(uint64_t bytes);

/// Sets the module's kiln.partition_report to `lines`.
void setPartitionReport(mlir::ModuleOp module, llvm::ArrayRef<std::string> lines);

/// Gloo's collectives over loopback TCP on one host, by an alpha-beta model (25 us and 4 GB/s
/// a step): the ring all-reduce (2 (N - 1) steps, each moving 1/N of the tensor), the ring
/// all-gather (N - 1 steps of one device's part, `bytes` being the whole), and the broadcast from
/// one device (N - 1 sends of the whole).
double allReduceSeconds(double bytes, int64_t devices);
double allGatherSeconds(double bytes, int64_t devices);
double broadcastSeconds(double bytes, int64_t devices);
/// One point-to-point transfer of `bytes` between two devices (one step).
double transferSeconds(double bytes);

/// Rewrites `function` (static shapes) into part `part` of `parts` of its batch, as
/// kiln-partition-batch rewrites a device's program, except that its results stay the part's
/// (the function's result types change): each input whose dimension 0 is the batch is sliced,
/// every op the batch reaches is typed at the part's size. `resultSplits` gets each result's
/// split (none: the batch does not reach it). Errors name `pass` and the op that mixes samples.
mlir::LogicalResult splitIntoBatchPart(mlir::ModuleOp module, mlir::func::FuncOp function,
                                       int64_t parts, int64_t part, llvm::StringRef pass,
                                       llvm::SmallVectorImpl<std::optional<Split>> &resultSplits);

/// The whole value of type `whole` from its `parts` (each split like `split`), in part order.
mlir::Value joinParts(mlir::OpBuilder &builder, mlir::Location loc, mlir::ValueRange parts,
                      Split split, mlir::RankedTensorType whole);

/// Records the cost model's time of one run of the partitioned model, each device on a host of
/// its own (ms), as the module's kiln.partition_predicted_ms (what `--partition auto` compares).
void setPredictedRun(mlir::ModuleOp module, double milliseconds);

/// The arithmetic and memory traffic of one graph op at its types: 2 M N K for a matmul or gemm,
/// 2 (C / groups) kh kw per output element for a convolution, an operation per result element
/// otherwise; every operand and result read or written once.
/// Constants cost nothing.
fusion::KernelWork workOf(mlir::Operation *op);

} // namespace kiln::partition

#endif // KILN_COMPILER_PARTITION_COMMON_H
