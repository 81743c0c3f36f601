//===- Passes.h - Precision assignment ---------------------------------------===//

#ifndef KILN_COMPILER_PRECISION_PASSES_H
#define KILN_COMPILER_PRECISION_PASSES_H

#include "compiler/options/CompileOptions.h"
#include "dialects/graph/GraphDialect.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/precision/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/precision/Passes.h.inc"

/// The function attribute holding the pass's decisions, one line per candidate.
inline constexpr llvm::StringLiteral kPrecisionReportAttr = ::kiln::attrs::kPrecisionReport;
/// The function attribute holding the number of candidates (the mask's length under `emulate`).
inline constexpr llvm::StringLiteral kPrecisionCandidatesAttr = ::kiln::attrs::kPrecisionCandidates;
/// The name of the mask input `emulate` appends.
inline constexpr llvm::StringLiteral kPrecisionMaskInput = "kiln.precision_mask";

} // namespace kiln

#endif // KILN_COMPILER_PRECISION_PASSES_H
