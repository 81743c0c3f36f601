//===- Transformer.cpp - ONNX RMSNormalization, RotaryEmbedding -------------===//
//
// The transformer operators of opset 23 and later, none of which has a graph op of its own:
// RMSNormalization (a mean of squares and a reciprocal root in the stash type) and
// RotaryEmbedding (gathered cosine and sine caches rotating halves or interleaved pairs of each
// head), decomposed into reductions, slices and elementwise ops.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Decomposition.h"

#include <limits>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

int64_t rankOf(Value value) { return llvm::cast<RankedTensorType>(value.getType()).getRank(); }

ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

/// Elements [start, limit) with `step` of the last dimension of `value`; the other dimensions
/// are kept whole.
Value sliceLastDim(Decomposition &d, Value value, int64_t start, int64_t limit, int64_t step = 1) {
  if (!value)
    return d.fail();
  NodeContext &ctx = d.context();
  int64_t rank = rankOf(value);
  SmallVector<int64_t> starts(rank, 0), limits, strides(rank, 1);
  for (int64_t size : shapeOf(value))
    limits.push_back(size == kDynamic ? std::numeric_limits<int64_t>::max() : size);
  starts.back() = start;
  limits.back() = limit;
  strides.back() = step;
  return d.op<SliceOp>({value}, {ctx.namedArray("starts", starts), ctx.namedArray("limits", limits),
                                 ctx.namedArray("strides", strides)});
}

/// The floating-point element type of ONNX data type `dataType`, or a null type.
Type floatElementType(NodeContext &ctx, int64_t dataType) {
  Type type = convertElementType(*ctx.context(), static_cast<int32_t>(dataType));
  return llvm::isa_and_present<FloatType>(type) ? type : Type();
}

//===----------------------------------------------------------------------===//
// RMSNormalization
//===----------------------------------------------------------------------===//

/// RMSNormalization (opset 23): X / sqrt(mean(X^2 over [axis, rank)) + epsilon), computed in
/// the stash type (float by default) and cast back to X's type, then times `scale`.
LogicalResult translateRMSNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireUnusedOutputsFrom(1)))
    return failure();
  Value x = ctx.input(0), scale = ctx.input(1);
  int64_t rank = ctx.inputType(0).getRank();
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  int64_t stash = ctx.intAttr("stash_type", 1);
  Type stashType = floatElementType(ctx, stash);
  if (!stashType)
    return ctx.emitError() << "stash_type " << stash << " is not a floating-point type";

  Decomposition d(ctx);
  SmallVector<int64_t> axes;
  for (int64_t dim = *axis; dim < rank; ++dim)
    axes.push_back(dim);
  Value stashed = d.castTo(x, stashType);
  Value meanSquare = d.op<ReduceMeanOp>(
      {d.mul(stashed, stashed)},
      {ctx.namedArray("axes", axes), ctx.named("keepdims", ctx.builder().getBoolAttr(true))});
  Value shifted = d.add(meanSquare, d.scalar(meanSquare, ctx.floatAttr("epsilon", 1e-5f)));
  Value normalized = d.castTo(d.mul(stashed, d.op<RsqrtOp>({shifted})), elementTypeOf(x));
  return d.finish(d.mul(d.castTo(normalized, elementTypeOf(scale)), scale));
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

