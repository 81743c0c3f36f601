//===- Normalization.cpp - ONNX normalizations without a graph op ---------===//
//
// GroupNormalization, InstanceNormalization, LpNormalization, MeanVarianceNormalization and LRN,
// decomposed into reductions and elementwise math (LayerNormalization and BatchNormalization,
// which have graph ops, are in NN.cpp).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// A reshape target for `type` with its one dynamic dimension as -1; failure (reported) when it
/// has more than one.
FailureOr<SmallVector<int64_t>> shapeWithOneUnknown(NodeContext &ctx, RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  if (llvm::count(shape, ShapedType::kDynamic) > 1)
    return ctx.emitError() << "input type " << type
                           << " has more than one dynamic dimension; bind its shape with --shape";
  for (int64_t &dim : shape)
    if (dim == ShapedType::kDynamic)
      dim = -1;
  return shape;
}

NamedAttribute namedKeepDims(NodeContext &ctx, bool keepDims) {
  return ctx.named("keepdims", ctx.builder().getBoolAttr(keepDims));
}

/// Reshapes a per-channel vector to `[C, 1, ..., 1]`, broadcasting along dimension 1 of a tensor
/// of `rank`.
Value perChannel(Decomposition &d, Value vector, int64_t rank) {
  if (!vector)
    return d.fail();
  auto type = llvm::cast<RankedTensorType>(vector.getType());
  if (type.getRank() != 1) {
    d.context().emitError() << "expects a per-channel vector, got " << type;
    return d.fail();
  }
  SmallVector<int64_t> shape = reshapeTarget(type.getShape());
  shape.append(rank - 2, 1);
  return d.reshape(vector, shape);
}

//===----------------------------------------------------------------------===//
// GroupNormalization
//===----------------------------------------------------------------------===//

/// GroupNormalization (opsets 18, 21): x of shape [N, C, d...] reshaped to [N, G, -1],
/// normalized over its last dimension (epsilon 1e-5 added to the variance), reshaped back, then
/// scaled and shifted. Opset 18's scale and bias are per group, applied on [N, G, -1]; opset 21's
/// are per channel, applied after the reshape back, and its stash_type (1 by default) computes
/// the statistics in f32.
LogicalResult translateGroupNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t groups = ctx.intAttr("num_groups", 0);
  if (!ctx.attribute("num_groups") || groups <= 0)
    return ctx.emitError() << "num_groups must be a positive integer";
  if (type.getRank() < 2)
    return ctx.emitError() << "expects an input of shape [N, C, d...], got " << type;
  int64_t channels = type.getDimSize(1);
  if (channels == ShapedType::kDynamic || channels % groups != 0)
    return ctx.emitError() << "the channel dimension of " << type
                           << " must be static and divisible by num_groups (" << groups << ")";
  FailureOr<SmallVector<int64_t>> restore = shapeWithOneUnknown(ctx, type);
  if (failed(restore))
    return failure();
  // [N, G, -1] with a static batch, [-1, G, size] with static spatial dimensions.
  SmallVector<int64_t> grouped{type.getDimSize(0), groups, -1};
  if (grouped[0] == ShapedType::kDynamic) {
    if (llvm::is_contained(type.getShape().drop_front(2), ShapedType::kDynamic))
      return ctx.emitError() << "input type " << type
                             << " has a dynamic batch and dynamic spatial dimensions; bind its "
                                "shape with --shape";
    grouped[0] = -1;
    grouped[2] = channels / groups;
    for (int64_t dim : type.getShape().drop_front(2))
      grouped[2] *= dim;
  }

  Value scale = ctx.input(1), bias = ctx.input(2);
  int64_t parameters = ctx.opset() >= 21 ? channels : groups;
  for (Value parameter : {scale, bias}) {
    auto parameterType = llvm::cast<RankedTensorType>(parameter.getType());
    if (parameterType.getRank() != 1 || parameterType.getDimSize(0) != parameters)
      return ctx.emitError() << "scale and bias must have " << parameters << " elements (one per "
                             << (ctx.opset() >= 21 ? "channel" : "group") << "), got "
                             << parameter.getType();
  }

  Decomposition d(ctx);
  Type element = type.getElementType();
  Type compute = element;
  if (ctx.opset() >= 21 && ctx.intAttr("stash_type", 1) == 1)
    compute = Float32Type::get(ctx.context());
  Value x = d.reshape(d.castTo(ctx.input(0), compute), grouped);
  Value mean = d.op<ReduceMeanOp>({x}, {namedAxes(ctx, {2}), namedKeepDims(ctx, true)});
  Value centered = d.sub(x, mean);
  Value variance = d.op<ReduceMeanOp>({d.mul(centered, centered)},
                                      {namedAxes(ctx, {2}), namedKeepDims(ctx, true)});
  double epsilon = ctx.floatAttr("epsilon", 1e-5f);
  Value normalized =
      d.mul(centered, d.op<RsqrtOp>({d.add(variance, d.scalar(variance, epsilon))}));
  normalized = d.castTo(normalized, element);
  SmallVector<int64_t> parameterShape{parameters, 1};
  if (ctx.opset() >= 21) {
    normalized = d.reshape(normalized, *restore);
    parameterShape.assign(type.getRank() - 1, 1);
    parameterShape[0] = parameters;
  }
  Value y = d.add(d.mul(normalized, d.reshape(scale, parameterShape)),
                  d.reshape(bias, parameterShape));
  if (ctx.opset() < 21)
    y = d.reshape(y, *restore);
  return d.finish(y);
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

