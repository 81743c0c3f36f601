//===- GraphToLinalgScan.cpp - Lower arg max / min, cumsum and top-k -------===//
//
// The ops that walk one axis in order. Arg max / min is a linalg.generic reducing the axis into
// a (value, index) pair under a total order (value first, then index, so ties resolve the same
// whichever way the reduction is split). Cumsum is an scf.for along the axis carrying the
// running sum of the other dimensions. Top-k is an scf.for over the k picks: pick j is the best
// element, in the same total order, among those ranked after pick j - 1, so no element is taken
// twice and no mask is needed.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/LinalgBuilders.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace kiln::graph;
using namespace kiln::conversion;

namespace {

/// The order arg reductions and top-k select in: by value (largest or smallest first), ties by
/// index (lowest or, with `lastIndexFirst`, highest first).
struct SelectionOrder {
  bool largest;
  bool lastIndexFirst;
  bool isUnsigned;

  /// True when (value, index) ranks strictly before (otherValue, otherIndex).
  Value ranksBefore(OpBuilder &b, Location loc, Value value, Value index, Value otherValue,
                    Value otherIndex) const {
    Value better = largest ? greaterThan(b, loc, value, otherValue, isUnsigned)
                           : greaterThan(b, loc, otherValue, value, isUnsigned);
    Value tie = equalTo(b, loc, value, otherValue);
    Value earlier = arith::CmpIOp::create(
        b, loc, lastIndexFirst ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt, index,
        otherIndex);
    return arith::OrIOp::create(b, loc, better, arith::AndIOp::create(b, loc, tie, earlier));
  }

  /// The (value, index) every element ranks before or ties with: the worst value and an index
  /// that loses every tie.
  std::pair<Value, Value> worst(OpBuilder &b, Location loc, Type element) const {
    Value value =
        combinerIdentity(b, loc, element, largest ? Combiner::Max : Combiner::Min, isUnsigned);
    int64_t index = lastIndexFirst ? -1 : std::numeric_limits<int64_t>::max();
    return {value, arith::ConstantIntOp::create(b, loc, b.getI64Type(), index)};
  }
};

/// `type` without dimension `axis`.
RankedTensorType dropDim(RankedTensorType type, int64_t axis) {
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  return type.clone(shape);
}

/// A tensor of `type` (`input` without `axis`) filled with `value`.
Value filledRows(OpBuilder &b, Location loc, RankedTensorType type, Value input, int64_t axis,
                 Value value) {
  SmallVector<Value> dynamicSizes;
  auto inputType = llvm::cast<RankedTensorType>(input.getType());
  for (int64_t d = 0; d < inputType.getRank(); ++d)
    if (d != axis && inputType.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, input, d));
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dynamicSizes);
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

/// Reduces `input` along `axis` to the (value, index) pair that ranks first in `order` among
/// the elements `eligible` admits (all when null); `extraInputs` are read without the axis and
/// passed to `eligible` after the element and its index.
std::pair<Value, Value>
selectAlong(OpBuilder &b, Location loc, Value input, int64_t axis, SelectionOrder order,
            ValueRange extraInputs,
            function_ref<Value(OpBuilder &, Location, Value, Value, ValueRange)> eligible) {
  auto inputType = llvm::cast<RankedTensorType>(input.getType());
  RankedTensorType rowType = dropDim(inputType, axis);
  auto [worstValue, worstIndex] = order.worst(b, loc, inputType.getElementType());
  Value values = filledRows(b, loc, rowType, input, axis, worstValue);
  Value indices = filledRows(b, loc, rowType.clone(b.getI64Type()), input, axis, worstIndex);
  AffineMap identity = b.getMultiDimIdentityMap(inputType.getRank());
  AffineMap rows = identity.dropResult(axis);
  SmallVector<AffineMap> maps{identity};
  maps.append(extraInputs.size() + 2, rows);
  SmallVector<Value> inputs{input};
  llvm::append_range(inputs, extraInputs);
  SmallVector<utils::IteratorType> iterators(inputType.getRank(), utils::IteratorType::parallel);
  iterators[axis] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{values.getType(), indices.getType()}, inputs, ValueRange{values, indices},
      maps, iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value value = args[0], bestValue = args[args.size() - 2], bestIndex = args.back();
        Value index = arith::IndexCastOp::create(nb, nl, nb.getI64Type(),
                                                 linalg::IndexOp::create(nb, nl, axis));
        Value take = order.ranksBefore(nb, nl, value, index, bestValue, bestIndex);
        if (eligible)
          take = arith::AndIOp::create(
              nb, nl, take, eligible(nb, nl, value, index, args.drop_front().drop_back(2)));
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, take, value, bestValue),
                       arith::SelectOp::create(nb, nl, take, index, bestIndex)});
      });
  return {generic.getResult(0), generic.getResult(1)};
}

template <typename OpTy, bool kLargest> struct ArgReduceLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    SelectionOrder order{kLargest, op.getSelectLastIndex(), hasUnsignedElements(op)};
    Value indices = selectAlong(rewriter, loc, adaptor.getInput(), axis, order, {}, nullptr).second;
    RankedTensorType resultType = op.getType();
    if (op.getKeepdims())
      indices = expandReducedDims(rewriter, loc, indices, resultType, {axis});
    rewriter.replaceOp(op, indices);
    return success();
  }
};

