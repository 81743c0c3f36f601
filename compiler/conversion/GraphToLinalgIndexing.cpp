//===- GraphToLinalgIndexing.cpp - Lower gathers and scatters by index -----===//
//
// Gathers (gather_elements, gather_nd) are linalg.generic ops over the result that compute the
// input position from the index tensor and read it with tensor.extract. Scatters
// (scatter_elements, scatter_nd) apply their updates one at a time, in the row-major order of
// the update positions, through an scf.for nest carrying the result tensor: duplicate indices
// then combine in order, as ONNX specifies for every reduction mode.
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

using namespace mlir;
using namespace kiln::graph;
using namespace kiln::conversion;

namespace {

/// Where one update goes and what it is.
struct ScatterStep {
  SmallVector<Value> destination;
  Value update;
};

using ScatterStepFn = function_ref<ScatterStep(OpBuilder &, Location, ValueRange positions)>;

/// The combiner of a scatter reduction; none overwrites.
std::optional<Combiner> combinerOf(ScatterReduction reduction) {
  switch (reduction) {
  case ScatterReduction::none:
    return std::nullopt;
  case ScatterReduction::add:
    return Combiner::Sum;
  case ScatterReduction::mul:
    return Combiner::Prod;
  case ScatterReduction::max:
    return Combiner::Max;
  case ScatterReduction::min:
    return Combiner::Min;
  }
  llvm_unreachable("unknown scatter reduction");
}

/// `input` with one update applied per position of `space`'s shape, in row-major order: `stepFn`
/// says where each goes and what it is; `reduction` combines it with the element there.
Value scatterInOrder(OpBuilder &b, Location loc, Value input, Value space,
                     ScatterReduction reduction, bool isUnsigned, ScatterStepFn stepFn) {
  auto spaceType = llvm::cast<RankedTensorType>(space.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> lbs(spaceType.getRank(), zero), steps(spaceType.getRank(), one), ubs;
  for (int64_t d = 0; d < spaceType.getRank(); ++d)
    ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, dimSize(b, loc, space, d)));
  std::optional<Combiner> combiner = combinerOf(reduction);
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{input},
      [&](OpBuilder &nb, Location nl, ValueRange positions,
          ValueRange carried) -> scf::ValueVector {
        ScatterStep step = stepFn(nb, nl, positions);
        Value value = step.update;
        if (combiner) {
          Value current = tensor::ExtractOp::create(nb, nl, carried[0], step.destination);
          value = combine(nb, nl, *combiner, current, value, isUnsigned);
        }
        return {tensor::InsertOp::create(nb, nl, value, carried[0], step.destination)};
      });
  return nest.results.empty() ? input : nest.results.front();
}

/// The sizes of `input`'s dimensions, as index values.
SmallVector<Value> dimValues(OpBuilder &b, Location loc, Value input) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < llvm::cast<RankedTensorType>(input.getType()).getRank(); ++d)
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, dimSize(b, loc, input, d)));
  return sizes;
}

/// The `k` input positions named by the index vector at `position` (all but the last dimension
/// of `indices`), each wrapped into `sizes[first + j]`.
SmallVector<Value> readIndexVector(OpBuilder &b, Location loc, Value indices, ValueRange position,
                                   int64_t k, ArrayRef<Value> sizes, int64_t first) {
  SmallVector<Value> result;
  SmallVector<Value> at(position);
  at.push_back(Value());
  for (int64_t j = 0; j < k; ++j) {
    at.back() = arith::ConstantIndexOp::create(b, loc, j);
    Value index = tensor::ExtractOp::create(b, loc, indices, at);
    result.push_back(wrapIndex(b, loc, index, sizes[first + j]));
  }
  return result;
}

