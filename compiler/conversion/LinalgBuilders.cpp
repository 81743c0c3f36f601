//===- LinalgBuilders.cpp - Building blocks of the graph-to-linalg lowering -===//

#include "compiler/conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kiln::conversion {

bool isFloat(Type type) { return llvm::isa<FloatType>(getElementTypeOrSelf(type)); }

bool isUnsigned(Type type) {
  auto integer = llvm::dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return integer && integer.isUnsigned();
}

bool hasUnsignedElements(Operation *op) {
  auto unsignedType = [](Type type) { return isUnsigned(type); };
  return llvm::any_of(op->getOperandTypes(), unsignedType) ||
         llvm::any_of(op->getResultTypes(), unsignedType);
}

/// `type` with an unsigned integer element type replaced by the signless one.
static Type toSignless(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (!isUnsigned(element))
    return type;
  auto signless = IntegerType::get(type.getContext(), element.getIntOrFloatBitWidth());
  if (auto shaped = llvm::dyn_cast<ShapedType>(type))
    return shaped.clone(signless);
  return signless;
}

SignlessTypeConverter::SignlessTypeConverter() {
  addConversion([](Type type) { return toSignless(type); });
}

RankedTensorType signlessType(Value value) {
  return llvm::cast<RankedTensorType>(toSignless(value.getType()));
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = llvm::dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, FloatAttr::get(floatType, value));
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(type, static_cast<int64_t>(value)));
}

Value emptyForResult(OpBuilder &b, Location loc, RankedTensorType type, ValueRange operands) {
  SmallVector<Value> dynamicSizes;
  int64_t rank = type.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value size;
    for (Value operand : operands) {
      auto operandType = llvm::cast<RankedTensorType>(operand.getType());
      int64_t aligned = d - (rank - operandType.getRank());
      if (aligned >= 0 && operandType.isDynamicDim(aligned)) {
        size = tensor::DimOp::create(b, loc, operand, aligned);
        break;
      }
    }
    assert(size && "a dynamic result dimension has a dynamic operand dimension");
    dynamicSizes.push_back(size);
  }
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dynamicSizes);
}

AffineMap broadcastMap(MLIRContext *context, RankedTensorType operand, RankedTensorType result) {
  int64_t offset = result.getRank() - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < operand.getRank(); ++i) {
    int64_t d = i + offset;
    if (operand.getDimSize(i) == 1 && result.getDimSize(d) != 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      exprs.push_back(getAffineDimExpr(d, context));
  }
  return AffineMap::get(result.getRank(), 0, exprs, context);
}

Value buildGeneric(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange operands,
                   ArrayRef<AffineMap> maps, Value init, ScalarFn fn) {
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(AffineMap::getMultiDimIdentityMap(resultType.getRank(), b.getContext()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(), utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, operands, ValueRange{init}, allMaps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value value = fn(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, value);
      });
  return generic.getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange operands,
                       ScalarFn fn) {
  SmallVector<AffineMap> maps;
  for (Value operand : operands)
    maps.push_back(
        broadcastMap(b.getContext(), llvm::cast<RankedTensorType>(operand.getType()), resultType));
  Value init = emptyForResult(b, loc, resultType, operands);
  return buildGeneric(b, loc, resultType, operands, maps, init, fn);
}

Value buildIndexedRead(
    OpBuilder &b, Location loc, RankedTensorType resultType, Value input, ValueRange extraInputs,
    ArrayRef<AffineMap> extraMaps, Value init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange, ValueRange)> indexFn) {
  return buildGeneric(b, loc, resultType, extraInputs, extraMaps, init,
                      [&](OpBuilder &nb, Location nl, ValueRange elements) -> Value {
                        SmallVector<Value> indices;
                        for (int64_t d = 0; d < resultType.getRank(); ++d)
                          indices.push_back(linalg::IndexOp::create(nb, nl, d));
                        SmallVector<Value> source = indexFn(nb, nl, indices, elements);
                        return tensor::ExtractOp::create(nb, nl, input, source);
                      });
}

Value wrapIndex(OpBuilder &b, Location loc, Value index, Value size) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  return arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, index, size),
                                 index);
}

