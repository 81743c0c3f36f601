//===- Passes.h - Partitioning a graph program over several devices ---------===//

#ifndef KILN_COMPILER_PARTITION_PASSES_H
#define KILN_COMPILER_PARTITION_PASSES_H

#include "dialects/graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/partition/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/partition/Passes.h.inc"

/// The module attribute kiln-partition-tensor leaves: an array of strings, one per region made
/// or candidate rejected.
inline constexpr llvm::StringLiteral kPartitionReportAttr = "kiln.partition_report";

} // namespace kiln

#endif // KILN_COMPILER_PARTITION_PASSES_H
