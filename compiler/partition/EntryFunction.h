//===- EntryFunction.h - The function a partitioning pass rewrites ---*- C++ -*-===//

#ifndef KILN_COMPILER_PARTITION_ENTRYFUNCTION_H
#define KILN_COMPILER_PARTITION_ENTRYFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace kiln::partition {

/// Runs `partition` on the function a partitioning pass rewrites: `@main`, or the module's one
/// public function (none: nothing to do). Fails, with an error naming `pass`, when that function
/// has more than one block, or when `partition` fails.
mlir::LogicalResult
partitionEntry(mlir::ModuleOp module, llvm::StringRef pass,
               llvm::function_ref<mlir::LogicalResult(mlir::func::FuncOp)> partition);

} // namespace kiln::partition

#endif // KILN_COMPILER_PARTITION_ENTRYFUNCTION_H