OpFoldResult dimSize(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = llvm::cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return b.getIndexAttr(type.getDimSize(dim));
  return tensor::DimOp::create(b, loc, tensor, dim).getResult();
}

Value emptyWithSizes(OpBuilder &b, Location loc, RankedTensorType type,
                     ArrayRef<std::pair<Value, int64_t>> sources) {
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, sources[d].first, sources[d].second));
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dynamicSizes);
}

Value greaterThan(OpBuilder &b, Location loc, Value lhs, Value rhs, bool isUnsigned) {
  if (isFloat(lhs.getType()))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, lhs, rhs);
  return arith::CmpIOp::create(
      b, loc, isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt, lhs, rhs);
}

Value equalTo(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType()))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
}

Value combinerIdentity(OpBuilder &b, Location loc, Type type, Combiner combiner, bool isUnsigned) {
  switch (combiner) {
  case Combiner::Sum:
    return scalarConstant(b, loc, type, 0);
  case Combiner::Prod:
    return scalarConstant(b, loc, type, 1);
  case Combiner::Max:
  case Combiner::Min: {
    bool max = combiner == Combiner::Max;
    if (auto floatType = llvm::dyn_cast<FloatType>(type))
      return arith::ConstantOp::create(
          b, loc, FloatAttr::get(floatType, APFloat::getInf(floatType.getFloatSemantics(), max)));
    unsigned width = type.getIntOrFloatBitWidth();
    APInt bound = isUnsigned
                      ? (max ? APInt::getMinValue(width) : APInt::getMaxValue(width))
                      : (max ? APInt::getSignedMinValue(width) : APInt::getSignedMaxValue(width));
    return arith::ConstantOp::create(b, loc, IntegerAttr::get(type, bound));
  }
  }
  llvm_unreachable("unknown combiner");
}

Value combine(OpBuilder &b, Location loc, Combiner combiner, Value lhs, Value rhs,
              bool isUnsigned) {
  bool fp = isFloat(lhs.getType());
  switch (combiner) {
  case Combiner::Sum:
    return fp ? Value(arith::AddFOp::create(b, loc, lhs, rhs))
              : Value(arith::AddIOp::create(b, loc, lhs, rhs));
  case Combiner::Prod:
    return fp ? Value(arith::MulFOp::create(b, loc, lhs, rhs))
              : Value(arith::MulIOp::create(b, loc, lhs, rhs));
  case Combiner::Max:
    if (fp)
      return arith::MaximumFOp::create(b, loc, lhs, rhs);
    return isUnsigned ? Value(arith::MaxUIOp::create(b, loc, lhs, rhs))
                      : Value(arith::MaxSIOp::create(b, loc, lhs, rhs));
  case Combiner::Min:
    if (fp)
      return arith::MinimumFOp::create(b, loc, lhs, rhs);
    return isUnsigned ? Value(arith::MinUIOp::create(b, loc, lhs, rhs))
                      : Value(arith::MinSIOp::create(b, loc, lhs, rhs));
  }
  llvm_unreachable("unknown combiner");
}

Type accumulatorType(Type element, Combiner combiner) {
  bool sum = combiner == Combiner::Sum || combiner == Combiner::Prod;
  if (sum && (element.isF16() || element.isBF16()))
    return Float32Type::get(element.getContext());
  return element;
}

Value convertFloatTensor(OpBuilder &b, Location loc, Value value, RankedTensorType resultType) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  Type from = type.getElementType(), to = resultType.getElementType();
  if (from == to)
    return value;
  auto target = RankedTensorType::get(type.getShape(), to);
  bool narrow = to.getIntOrFloatBitWidth() < from.getIntOrFloatBitWidth();
  return buildElementwise(b, loc, target, ValueRange{value},
                          [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                            if (narrow)
                              return arith::TruncFOp::create(nb, l, to, args[0]);
                            return arith::ExtFOp::create(nb, l, to, args[0]);
                          });
}

