//===- GraphOps.h - Operations of the Kiln graph dialect ---------------------===//

#ifndef KILN_DIALECTS_GRAPH_GRAPHOPS_H
#define KILN_DIALECTS_GRAPH_GRAPHOPS_H

#include "dialects/graph/GraphDialect.h"
#include "dialects/graph/GraphShapes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

#include "dialects/graph/GraphEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/graph/GraphAttrs.h.inc"

namespace kiln::graph {

/// Verifies an op by inferring its result types, which reports any operand or attribute that
/// admits none. The generated verifier then checks the written types against the inferred ones.
template <typename OpTy>
llvm::LogicalResult verifyByInference(OpTy op) {
  llvm::SmallVector<mlir::Type> types;
  return OpTy::inferReturnTypes(op->getContext(), op.getLoc(), typename OpTy::Adaptor(op), types);
}

/// The row-major bytes of a constant's value when it is a non-splat dense attribute or a
/// resource blob of whole-byte elements; none otherwise (a splat, i1 or sub-byte elements, a
/// resource whose blob is gone).
std::optional<llvm::ArrayRef<char>> rawConstantData(mlir::Attribute value);

/// Whether `op` computes elementwise, broadcasting its operands by NumPy's rules at most (unary
/// math, casts, the binary arithmetic and logic ops, compare and select; not bitcast).
bool isElementwise(mlir::Operation *op);

/// `bytes` (row-major, of `type`) as a constant value of the kind `like` is: a dense attribute,
/// or a resource blob keyed as `like`'s with `suffix` added.
mlir::ElementsAttr rawConstantLike(mlir::Attribute like, mlir::RankedTensorType type,
                                   llvm::ArrayRef<char> bytes, llvm::StringRef suffix);

} // namespace kiln::graph

#define GET_OP_CLASSES
#include "dialects/graph/GraphOps.h.inc"

#endif // KILN_DIALECTS_GRAPH_GRAPHOPS_H