struct GatherElementsLowering : GraphLowering<GatherElementsOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(GatherElementsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = signlessType(op.getResult());
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    SmallVector<std::pair<Value, int64_t>> sizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      sizes.push_back({indices, d});
    Value init = emptyWithSizes(rewriter, loc, resultType, sizes);
    Value axisSize = tensor::DimOp::create(rewriter, loc, input, axis);
    AffineMap identity = rewriter.getMultiDimIdentityMap(resultType.getRank());
    Value result =
        buildIndexedRead(rewriter, loc, resultType, input, ValueRange{indices}, {identity}, init,
                         [&](OpBuilder &b, Location l, ValueRange positions, ValueRange elements) {
                           SmallVector<Value> source(positions);
                           source[axis] = wrapIndex(b, l, elements[0], axisSize);
                           return source;
                         });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherNdLowering : GraphLowering<GatherNdOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(GatherNdOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = signlessType(op.getResult());
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    auto indicesType = llvm::cast<RankedTensorType>(indices.getType());
    int64_t batch = static_cast<int64_t>(op.getBatchDims());
    int64_t k = indicesType.getDimSize(indicesType.getRank() - 1);
    if (k == ShapedType::kDynamic)
      return rewriter.notifyMatchFailure(op, "index vectors of dynamic length");
    // Result dims [0, q-1) walk the index vectors (the batch among them), the rest the slice of
    // the input after its first batch + k dimensions.
    int64_t positions = indicesType.getRank() - 1;
    SmallVector<std::pair<Value, int64_t>> sizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      sizes.push_back(d < positions ? std::make_pair(indices, d)
                                    : std::make_pair(input, d - positions + batch + k));
    Value init = emptyWithSizes(rewriter, loc, resultType, sizes);
    SmallVector<Value> inputSizes = dimValues(rewriter, loc, input);
    Value result = buildIndexedRead(
        rewriter, loc, resultType, input, {}, {}, init,
        [&](OpBuilder &b, Location l, ValueRange at, ValueRange) {
          SmallVector<Value> source(at.take_front(batch));
          llvm::append_range(source, readIndexVector(b, l, indices, at.take_front(positions), k,
                                                     inputSizes, batch));
          llvm::append_range(source, at.drop_front(positions));
          return source;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ScatterElementsLowering : GraphLowering<ScatterElementsOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ScatterElementsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    Value axisSize = tensor::DimOp::create(rewriter, loc, input, axis);
    Value result =
        scatterInOrder(rewriter, loc, input, indices, op.getReduction(), hasUnsignedElements(op),
                       [&](OpBuilder &b, Location l, ValueRange positions) {
                         ScatterStep step;
                         step.destination.assign(positions.begin(), positions.end());
                         Value index = tensor::ExtractOp::create(b, l, indices, positions);
                         step.destination[axis] = wrapIndex(b, l, index, axisSize);
                         step.update = tensor::ExtractOp::create(b, l, updates, positions);
                         return step;
                       });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ScatterNdLowering : GraphLowering<ScatterNdOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ScatterNdOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto indicesType = llvm::cast<RankedTensorType>(indices.getType());
    int64_t k = indicesType.getDimSize(indicesType.getRank() - 1);
    if (k == ShapedType::kDynamic)
      return rewriter.notifyMatchFailure(op, "index vectors of dynamic length");
    int64_t positions = indicesType.getRank() - 1;
    SmallVector<Value> inputSizes = dimValues(rewriter, loc, input);
    // One step per element of `updates`: the index vector picks the first k input dimensions,
    // the trailing positions walk the slice.
    Value result =
        scatterInOrder(rewriter, loc, input, updates, op.getReduction(), hasUnsignedElements(op),
                       [&](OpBuilder &b, Location l, ValueRange at) {
                         ScatterStep step;
                         step.destination = readIndexVector(b, l, indices, at.take_front(positions),
                                                            k, inputSizes, 0);
                         llvm::append_range(step.destination, at.drop_front(positions));
                         step.update = tensor::ExtractOp::create(b, l, updates, at);
                         return step;
                       });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::conversion::populateIndexingLowerings(const TypeConverter &converter,
                                                 RewritePatternSet &patterns) {
  patterns
      .add<GatherElementsLowering, GatherNdLowering, ScatterElementsLowering, ScatterNdLowering>(
          converter, patterns.getContext());
}