Value reduceAlong(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
                  Combiner combiner, bool isUnsigned) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (llvm::is_contained(axes, d))
      continue;
    shape.push_back(type.getDimSize(d));
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, input, d));
  }
  Type element = type.getElementType();
  Type accumulator = accumulatorType(element, combiner);
  Value empty = tensor::EmptyOp::create(b, loc, shape, accumulator, dynamicSizes);
  Value identity = combinerIdentity(b, loc, accumulator, combiner, isUnsigned);
  Value init = linalg::FillOp::create(b, loc, identity, empty).getResult(0);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{input}, ValueRange{init}, axes,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value element = args[0];
        if (element.getType() != accumulator)
          element = arith::ExtFOp::create(nested, nestedLoc, accumulator, element);
        linalg::YieldOp::create(nested, nestedLoc,
                                combine(nested, nestedLoc, combiner, element, args[1], isUnsigned));
      });
  Value reduced = reduce.getResult(0);
  if (accumulator != element)
    reduced = convertFloatTensor(b, loc, reduced, RankedTensorType::get(shape, element));
  return reduced;
}

Value countAlong(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes, Type type) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t axis : axes) {
    Value size = tensor::DimOp::create(b, loc, input, axis);
    count = arith::MulIOp::create(b, loc, count, size);
  }
  Value asInteger = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  if (llvm::isa<FloatType>(type))
    return arith::SIToFPOp::create(b, loc, type, asInteger);
  return arith::TruncIOp::create(b, loc, type, asInteger);
}

Value reshapeTo(OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
                ArrayRef<OpFoldResult> sizes) {
  auto inputType = llvm::cast<RankedTensorType>(input.getType());
  Value flat = input;
  if (inputType.getRank() == 0) {
    auto flatType = RankedTensorType::get({1}, inputType.getElementType());
    flat = tensor::ExpandShapeOp::create(b, loc, flatType, input, ArrayRef<ReassociationIndices>{},
                                         ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  } else if (inputType.getRank() > 1) {
    ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, inputType.getRank()));
    flat = tensor::CollapseShapeOp::create(b, loc, input, ArrayRef<ReassociationIndices>{all});
  }
  if (resultType.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, resultType, flat,
                                           ArrayRef<ReassociationIndices>{});
  if (resultType.getRank() == 1)
    return flat.getType() == resultType ? flat
                                        : Value(tensor::CastOp::create(b, loc, resultType, flat));
  // A dynamic result dimension is its size of the run where `sizes` gives one; the one left is
  // the element count over the others.
  auto given = [&](int64_t d) {
    return sizes.size() == static_cast<size_t>(resultType.getRank()) && sizes[d];
  };
  int64_t staticProduct = 1;
  std::optional<int64_t> open;
  for (auto [d, size] : llvm::enumerate(resultType.getShape())) {
    if (size != ShapedType::kDynamic)
      staticProduct *= size;
    else if (!given(static_cast<int64_t>(d)) && open)
      return {};
    else if (!given(static_cast<int64_t>(d)))
      open = static_cast<int64_t>(d);
  }
  SmallVector<OpFoldResult> outputShape;
  for (auto [d, size] : llvm::enumerate(resultType.getShape())) {
    if (size != ShapedType::kDynamic) {
      outputShape.push_back(b.getIndexAttr(size));
      continue;
    }
    if (given(static_cast<int64_t>(d))) {
      outputShape.push_back(sizes[d]);
      continue;
    }
    Value total = tensor::DimOp::create(b, loc, flat, 0);
    Value divisor = arith::ConstantIndexOp::create(b, loc, staticProduct);
    for (auto [e, other] : llvm::enumerate(resultType.getShape()))
      if (other == ShapedType::kDynamic && e != d)
        divisor = arith::MulIOp::create(b, loc, divisor,
                                        getValueOrCreateConstantIndexOp(b, loc, sizes[e]));
    outputShape.push_back(arith::DivUIOp::create(b, loc, total, divisor).getResult());
  }
  ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, resultType.getRank()));
  return tensor::ExpandShapeOp::create(b, loc, resultType, flat,
                                       ArrayRef<ReassociationIndices>{all}, outputShape);
}

