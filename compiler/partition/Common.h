//===- Common.h - What the partitioning passes share -------------*- C++ -*-===//

#ifndef KILN_COMPILER_PARTITION_COMMON_H
#define KILN_COMPILER_PARTITION_COMMON_H

#include "compiler/fusion/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace kiln::partition {

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

/// The arithmetic and memory traffic of one graph op at its types: 2 M N K for a matmul, an
/// operation per result element otherwise; every operand and result read or written once.
/// Constants cost nothing.
fusion::KernelWork workOf(mlir::Operation *op);

} // namespace kiln::partition

#endif // KILN_COMPILER_PARTITION_COMMON_H
