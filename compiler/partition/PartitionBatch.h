//===- PartitionBatch.h - A function split into parts of its batch ---*- C++ -*-===//
//
// What kiln-partition-batch (PartitionBatch.cpp) shares with kiln-partition-pipeline, which
// splits each stage's batch into micro-batches.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PARTITION_PARTITIONBATCH_H
#define KILN_COMPILER_PARTITION_PARTITIONBATCH_H

#include "compiler/partition/Split.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace kiln::partition {

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

} // namespace kiln::partition

#endif // KILN_COMPILER_PARTITION_PARTITIONBATCH_H
