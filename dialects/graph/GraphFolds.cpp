//===- GraphFolds.cpp - Folders and canonicalization patterns of graph ops --===//
//
// Folders remove identities (x + 0, a reshape to the same type, a transpose by the identity),
// evaluate ops on constants, and merge chains (reshape of reshape, transpose of transpose).
// Canonicalization rewrites squeeze, unsqueeze and flatten into the one reshape op when the result
// shape is known well enough to state it, so later passes see a single shape-changing op.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace kiln::graph;

namespace {

/// True when `attr` is a splat constant equal to `value` (integer or floating point).
bool isSplatOf(Attribute attr, double value) {
  auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type element = splat.getElementType();
  if (llvm::isa<FloatType>(element))
    return splat.getSplatValue<APFloat>().convertToDouble() == value;
  if (element.isInteger(1))
    return false;
  if (llvm::isa<IntegerType>(element))
    return splat.getSplatValue<APInt>().getSExtValue() == static_cast<int64_t>(value);
  return false;
}

/// Returns `operand` when the op producing `result` is an identity on it: the types must match
/// exactly so that the replacement is type-correct.
OpFoldResult identityIfSameType(Value operand, Value result) {
  return operand.getType() == result.getType() ? OpFoldResult(operand) : OpFoldResult();
}

/// Folds a binary arithmetic op whose operands are constants of the result's type.
template <typename FloatFn, typename IntFn>
Attribute foldArithmetic(ArrayRef<Attribute> operands, Type resultType, FloatFn floatFn,
                         IntFn intFn) {
  auto type = llvm::dyn_cast<RankedTensorType>(resultType);
  if (!type || !type.hasStaticShape() || operands.size() != 2 || !operands[0] || !operands[1])
    return {};
  for (Attribute operand : operands)
    if (llvm::cast<TypedAttr>(operand).getType() != resultType)
      return {};
  if (llvm::isa<FloatType>(type.getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(operands, floatFn);
  if (llvm::isa<IntegerType>(type.getElementType()) && !type.getElementType().isInteger(1))
    return constFoldBinaryOp<IntegerAttr, APInt, void>(operands, intFn);
  return {};
}

/// Converts the constant `elements` to `resultType` element by element (see graph.cast).
Attribute castElements(DenseElementsAttr elements, RankedTensorType resultType) {
  Type from = elements.getElementType(), to = resultType.getElementType();
  auto toFloat = llvm::dyn_cast<FloatType>(to);
  auto fromFloat = llvm::dyn_cast<FloatType>(from);
  auto toInt = llvm::dyn_cast<IntegerType>(to);
  auto fromInt = llvm::dyn_cast<IntegerType>(from);
  auto isUnsigned = [](IntegerType t) { return t.isUnsigned() || t.getWidth() == 1; };
  if (fromFloat && toFloat) {
    return elements.mapValues(to, [&](const APFloat &value) {
      APFloat converted = value;
      bool lossy;
      converted.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lossy);
      return converted.bitcastToAPInt();
    });
  }
  if (fromInt && toFloat) {
    return elements.mapValues(to, [&](const APInt &value) {
      APFloat converted(toFloat.getFloatSemantics());
      converted.convertFromAPInt(value, !isUnsigned(fromInt), APFloat::rmNearestTiesToEven);
      return converted.bitcastToAPInt();
    });
  }
  if (fromInt && toInt) {
    if (toInt.getWidth() == 1)
      return elements.mapValues(to, [](const APInt &value) { return APInt(1, !value.isZero()); });
    return elements.mapValues(to, [&](const APInt &value) {
      return isUnsigned(fromInt) ? value.zextOrTrunc(toInt.getWidth())
                                 : value.sextOrTrunc(toInt.getWidth());
    });
  }
  if (fromFloat && toInt) {
    if (toInt.getWidth() == 1)
      return elements.mapValues(to, [](const APFloat &value) { return APInt(1, !value.isZero()); });
    // Out-of-range and NaN conversions are undefined; leave those to run time.
    bool exact = true;
    Attribute result = elements.mapValues(to, [&](const APFloat &value) {
      APSInt converted(toInt.getWidth(), isUnsigned(toInt));
      bool isExact;
      if (value.convertToInteger(converted, APFloat::rmTowardZero, &isExact) & APFloat::opInvalidOp)
        exact = false;
      return APInt(converted);
    });
    return exact ? result : Attribute();
  }
  return {};
}

} // namespace

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult AbsOp::fold(FoldAdaptor adaptor) {
  if (getInput().getDefiningOp<AbsOp>())
    return getInput();
  if (llvm::isa<FloatType>(getType().getElementType()))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(adaptor.getOperands(),
                                       [](const APFloat &a) { return abs(a); });
  return {};
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  if (llvm::isa<FloatType>(getType().getElementType()))
    return constFoldUnaryOp<FloatAttr, APFloat, void>(adaptor.getOperands(),
                                       [](const APFloat &a) { return neg(a); });
  return {};
}

OpFoldResult NotOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    if (OpFoldResult result = identityIfSameType(getLhs(), getResult()))
      return result;
  if (isSplatOf(adaptor.getLhs(), 0))
    if (OpFoldResult result = identityIfSameType(getRhs(), getResult()))
      return result;
  return foldArithmetic(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a + b; },
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0))
    if (OpFoldResult result = identityIfSameType(getLhs(), getResult()))
      return result;
  return foldArithmetic(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a - b; },
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult result = identityIfSameType(getLhs(), getResult()))
      return result;
  if (isSplatOf(adaptor.getLhs(), 1))
    if (OpFoldResult result = identityIfSameType(getRhs(), getResult()))
      return result;
  return foldArithmetic(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a * b; },
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult result = identityIfSameType(getLhs(), getResult()))
      return result;
  // Integer division by zero is left to run time, where it is reported.
  if (!llvm::isa<FloatType>(getType().getElementType()))
    return {};
  return foldArithmetic(
      adaptor.getOperands(), getType(), [](const APFloat &a, const APFloat &b) { return a / b; },
      [](const APInt &a, const APInt &) { return a; });
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  auto condition = llvm::dyn_cast_if_present<SplatElementsAttr>(adaptor.getCondition());
  if (!condition)
    return {};
  Value chosen = condition.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  return identityIfSameType(chosen, getResult());
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (OpFoldResult same = identityIfSameType(getInput(), getResult()))
    return same;
  auto elements = llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!elements || !getType().hasStaticShape())
    return {};
  return castElements(elements, getType());
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1)
    return identityIfSameType(getInputs().front(), getResult());
  return {};
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getType().hasStaticShape())
    if (OpFoldResult same = identityIfSameType(getInput(), getResult()))
      return same;
  if (auto splat = llvm::dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return splat.resizeSplat(getType());
  return {};
}

