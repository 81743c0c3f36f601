//===- Passes.h - Passes over the graph dialect -----------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_PASSES_H
#define KILN_COMPILER_TRANSFORMS_PASSES_H

#include "dialects/graph/GraphDialect.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/transforms/Passes.h.inc"

/// A binding of an input's dimensions: the input's name (or its position, "0") and its dims,
/// `graph::kDynamic` for one left dynamic ("?", a range "LO..HI", or "LO.." without an upper
/// bound).
struct ShapeBinding {
  std::string name;
  llvm::SmallVector<int64_t> dims;
  /// Empty, or one [min, max] per dimension: a static dimension's size twice, a range's bounds,
  /// [1, kDynamic] for "?" and [LO, kDynamic] for "LO.." (no upper bound).
  llvm::SmallVector<std::pair<int64_t, int64_t>> bounds;

  bool hasRange() const { return !bounds.empty(); }
};

/// The argument attribute that carries an input's dimension bounds into the compiler: an array
/// of 2 x rank i64, [min, max] per dimension (a static dimension's size twice; max kDynamic for
/// a dimension without an upper bound).
constexpr llvm::StringLiteral kDimBoundsAttr = ::kiln::attrs::kDimBounds;

/// Parses "NAME=DIMS" ("image=1x3x224x224", "?" or "8.." for a dimension left dynamic without
/// an upper bound, "1..32" for one dynamic within a range): the one spelling of `kiln
/// --shape`/`--shape-range`, `kiln-refine-shapes{bind=...}` and `kiln-compile-pipeline{shape=...}`.
/// Fails for anything else.
mlir::FailureOr<ShapeBinding> parseShapeBinding(llvm::StringRef text);

/// "NAME=DIMS", for messages.
std::string formatShapeBinding(const ShapeBinding &binding);

/// kiln-refine-shapes with bindings given as values rather than text.
std::unique_ptr<mlir::Pass> createRefineShapesPass(llvm::ArrayRef<ShapeBinding> bindings);

} // namespace kiln

#endif // KILN_COMPILER_TRANSFORMS_PASSES_H
