//===- Transformer.cpp - ONNX RMSNormalization, RotaryEmbedding, Attention --===//
//
// The transformer operators of opset 23 and later, none of which has a graph op of its own
// (Swish and SwiGLU, x * sigmoid(alpha * x) and its gated form, besides these):
// RMSNormalization (a mean of squares and a reciprocal root in the stash type), RotaryEmbedding
// (gathered cosine and sine caches rotating halves or interleaved pairs of each head) and
// Attention (scaled dot-product attention over 3D or 4D inputs with grouped key/value heads, a
// key/value cache, boolean and additive masks, causal and sliding-window bands, per-batch
// valid lengths, softcap and the qk_matmul_output modes), decomposed into matmuls, softmax and
// elementwise ops.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Decomposition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

/// The maximum along the last dimension of `value`, kept as a dimension of size 1.
Value maxOverLastDim(Decomposition &d, Value value) {
  if (!value)
    return d.fail();
  NodeContext &ctx = d.context();
  return d.op<ReduceMaxOp>({value}, {ctx.namedArray("axes", {rankOf(value) - 1}),
                                     ctx.named("keepdims", ctx.builder().getBoolAttr(true))});
}

/// The keys a query may attend by position, as a band on `i + offset - j` (query i, key j):
/// `is_causal` bounds it below by 0, `right_window_size` below by its negation and
/// `left_window_size` above.
struct AttentionBand {
  std::optional<int64_t> lowest, highest;
  bool empty() const { return !lowest && !highest; }
  bool contains(int64_t distance) const {
    return (!lowest || distance >= *lowest) && (!highest || distance <= *highest);
  }
};

/// A 4D Attention operand `[batch, heads, sequence, size]` from a 3D one `[batch, sequence,
/// heads * size]`.
Value splitHeads(Decomposition &d, Value value, int64_t numHeads) {
  if (!value)
    return d.fail();
  ArrayRef<int64_t> shape = shapeOf(value);
  if (shape[2] == kDynamic || shape[2] % numHeads != 0) {
    d.context().emitError() << "the hidden size of " << value.getType()
                            << " must be static and a multiple of the head count " << numHeads;
    return d.fail();
  }
  Value heads =
      d.reshape(value, {shape[0] == kDynamic ? -1 : shape[0], shape[1] == kDynamic ? -1 : shape[1],
                        numHeads, shape[2] / numHeads});
  return d.transpose(heads, {0, 2, 1, 3});
}

/// Repeats each of the `[batch, kv_heads, sequence, size]` heads of `value` `repeats` times in
/// place ([h0, h0, h1, h1, ...]), as grouped-query attention shares a key/value head.
Value repeatHeads(Decomposition &d, Value value, int64_t repeats) {
  if (!value || repeats == 1)
    return value;
  SmallVector<int64_t> shape = reshapeTarget(shapeOf(value));
  Value expanded = d.op<ExpandOp>({d.unsqueeze(value, {2})},
                                  {d.context().namedArray("shape", {1, 1, repeats, 1, 1})});
  shape[1] *= repeats;
  return d.reshape(expanded, shape);
}