/// RotaryEmbedding (opset 23). X is `[batch, heads, sequence, head_size]`, or `[batch, sequence,
/// hidden]` with the `num_heads` attribute, viewed as `[batch, sequence, heads, head_size]`. The
/// first `rotary_embedding_dim` elements of each head (all by default) are split into halves
/// (or, `interleaved`, into the even and odd elements) x1 and x2 and rotated by the caches'
/// angles: `(cos x1 - sin x2, sin x1 + cos x2)`, written back in the same layout; the rest of the
/// head passes through. With `position_ids` the caches are `[max_position, rotary_dim / 2]`
/// tables gathered per token, otherwise `[batch, sequence, rotary_dim / 2]` already.
LogicalResult translateRotaryEmbedding(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)) || failed(ctx.requireUnusedOutputsFrom(1)))
    return failure();
  Value x = ctx.input(0);
  RankedTensorType type = ctx.inputType(0);
  if (type.getRank() != 3 && type.getRank() != 4)
    return ctx.emitError() << "expects a 3D or 4D input, got " << type;
  bool packedHeads = type.getRank() == 3;
  int64_t headSize = type.getShape().back();
  if (headSize == kDynamic)
    return ctx.emitError() << "needs a static last dimension, but the input type is " << type
                           << " (bind it with --shape)";

  Decomposition d(ctx);
  // The heads axis of the 4D view, where the caches broadcast.
  int64_t headsAxis = 1;
  Value view = x;
  if (packedHeads) {
    int64_t numHeads = ctx.intAttr("num_heads", 0);
    if (numHeads <= 0 || headSize % numHeads != 0)
      return ctx.emitError() << "a 3D input needs the num_heads attribute, a positive divisor of "
                             << "its hidden size " << headSize;
    headSize /= numHeads;
    SmallVector<int64_t> shape = reshapeTarget(type.getShape().drop_back());
    shape.append({numHeads, headSize});
    view = d.reshape(x, shape);
    headsAxis = 2;
    if (d.failed())
      return failure();
  }
  int64_t rotaryDim = ctx.intAttr("rotary_embedding_dim", 0);
  if (rotaryDim == 0)
    rotaryDim = headSize;
  if (rotaryDim < 0 || rotaryDim > headSize || rotaryDim % 2 != 0)
    return ctx.emitError() << "rotary_embedding_dim " << rotaryDim
                           << " must be even and at most the head size " << headSize;
  int64_t half = rotaryDim / 2;

  Value cos = ctx.input(1), sin = ctx.input(2);
  int64_t cacheRank = ctx.hasInput(3) ? 2 : 3;
  for (int index : {1, 2}) {
    RankedTensorType cache = ctx.inputType(index);
    if (cache.getRank() != cacheRank ||
        (cache.getShape().back() != kDynamic && cache.getShape().back() != half))
      return ctx.emitError() << "expects the " << (index == 1 ? "cos" : "sin") << " cache of rank "
                             << cacheRank << " with a last dimension of " << half
                             << " (half the rotary dimension), got " << cache;
  }
  if (ctx.hasInput(3)) {
    NamedAttribute axis0 = ctx.namedI64("axis", 0);
    cos = d.op<GatherOp>({cos, ctx.input(3)}, {axis0});
    sin = d.op<GatherOp>({sin, ctx.input(3)}, {axis0});
  }
  cos = d.unsqueeze(cos, {headsAxis});
  sin = d.unsqueeze(sin, {headsAxis});

  bool interleaved = ctx.intAttr("interleaved", 0) != 0;
  Value x1 = interleaved ? sliceLastDim(d, view, 0, rotaryDim, 2) : sliceLastDim(d, view, 0, half);
  Value x2 =
      interleaved ? sliceLastDim(d, view, 1, rotaryDim, 2) : sliceLastDim(d, view, half, rotaryDim);
  // Named steps keep the ops in a fixed order (argument evaluation order is unspecified).
  Value cosX1 = d.mul(cos, x1), sinX2 = d.mul(sin, x2);
  Value real = d.sub(cosX1, sinX2);
  Value sinX1 = d.mul(sin, x1), cosX2 = d.mul(cos, x2);
  Value imag = d.add(sinX1, cosX2);
  Value rotated;
  if (interleaved) {
    // [..., half, 2] pairs, flattened back into alternating elements.
    Value pairs = d.concat({d.unsqueeze(real, {4}), d.unsqueeze(imag, {4})}, 4);
    SmallVector<int64_t> shape = reshapeTarget(shapeOf(view).drop_back());
    shape.push_back(rotaryDim);
    rotated = d.reshape(pairs, shape);
  } else {
    rotated = d.concat({real, imag}, 3);
  }
  if (rotaryDim < headSize)
    rotated = d.concat({rotated, sliceLastDim(d, view, rotaryDim, headSize)}, 3);
  if (packedHeads)
    rotated = d.reshape(rotated, reshapeTarget(type.getShape()));
  return d.finish(rotated);
}

} // namespace

void registerTransformerOps(OpTable &table) {
  table.add("", "RMSNormalization", 23, translateRMSNormalization);
  table.add("", "RotaryEmbedding", 23, translateRotaryEmbedding);
}

} // namespace kiln::onnx_frontend
