//===- SymbolicDims.h - A program's dimensions as its symbols' ----*- C++ -*-===//
//
// In a program compiled for a range of shapes, program.program carries `kiln.symbols` (the
// dynamic dimensions of its inputs) and the op that defines a program buffer with dynamic
// dimensions carries `kiln.dims`: its dimensions as affine expressions of those symbols
// (compiler/program/SymbolicShapes.h), which the runtime evaluates once per run. Program
// formation sets them; code generation (scratch buffers), memory planning and the artifact
// writer read them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_PROGRAM_SYMBOLICDIMS_H
#define KILN_DIALECTS_PROGRAM_SYMBOLICDIMS_H

#include "dialects/kiln/KilnAttributes.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

/// On program.program: the symbols, an array of {name, input, dim, min, max} dictionaries.
constexpr llvm::StringLiteral kSymbolsAttr = ::kiln::attrs::kSymbols;
/// On an op that defines a program buffer with dynamic dimensions: an affine map from the
/// symbols to the buffer's dimensions, `()[s0, s1] -> (s0, 16, s1 ceildiv 4)`.
constexpr llvm::StringLiteral kDimsAttr = ::kiln::attrs::kDims;

/// The dimensions of the program buffer `definer` defines, of `type`, as expressions of the
/// program's symbols: its kiln.dims where they vary, its static sizes otherwise.
inline llvm::SmallVector<mlir::AffineExpr> bufferDims(mlir::Operation *definer,
                                                      mlir::MemRefType type) {
  auto shape =
      definer ? definer->getAttrOfType<mlir::AffineMapAttr>(kDimsAttr) : mlir::AffineMapAttr();
  llvm::SmallVector<mlir::AffineExpr> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    dims.push_back(shape && static_cast<int64_t>(shape.getValue().getNumResults()) == type.getRank()
                       ? shape.getValue().getResult(static_cast<unsigned>(d))
                       : mlir::getAffineConstantExpr(type.getDimSize(d), type.getContext()));
  return dims;
}

} // namespace kiln

#endif // KILN_DIALECTS_PROGRAM_SYMBOLICDIMS_H
