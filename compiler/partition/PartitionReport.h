//===- PartitionReport.h - What a partitioning pass reports -----*- C++ -*-===//

#ifndef KILN_COMPILER_PARTITION_PARTITIONREPORT_H
#define KILN_COMPILER_PARTITION_PARTITIONREPORT_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace kiln::partition {

/// "graph.matmul 'node name'": an op as reports name it.
std::string describe(mlir::Operation *op);

/// "12.50 MiB".
std::string mebibytes(uint64_t bytes);

/// Sets the module's kiln.partition_report to `lines`.
void setPartitionReport(mlir::ModuleOp module, llvm::ArrayRef<std::string> lines);

} // namespace kiln::partition

#endif // KILN_COMPILER_PARTITION_PARTITIONREPORT_H