/// InstanceNormalization (opset 6): each (sample, channel) plane normalized over the spatial
/// dimensions, scale * (x - mean) / sqrt(variance + epsilon) + B, epsilon = 1e-5 by default.
LogicalResult translateInstanceNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Value x = ctx.input(0);
  int64_t rank = ctx.inputType(0).getRank();
  if (rank < 3)
    return ctx.emitError() << "expects an input of rank 3 or more, got " << ctx.inputType(0);
  Decomposition d(ctx);
  SmallVector<int64_t> axes = spatialAxes(rank);
  Value centered = d.sub(x, reduceKeepingDims<ReduceMeanOp>(d, x, axes));
  Value variance = reduceKeepingDims<ReduceMeanOp>(d, d.mul(centered, centered), axes);
  Value epsilon = d.scalar(x, ctx.floatAttr("epsilon", 1e-5f));
  Value normalized = d.mul(centered, d.op<RsqrtOp>({d.add(variance, epsilon)}));
  Value scaled = d.mul(normalized, perChannel(d, ctx.input(1), rank));
  return d.finish(d.add(scaled, perChannel(d, ctx.input(2), rank)));
}

/// LpNormalization (opset 1): x divided by its L1 or L2 norm along `axis` (p = 2, axis = -1 by
/// default).
LogicalResult translateLpNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", -1), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  int64_t p = ctx.intAttr("p", 2);
  if (p != 1 && p != 2)
    return ctx.emitError() << "p must be 1 or 2, got " << p;
  Decomposition d(ctx);
  Value norm = rootOfOrder(d, reduceKeepingDims<ReduceSumOp>(d, absolutePower(d, x, p), {*axis}),
                           p);
  // A zero vector normalizes to zeros (the reference's where(norm == 0, 0, x / norm)), not 0/0.
  Value zero = d.scalar(x, 0.0);
  return d.finish(d.select(d.compare(ComparisonDirection::eq, norm, zero), zero, d.div(x, norm)));
}

/// MeanVarianceNormalization (opsets 9 and 13): (x - mean) / (sqrt(variance) + 1e-9) over
/// `axes` (default [0, 2, 3]), the epsilon added to the standard deviation as the spec's
/// function body does.
LogicalResult translateMeanVarianceNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axes =
      normalizeAxes(ctx, ctx.intsAttr("axes").value_or(SmallVector<int64_t>{0, 2, 3}),
                    ctx.inputType(0).getRank());
  if (failed(axes))
    return failure();
  Decomposition d(ctx);
  Value centered = d.sub(x, reduceKeepingDims<ReduceMeanOp>(d, x, *axes));
  Value variance = reduceKeepingDims<ReduceMeanOp>(d, d.mul(centered, centered), *axes);
  Value deviation = d.add(d.op<SqrtOp>({variance}), d.scalar(x, 1e-9));
  return d.finish(d.div(centered, deviation));
}

/// LRN (opsets 1 and 13): x / (bias + alpha / size * square_sum)^beta, where square_sum sums x^2
/// over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to the tensor.
/// The channel window is a zero pad of the squares followed by the sum of `size` shifted
/// slices, so the channel count must be static.
LogicalResult translateLRN(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 3)
    return ctx.emitError() << "expects an input of rank 3 or more, got " << type;
  int64_t channels = type.getDimSize(1);
  if (channels == kDynamic)
    return ctx.emitError() << "needs a static channel dimension, but input type is " << type
                           << " (bind it with --shape)";
  const onnx::AttributeProto *sizeAttr = ctx.attribute("size");
  if (!sizeAttr || sizeAttr->i() < 1)
    return ctx.emitError() << "attribute 'size' is required and must be positive";
  int64_t size = sizeAttr->i();
  double alpha = ctx.floatAttr("alpha", 1e-4f), beta = ctx.floatAttr("beta", 0.75f),
         bias = ctx.floatAttr("bias", 1.0f);

  Decomposition d(ctx);
  Value squares = d.mul(x, x);
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (size - 1) / 2;
  high[1] = size / 2;
  Value padded = d.op<PadOp>(
      {squares}, {ctx.namedArray("pad_low", low), ctx.namedArray("pad_high", high),
                  ctx.named("mode", PadModeAttr::get(ctx.context(), PadMode::constant))});
  SmallVector<int64_t> starts(rank, 0), limits, strides(rank, 1);
  for (int64_t dim : type.getShape())
    limits.push_back(dim == kDynamic ? std::numeric_limits<int64_t>::max() : dim);
  Value squareSum;
  for (int64_t offset = 0; offset < size; ++offset) {
    starts[1] = offset;
    limits[1] = offset + channels;
    Value window = d.op<SliceOp>({padded}, {ctx.namedArray("starts", starts),
                                            ctx.namedArray("limits", limits),
                                            ctx.namedArray("strides", strides)});
    squareSum = offset == 0 ? window : d.add(squareSum, window);
  }
  Value scaled = d.mul(squareSum, d.scalar(x, alpha / static_cast<double>(size)));
  Value base = d.add(scaled, d.scalar(x, bias));
  return d.finish(d.div(x, d.op<PowOp>({base, d.scalar(x, beta)})));
}

} // namespace

void registerNormalizationOps(OpTable &table) {
  table.add("", "GroupNormalization", {18, 21}, translateGroupNormalization);
  table.add("", "InstanceNormalization", 6, translateInstanceNormalization);
  table.add("", "LpNormalization", 1, translateLpNormalization);
  table.add("", "MeanVarianceNormalization", {9, 13}, translateMeanVarianceNormalization);
  table.add("", "LRN", {1, 13}, translateLRN);
}

} // namespace kiln::onnx_frontend