/// The slice of `tensor` at `position` along `axis`, without that dimension.
Value sliceAt(OpBuilder &b, Location loc, Value tensor, int64_t axis, Value position) {
  auto type = llvm::cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(d == axis ? b.getIndexAttr(1) : dimSize(b, loc, tensor, d));
  offsets[axis] = position;
  return tensor::ExtractSliceOp::create(b, loc, dropDim(type, axis), tensor, offsets, sizes,
                                        strides);
}

/// `dest` with the slice at `position` along `axis` replaced by `slice` (which lacks the axis).
Value insertAt(OpBuilder &b, Location loc, Value slice, Value dest, int64_t axis, Value position) {
  auto type = llvm::cast<RankedTensorType>(dest.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(d == axis ? b.getIndexAttr(1) : dimSize(b, loc, dest, d));
  offsets[axis] = position;
  return tensor::InsertSliceOp::create(b, loc, slice, dest, offsets, sizes, strides);
}

/// graph.cumsum (kCombiner Sum, identity 0) and graph.cumprod (Prod, identity 1).
template <typename OpTy, Combiner kCombiner>
struct CumulativeLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;
  using OpAdaptor = typename OpTy::Adaptor;

  LogicalResult matchAndRewrite(OpTy op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = llvm::cast<RankedTensorType>(input.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    RankedTensorType rowType = dropDim(type, axis);
    Value identity = scalarConstant(rewriter, loc, type.getElementType(),
                                    kCombiner == Combiner::Prod ? 1 : 0);
    Value running = filledRows(rewriter, loc, rowType, input, axis, identity);
    // An exclusive scan starts with the identity and writes each running value one position
    // further on.
    Value init = emptyForResult(rewriter, loc, type, ValueRange{input});
    if (exclusive)
      init = linalg::FillOp::create(rewriter, loc, identity, init).getResult(0);
    Value size = tensor::DimOp::create(rewriter, loc, input, axis);
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value count = exclusive ? Value(arith::SubIOp::create(rewriter, loc, size, one)) : size;
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, count, one, ValueRange{init, running},
        [&](OpBuilder &b, Location l, Value step, ValueRange carried) {
          // Step i reads element i, or element n - 1 - i with reverse.
          auto positionOf = [&](Value i) -> Value {
            if (!reverse)
              return i;
            return arith::SubIOp::create(b, l, arith::SubIOp::create(b, l, size, one), i);
          };
          Value slice = sliceAt(b, l, input, axis, positionOf(step));
          // The running sum accumulates in place: its loop argument is the destination the
          // generic reads and writes.
          AffineMap rows = b.getMultiDimIdentityMap(rowType.getRank());
          SmallVector<utils::IteratorType> parallel(rowType.getRank(),
                                                    utils::IteratorType::parallel);
          Value sum = linalg::GenericOp::create(
                          b, l, TypeRange{rowType}, ValueRange{slice}, ValueRange{carried[1]},
                          ArrayRef<AffineMap>{rows, rows}, parallel,
                          [](OpBuilder &nb, Location nl, ValueRange args) {
                            linalg::YieldOp::create(
                                nb, nl, combine(nb, nl, kCombiner, args[1], args[0]));
                          })
                          .getResult(0);
          Value target =
              positionOf(exclusive ? Value(arith::AddIOp::create(b, l, step, one)) : step);
          Value written = insertAt(b, l, sum, carried[0], axis, target);
          scf::YieldOp::create(b, l, ValueRange{written, sum});
        });
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

struct TopKLowering : GraphLowering<TopKOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    RankedTensorType valuesType = signlessType(op.getValues());
    RankedTensorType indicesType = op.getIndices().getType();
    SelectionOrder order{op.getLargest(), /*lastIndexFirst=*/false, hasUnsignedElements(op)};
    SmallVector<std::pair<Value, int64_t>> sizes;
    for (int64_t d = 0; d < valuesType.getRank(); ++d)
      sizes.push_back({input, d});
    Value values = emptyWithSizes(rewriter, loc, valuesType, sizes);
    Value indices = emptyWithSizes(rewriter, loc, indicesType, sizes);
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value k = arith::ConstantIndexOp::create(rewriter, loc, static_cast<int64_t>(op.getK()));
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, k, one, ValueRange{values, indices},
        [&](OpBuilder &b, Location l, Value pick, ValueRange carried) {
          // Pick j takes the best element ranked after pick j - 1 (any element for pick 0).
          Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, pick, lower);
          Value previous =
              arith::MaxSIOp::create(b, l, arith::SubIOp::create(b, l, pick, one), lower);
          Value previousValues = sliceAt(b, l, carried[0], axis, previous);
          Value previousIndices = sliceAt(b, l, carried[1], axis, previous);
          auto [bestValues, bestIndices] = selectAlong(
              b, l, input, axis, order, ValueRange{previousValues, previousIndices},
              [&](OpBuilder &nb, Location nl, Value value, Value index, ValueRange last) {
                Value after = order.ranksBefore(nb, nl, last[0], last[1], value, index);
                return arith::OrIOp::create(nb, nl, first, after);
              });
          Value newValues = insertAt(b, l, bestValues, carried[0], axis, pick);
          Value newIndices = insertAt(b, l, bestIndices, carried[1], axis, pick);
          scf::YieldOp::create(b, l, ValueRange{newValues, newIndices});
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

} // namespace

void kiln::conversion::populateScanLowerings(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<ArgReduceLowering<ArgMaxOp, true>, ArgReduceLowering<ArgMinOp, false>,
               CumulativeLowering<CumsumOp, Combiner::Sum>,
               CumulativeLowering<CumprodOp, Combiner::Prod>, TopKLowering>(converter,
                                                                            patterns.getContext());
}