/// Attention (opsets 23, 24, 25). Q, K and V are 4D `[batch, heads, sequence, head_size]` or 3D
/// `[batch, sequence, heads * head_size]` with the q_num_heads and kv_num_heads attributes.
/// past_key/past_value are concatenated before K and V (the present outputs); key/value heads
/// are repeated for grouped-query attention. The product of Q and K is scaled (by the square of
/// sqrt(scale) in the inputs' type; scale defaults to 1/sqrt(head_size)), soft-capped
/// (softcap > 0), and the attention bias
/// added: the boolean constraints (a boolean attn_mask, the causal and window bands with the
/// offset of the cached keys or, for nonpad_kv_seqlen, of each batch's valid keys, and the
/// valid-length padding) as 0 or -inf, plus a floating-point attn_mask; a mask shorter than the
/// keys is padded with masked positions. Softmax runs in softmax_precision when given; a row
/// whose bias is -inf everywhere has no key to attend and becomes zero, not NaN. float16 and
/// bfloat16 attention is computed in f32 and rounded to the inputs' type once.
LogicalResult translateAttention(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  int64_t opset = ctx.opset();
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  int64_t rank = rankOf(q);
  if ((rank != 3 && rank != 4) || rankOf(k) != rank || rankOf(v) != rank)
    return ctx.emitError() << "expects Q, K and V all 3D or all 4D, got " << q.getType() << ", "
                           << k.getType() << " and " << v.getType();
  Type element = elementTypeOf(q);
  if (!llvm::isa<FloatType>(element) || elementTypeOf(k) != element || elementTypeOf(v) != element)
    return ctx.emitError() << "expects Q, K and V of one floating-point element type, got "
                           << q.getType() << ", " << k.getType() << " and " << v.getType();
  if (ctx.hasInput(4) != ctx.hasInput(5))
    return ctx.emitError() << "past_key and past_value must be given together";
  bool hasPast = ctx.hasInput(4);
  bool hasValidLengths = opset >= 24 && ctx.hasInput(6);
  if (hasValidLengths && hasPast)
    return ctx.emitError() << "nonpad_kv_seqlen cannot be combined with past_key and past_value";
  if (failed(ctx.requireUnusedOutputsFrom(4)))
    return failure();

  const onnx::AttributeProto *qHeadsAttr = ctx.attribute("q_num_heads");
  const onnx::AttributeProto *kvHeadsAttr = ctx.attribute("kv_num_heads");
  int64_t mode = ctx.intAttr("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return ctx.emitError() << "qk_matmul_output_mode " << mode << " is not one of 0, 1, 2, 3";
  float softcap = ctx.floatAttr("softcap", 0.0f);
  // Kiln's matmuls and reductions accumulate in their element type, so 16-bit attention is
  // computed in f32 and rounded once at the end, as runtimes accumulate it.
  Type compute = element.getIntOrFloatBitWidth() < 32 ? ctx.builder().getF32Type() : element;
  Type softmaxType = compute;
  if (const onnx::AttributeProto *precision = ctx.attribute("softmax_precision")) {
    softmaxType = floatElementType(ctx, precision->i());
    if (!softmaxType)
      return ctx.emitError() << "softmax_precision " << precision->i()
                             << " is not a floating-point type Kiln has";
  }
  AttentionBand band;
  if (ctx.intAttr("is_causal", 0) != 0)
    band.lowest = 0;
  if (opset >= 25) {
    int64_t left = ctx.intAttr("left_window_size", -1);
    int64_t right = ctx.intAttr("right_window_size", -1);
    if (left < -1 || right < -1)
      return ctx.emitError() << "left_window_size " << left << " and right_window_size " << right
                             << " must be -1 (unbounded) or nonnegative";
    if (left >= 0)
      band.highest = left;
    if (right >= 0)
      band.lowest = std::max(band.lowest.value_or(-right), -right);
  }

  Decomposition d(ctx);
  // The 4D views [batch, heads, sequence, size].
  if (rank == 3) {
    if (!qHeadsAttr || !kvHeadsAttr || qHeadsAttr->i() <= 0 || kvHeadsAttr->i() <= 0)
      return ctx.emitError() << "3D inputs need positive q_num_heads and kv_num_heads attributes";
    q = splitHeads(d, q, qHeadsAttr->i());
    k = splitHeads(d, k, kvHeadsAttr->i());
    v = splitHeads(d, v, kvHeadsAttr->i());
    if (d.failed())
      return failure();
  } else if (qHeadsAttr || kvHeadsAttr) {
    // Opset 25 forbids them with 4D inputs; before, they must agree with the inputs' heads.
    bool agree = (!qHeadsAttr || qHeadsAttr->i() == shapeOf(q)[1]) &&
                 (!kvHeadsAttr || kvHeadsAttr->i() == shapeOf(k)[1]);
    if (opset >= 25 || !agree)
      return ctx.emitError() << "q_num_heads and kv_num_heads apply to 3D inputs only"
                             << (opset >= 25 ? "" : " (they contradict the 4D inputs' heads)");
  }
  if (hasPast) {
    if (rankOf(ctx.input(4)) != 4 || rankOf(ctx.input(5)) != 4)
      return ctx.emitError() << "past_key and past_value must be 4D";
    k = d.concat({ctx.input(4), k}, 2);
    v = d.concat({ctx.input(5), v}, 2);
  }
  if (d.failed())
    return failure();
  ctx.setOutput(1, k);
  ctx.setOutput(2, v);

  q = d.castTo(q, compute);
  k = d.castTo(k, compute);
  v = d.castTo(v, compute);
  if (d.failed())
    return failure();

  ArrayRef<int64_t> qShape = shapeOf(q), kShape = shapeOf(k);
  int64_t qHeads = qShape[1], kvHeads = kShape[1], qLength = qShape[2], kvLength = kShape[2];
  if (qHeads == kDynamic || kvHeads == kDynamic || shapeOf(v)[1] != kvHeads ||
      qHeads % kvHeads != 0)
    return ctx.emitError() << "the query heads (" << q.getType()
                           << ") must be a static multiple of the key and value heads ("
                           << k.getType() << ", " << v.getType() << ")";

  // Q * sqrt(scale) times (K * sqrt(scale))^T.
  double scale;
  if (const onnx::AttributeProto *scaleAttr = ctx.attribute("scale")) {
    scale = scaleAttr->f();
  } else {
    if (qShape[3] == kDynamic)
      return ctx.emitError() << "the default scale needs a static head size, but Q is "
                             << q.getType();
    scale = 1.0 / std::sqrt(static_cast<double>(qShape[3]));
  }
  // The specification scales Q and K each by sqrt(scale), rounded to the inputs' type as its
  // function body casts it. The product is scaled once instead, by that rounded root squared:
  // the same value up to the rounding of the compute type (f32 for half-precision inputs, so
  // nothing overflows first), and the form exporters write, which the CPU's attention call takes.
  APFloat root(std::sqrt(scale));
  bool lost = false;
  (void)root.convert(llvm::cast<FloatType>(element).getFloatSemantics(),
                     APFloat::rmNearestTiesToEven, &lost);
  double rounded = root.convertToDouble();
  Value keys = repeatHeads(d, k, qHeads / kvHeads);
  Value values = repeatHeads(d, v, qHeads / kvHeads);
  Value product = d.op<MatmulOp>({q, d.transpose(keys, {0, 1, 3, 2})});
  Value scores = d.mul(product, d.scalar(product, rounded * rounded));
  Value capped = scores;
  if (softcap > 0) {
    Value cap = d.scalar(scores, softcap);
    capped = d.mul(d.op<TanhOp>({d.div(scores, cap)}), cap);
  }

  // The attention bias: the allowed positions as 0 / -inf, plus a floating-point mask.
  Value allowed, bias;
  auto allow = [&](Value constraint) {
    allowed = allowed ? d.op<AndOp>({allowed, constraint}) : constraint;
  };
  bool staticLengths = qLength != kDynamic && kvLength != kDynamic;
  if (ctx.hasInput(3)) {
    Value mask = ctx.input(3);
    Type maskElement = elementTypeOf(mask);
    bool boolean = maskElement.isInteger(1);
    if (!boolean && !llvm::isa<FloatType>(maskElement))
      return ctx.emitError() << "attn_mask of type " << mask.getType()
                             << " is not supported (only boolean or floating-point masks)";
    if (!boolean)
      mask = d.castTo(mask, compute);
    int64_t maskLength = shapeOf(mask).back();
    if (maskLength != kDynamic && kvLength != kDynamic && maskLength != kvLength) {
      if (maskLength > kvLength)
        return ctx.emitError() << "attn_mask " << mask.getType() << " is longer than the "
                               << kvLength << " keys";
      // The missing keys are masked.
      SmallVector<int64_t> low(rankOf(mask), 0), high(rankOf(mask), 0);
      high.back() = kvLength - maskLength;
      Value fill = d.scalar(mask, boolean ? 0 : kMinusInfinity);
      mask = d.op<PadOp>({mask, fill},
                         {ctx.namedArray("pad_low", low), ctx.namedArray("pad_high", high),
                          ctx.named("mode", PadModeAttr::get(ctx.context(), PadMode::constant))});
    }
    if (boolean)
      allow(mask);
    else
      bias = mask;
  }
  if ((!band.empty() || hasValidLengths) && !staticLengths)
    return ctx.emitError() << "causal, window and nonpad_kv_seqlen masks need static sequence "
                           << "lengths, but Q is " << q.getType() << " and K " << k.getType()
                           << " (bind the shapes with --shape)";
  if (!band.empty() && !hasValidLengths) {
    // One offset for every batch: the cached keys. The band is a constant.
    int64_t offset = hasPast ? shapeOf(ctx.input(4))[2] : 0;
    if (offset == kDynamic)
      return ctx.emitError() << "causal and window masks need a static past length, but past_key "
                             << "is " << ctx.input(4).getType();
    SmallVector<bool> inBand;
    for (int64_t i = 0; i < qLength; ++i)
      for (int64_t j = 0; j < kvLength; ++j)
        inBand.push_back(band.contains(i + offset - j));
    auto type = RankedTensorType::get({qLength, kvLength}, ctx.builder().getI1Type());
    allow(ctx.constant(DenseElementsAttr::get(type, ArrayRef<bool>(inBand))));
  }
  if (hasValidLengths) {
    // Each batch's valid keys: key j < nonpad_kv_seqlen[b], and the band's offset is
    // nonpad_kv_seqlen[b] - q_sequence_length.
    Value validLengths = ctx.input(6);
    if (rankOf(validLengths) != 1 || !elementTypeOf(validLengths).isInteger(64))
      return ctx.emitError() << "nonpad_kv_seqlen must be a vector of int64, got "
                             << validLengths.getType();
    SmallVector<int64_t> keyIndices;
    for (int64_t j = 0; j < kvLength; ++j)
      keyIndices.push_back(j);
    Value lengths = d.reshape(validLengths, {-1, 1, 1, 1});
    allow(d.compare(ComparisonDirection::lt, ctx.i64Vector(keyIndices), lengths));
    if (!band.empty()) {
      SmallVector<int64_t> distances;
      for (int64_t i = 0; i < qLength; ++i)
        for (int64_t j = 0; j < kvLength; ++j)
          distances.push_back(i - qLength - j);
      auto type = RankedTensorType::get({qLength, kvLength}, ctx.builder().getI64Type());
      Value distance =
          d.add(ctx.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(distances))), lengths);
      if (band.lowest)
        allow(d.compare(ComparisonDirection::ge, distance, d.scalar(distance, *band.lowest)));
      if (band.highest)
        allow(d.compare(ComparisonDirection::le, distance, d.scalar(distance, *band.highest)));
    }
  }
  if (allowed) {
    Value zero = d.scalar(q, 0), minusInfinity = d.scalar(q, kMinusInfinity);
    Value masked = d.select(allowed, zero, minusInfinity);
    bias = bias ? d.add(masked, bias) : masked;
  }
  Value biased = bias ? d.add(capped, bias) : capped;

  // Softmax along the keys; rows without an attendable key are zero.
  Value probabilities = d.op<SoftmaxOp>({d.castTo(biased, softmaxType)}, {ctx.namedI64("axis", 3)});
  if (bias) {
    Value largest = maxOverLastDim(d, bias);
    Value noKey = d.compare(ComparisonDirection::eq, largest, d.scalar(bias, kMinusInfinity));
    probabilities = d.select(noKey, d.scalar(probabilities, 0), probabilities);
  }
  probabilities = d.castTo(probabilities, compute);
  Value y = d.castTo(d.op<MatmulOp>({probabilities, values}), element);
  if (d.failed())
    return failure();
  if (rank == 3) {
    // Back to [batch, sequence, heads * v_head_size].
    ArrayRef<int64_t> shape = shapeOf(y);
    y = d.reshape(d.transpose(y, {0, 2, 1, 3}),
                  {shape[0] == kDynamic ? -1 : shape[0], shape[2] == kDynamic ? -1 : shape[2],
                   shape[1] * shape[3]});
  }
  if (ctx.outputUsed(3)) {
    Value qkOutputs[] = {scores, capped, biased, probabilities};
    ctx.setOutput(3, d.castTo(qkOutputs[mode], element));
  }
  return d.finish(y);
}