OpFoldResult PadOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t pad) { return pad == 0; };
  if (llvm::all_of(getPadLow(), isZero) && llvm::all_of(getPadHigh(), isZero))
    return identityIfSameType(getInput(), getResult());
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getType().hasStaticShape())
    if (OpFoldResult same = identityIfSameType(getInput(), getResult()))
      return same;
  // reshape(reshape(x)) is one reshape of x: only the final shape matters.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto elements = llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return elements.reshape(getType());
  return {};
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  RankedTensorType input = getInput().getType();
  int64_t dim = static_cast<int64_t>(getDim());
  if (dim < 0 || dim >= input.getRank() || input.isDynamicDim(dim))
    return {};
  return IntegerAttr::get(IndexType::get(getContext()), input.getDimSize(dim));
}

OpFoldResult ShapeOfOp::fold(FoldAdaptor) {
  RankedTensorType input = getInput().getType();
  if (!input.hasStaticShape())
    return {};
  return DenseElementsAttr::get(getType(), input.getShape());
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  RankedTensorType input = getInput().getType();
  if (!input.hasStaticShape() || !getDynamicLimits().empty())
    return {};
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (getStarts()[d] != 0 || getStrides()[d] != 1 || getLimits()[d] != input.getDimSize(d))
      return {};
  return identityIfSameType(getInput(), getResult());
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> permutation = getPermutation();
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return identityIfSameType(getInput(), getResult());
  // transpose(transpose(x, inner), outer) == transpose(x, inner o outer).
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t index : permutation)
      composed.push_back(inner.getPermutation()[index]);
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

#define KILN_FOLD_EMPTY_REDUCTION(OP)                                                             \
  OpFoldResult OP::fold(FoldAdaptor) {                                                            \
    if (getAxes().empty())                                                                        \
      return identityIfSameType(getInput(), getResult());                                         \
    return {};                                                                                    \
  }
KILN_FOLD_EMPTY_REDUCTION(ReduceMaxOp)
KILN_FOLD_EMPTY_REDUCTION(ReduceMeanOp)
KILN_FOLD_EMPTY_REDUCTION(ReduceMinOp)
KILN_FOLD_EMPTY_REDUCTION(ReduceProdOp)
KILN_FOLD_EMPTY_REDUCTION(ReduceSumOp)
#undef KILN_FOLD_EMPTY_REDUCTION

//===----------------------------------------------------------------------===//
// Canonicalization: squeeze, unsqueeze and flatten become reshape
//===----------------------------------------------------------------------===//

namespace {

/// Rewrites a shape-only op into graph.reshape when its result has at most one dynamic
/// dimension, which the reshape then infers from the element count.
template <typename OpTy>
struct ShapeOpToReshape : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    if (llvm::count(type.getShape(), kDynamic) > 1)
      return rewriter.notifyMatchFailure(op, "more than one dynamic dimension");
    SmallVector<int64_t> shape(type.getShape());
    llvm::replace(shape, kDynamic, int64_t(-1));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, type, op.getInput(), shape);
    return success();
  }
};

} // namespace

void FlattenOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ShapeOpToReshape<FlattenOp>>(context);
}

void SqueezeOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ShapeOpToReshape<SqueezeOp>>(context);
}

void UnsqueezeOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ShapeOpToReshape<UnsqueezeOp>>(context);
}
