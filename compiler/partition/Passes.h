//===- Passes.h - Partitioning a graph program over several devices ---------===//

#ifndef KILN_COMPILER_PARTITION_PASSES_H
#define KILN_COMPILER_PARTITION_PASSES_H

#include "dialects/graph/GraphDialect.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/partition/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/partition/Passes.h.inc"

/// The module attribute the partitioning passes leave: an array of strings, the report's lines
/// (regions made and candidates rejected, stages, the batch split).
inline constexpr llvm::StringLiteral kPartitionReportAttr = ::kiln::attrs::kPartitionReport;

/// The module attribute every partitioning pass leaves: the cost model's time of one run (ms,
/// f64), each device on a host of its own; `--partition auto` takes the mode with the least.
inline constexpr llvm::StringLiteral kPartitionPredictedAttr = ::kiln::attrs::kPartitionPredictedMs;

} // namespace kiln

#endif // KILN_COMPILER_PARTITION_PASSES_H