Value reshapeToSizes(OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
                     ArrayRef<OpFoldResult> sizes) {
  auto inputType = llvm::cast<RankedTensorType>(input.getType());
  int64_t inputRank = inputType.getRank(), resultRank = resultType.getRank();
  if (inputType == resultType)
    return input;
  std::optional<SmallVector<ReassociationIndices>> groups;
  if (inputRank > 0 && resultRank > 0)
    groups = getReassociationIndicesForReshape(inputType, resultType);
  if (groups && inputRank > resultRank)
    return tensor::CollapseShapeOp::create(b, loc, resultType, input, *groups);
  if (groups && inputRank < resultRank) {
    SmallVector<OpFoldResult> outputShape;
    for (auto [source, group] : llvm::enumerate(*groups)) {
      // A dynamic result dimension is its size of the run, or the source dimension over the
      // group's other (static) dimensions.
      int64_t staticProduct = 1, dynamicCount = 0;
      for (int64_t d : group) {
        if (resultType.isDynamicDim(d))
          ++dynamicCount;
        else
          staticProduct *= resultType.getDimSize(d);
      }
      for (int64_t d : group) {
        if (!resultType.isDynamicDim(d)) {
          outputShape.push_back(b.getIndexAttr(resultType.getDimSize(d)));
        } else if (sizes.size() == static_cast<size_t>(resultRank) && sizes[d]) {
          outputShape.push_back(sizes[d]);
        } else if (dynamicCount == 1) {
          Value dim = tensor::DimOp::create(b, loc, input, static_cast<int64_t>(source));
          outputShape.push_back(
              arith::DivUIOp::create(b, loc, dim,
                                     arith::ConstantIndexOp::create(b, loc, staticProduct))
                  .getResult());
        } else {
          return {};
        }
      }
    }
    return tensor::ExpandShapeOp::create(b, loc, resultType, input, *groups, outputShape);
  }
  // Otherwise the elements are flattened and expanded to the sizes.
  return reshapeTo(b, loc, input, resultType, sizes);
}

Value padWith(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
              ArrayRef<int64_t> high, Value value) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return input;
  auto type = llvm::cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> lowSizes, highSizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(d);
    shape.push_back(size == ShapedType::kDynamic ? size : size + low[d] + high[d]);
    lowSizes.push_back(b.getIndexAttr(low[d]));
    highSizes.push_back(b.getIndexAttr(high[d]));
  }
  return tensor::PadOp::create(b, loc, type.clone(shape), input, lowSizes, highSizes, value);
}

Value expandReducedDims(OpBuilder &b, Location loc, Value reduced, RankedTensorType resultType,
                        ArrayRef<int64_t> axes) {
  auto reducedType = llvm::cast<RankedTensorType>(reduced.getType());
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    pending.push_back(d);
    if (!llvm::is_contained(axes, d)) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  // Trailing reduced dimensions join the last group; when every dimension was reduced, the
  // rank-0 tensor expands with no groups at all.
  if (!pending.empty() && !groups.empty())
    llvm::append_range(groups.back(), pending);
  SmallVector<OpFoldResult> outputShape;
  int64_t source = 0;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    if (llvm::is_contained(axes, d)) {
      outputShape.push_back(b.getIndexAttr(1));
      continue;
    }
    if (reducedType.isDynamicDim(source))
      outputShape.push_back(tensor::DimOp::create(b, loc, reduced, source).getResult());
    else
      outputShape.push_back(b.getIndexAttr(reducedType.getDimSize(source)));
    ++source;
  }
  return tensor::ExpandShapeOp::create(b, loc, resultType, reduced, groups, outputShape);
}

Value reduceInto(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes, Combiner combiner,
                 bool mean, RankedTensorType resultType, bool isUnsigned) {
  Value reduced = reduceAlong(b, loc, input, axes, combiner, isUnsigned);
  if (mean) {
    auto reducedType = llvm::cast<RankedTensorType>(reduced.getType());
    Value count = countAlong(b, loc, input, axes, reducedType.getElementType());
    reduced = buildElementwise(b, loc, reducedType, ValueRange{reduced},
                               [&](OpBuilder &nb, Location l, ValueRange args) {
                                 return arith::DivFOp::create(nb, l, args[0], count);
                               });
  }
  if (!axes.empty() &&
      resultType.getRank() == llvm::cast<RankedTensorType>(input.getType()).getRank())
    reduced = expandReducedDims(b, loc, reduced, resultType, axes);
  return reduced;
}

} // namespace kiln::conversion