//===----------------------------------------------------------------------===//
// Swish and SwiGLU
//===----------------------------------------------------------------------===//

/// `value` in f32 when its elements are narrower (16-bit floats), else as it is.
Value widened(Decomposition &d, Value value) {
  if (!value)
    return d.fail();
  if (elementTypeOf(value).getIntOrFloatBitWidth() >= 32)
    return value;
  return d.castTo(value, Float32Type::get(d.context().context()));
}

/// x * sigmoid(alpha * x) of the widened `x`; the caller rounds once to the element type.
Value wideSwish(Decomposition &d, Value x, float alpha) {
  Value wide = widened(d, x);
  if (!wide)
    return wide;
  Value scaled = alpha == 1.0f ? wide : d.mul(wide, d.scalar(wide, alpha));
  return d.mul(wide, d.op<SigmoidOp>({scaled}));
}

/// Swish (opset 24): x * sigmoid(alpha * x).
LogicalResult translateSwish(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  return d.finish(d.castTo(wideSwish(d, x, ctx.floatAttr("alpha", 1.0f)), elementTypeOf(x)));
}

/// SwiGLU (opset 28): Swish_alpha(A) * B, A and B of one shape (no broadcasting).
LogicalResult translateSwiGLU(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value a = ctx.input(0), b = ctx.input(1);
  if (a.getType() != b.getType())
    return ctx.emitError() << "A and B must have the same type (SwiGLU does not broadcast), got "
                           << a.getType() << " and " << b.getType();
  Decomposition d(ctx);
  Value gate = wideSwish(d, a, ctx.floatAttr("alpha", 1.0f));
  Value gated = d.mul(gate, widened(d, b));
  return d.finish(d.castTo(gated, elementTypeOf(a)));
}

} // namespace

void registerTransformerOps(OpTable &table) {
  table.add("", "Swish", 24, translateSwish);
  table.add("", "SwiGLU", 28, translateSwiGLU);
  table.add("", "RMSNormalization", 23, translateRMSNormalization);
  table.add("", "RotaryEmbedding", 23, translateRotaryEmbedding);
  table.add("", "Attention", {23, 24, 25}, translateAttention);
}

} // namespace kiln::onnx_frontend
