//===- Extra.cpp - ONNX losses, group norm, quantized matmuls, grids --------===//
//
// The Bitwise operators, NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss,
// GroupNormalization, the integer-arithmetic quantization operators (MatMulInteger,
// DynamicQuantizeLinear, QLinearMatMul), MelWeightMatrix, CenterCropPad, MaxUnpool,
// AffineGrid, and DFT and STFT as products with constant Fourier matrices. The losses gather each
// target's score with gather_elements after moving ignored targets to class 0, and mask them out
// again; the quantized products multiply in i32 and requantize in floating point with rounding of
// halves to even and saturation, as the spec's reference does. MelWeightMatrix and AffineGrid's
// base grid are computed at import time.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include <cmath>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

/// True for a signed or unsigned integer element type other than i1.
bool isIntegerElement(Type type) {
  auto integer = llvm::dyn_cast<IntegerType>(type);
  return integer && integer.getWidth() > 1;
}

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

NamedAttribute namedAxes(NodeContext &ctx, ArrayRef<int64_t> axes) {
  return ctx.namedArray("axes", axes);
}

NamedAttribute namedKeepDims(NodeContext &ctx, bool keepDims) {
  return ctx.named("keepdims", ctx.builder().getBoolAttr(keepDims));
}

/// Every axis of a value of `rank`.
SmallVector<int64_t> allAxes(int64_t rank) { return llvm::to_vector(llvm::seq<int64_t>(0, rank)); }

//===----------------------------------------------------------------------===//
// Bitwise operators
//===----------------------------------------------------------------------===//

/// Reports an error unless input `index` has an integer element type.
LogicalResult requireIntegerInput(NodeContext &ctx, int index) {
  Type element = elementTypeOf(ctx.input(index));
  if (!isIntegerElement(element))
    return ctx.emitError() << "expects integer operands, got " << ctx.input(index).getType();
  return success();
}

/// BitwiseAnd, BitwiseOr, BitwiseXor (opset 18): the graph op, bitwise on integers.
template <typename OpTy>
LogicalResult translateBitwiseBinary(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(requireIntegerInput(ctx, 0)) ||
      failed(requireIntegerInput(ctx, 1)))
    return failure();
  Decomposition d(ctx);
  return d.finish(d.op<OpTy>({ctx.input(0), ctx.input(1)}));
}

/// BitwiseNot (opset 18): graph.not, bitwise on integers.
LogicalResult translateBitwiseNot(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(requireIntegerInput(ctx, 0)))
    return failure();
  Decomposition d(ctx);
  return d.finish(d.op<NotOp>({ctx.input(0)}));
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// The reduction attribute of the losses, checked.
FailureOr<std::string> lossReduction(NodeContext &ctx) {
  std::string reduction = ctx.stringAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.emitError() << "reduction must be 'none', 'sum' or 'mean', got '" << reduction
                           << "'";
  return reduction;
}

/// The negative log-likelihood of `logProb` ([N, C, d1, ...]) at `target` ([N, d1, ...]) with
/// optional per-class `weight` ([C]): loss = -logProb[n, target, d...] * weight[target], zero
/// where target equals ignore_index, then summed, or divided by the sum of the weights taken
/// (each 1 without `weight`, 0 where ignored) for `mean`.
Value negativeLogLikelihood(Decomposition &d, Value logProb, Value target, Value weight,
                            StringRef reduction) {
  NodeContext &ctx = d.context();
  auto logProbType = llvm::cast<RankedTensorType>(logProb.getType());
  auto targetType = llvm::cast<RankedTensorType>(target.getType());
  if (logProbType.getRank() < 2 || targetType.getRank() != logProbType.getRank() - 1) {
    ctx.emitError() << "expects an input of shape [N, C, d1, ...] and a target of shape "
                       "[N, d1, ...], got "
                    << logProb.getType() << " and " << target.getType();
    return d.fail();
  }
  if (!targetType.getElementType().isSignlessInteger(32) &&
      !targetType.getElementType().isSignlessInteger(64)) {
    ctx.emitError() << "expects an int32 or int64 target, got " << target.getType();
    return d.fail();
  }
  const onnx::AttributeProto *ignoreAttr = ctx.attribute("ignore_index");
  Value ignored, safeTarget = target;
  if (ignoreAttr) {
    ignored = d.compare(ComparisonDirection::eq, target,
                        d.scalar(target, static_cast<double>(ignoreAttr->i())));
    safeTarget = d.select(ignored, d.scalar(target, 0), target);
  }
  Value index = d.op<UnsqueezeOp>({safeTarget}, {namedAxes(ctx, {1})});
  Value picked = d.op<GatherElementsOp>({logProb, index}, {ctx.namedI64("axis", 1)});
  Value loss = d.op<NegOp>({d.op<SqueezeOp>({picked}, {namedAxes(ctx, {1})})});
  Value taken;
  if (weight) {
    taken = d.op<GatherOp>({weight, safeTarget}, {ctx.namedI64("axis", 0)});
    loss = d.mul(loss, taken);
  }
  if (ignored) {
    Value zero = d.scalar(loss, 0);
    loss = d.select(ignored, zero, loss);
    taken = d.select(ignored, zero, taken ? taken : d.scalar(loss, 1));
  }
  if (d.failed() || reduction == "none")
    return loss;
  int64_t rank = targetType.getRank();
  Value sum = d.op<ReduceSumOp>({loss}, {namedAxes(ctx, allAxes(rank))});
  if (reduction == "sum")
    return sum;
  if (!taken)
    return d.op<ReduceMeanOp>({loss}, {namedAxes(ctx, allAxes(rank))});
  return d.div(sum, d.op<ReduceSumOp>({taken}, {namedAxes(ctx, allAxes(rank))}));
}

/// NegativeLogLikelihoodLoss (opsets 12, 13): input, target and an optional weight; reduction
/// "mean" by default, optional ignore_index.
LogicalResult translateNegativeLogLikelihoodLoss(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<std::string> reduction = lossReduction(ctx);
  if (failed(reduction))
    return failure();
  Decomposition d(ctx);
  return d.finish(
      negativeLogLikelihood(d, ctx.input(0), ctx.input(1), ctx.input(2), *reduction));
}

/// SoftmaxCrossEntropyLoss (opsets 12, 13): the negative log-likelihood of log_softmax(scores)
/// along the class axis 1; the optional second output is that log_softmax.
LogicalResult translateSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireUnusedOutputsFrom(2)))
    return failure();
  FailureOr<std::string> reduction = lossReduction(ctx);
  if (failed(reduction))
    return failure();
  Decomposition d(ctx);
  if (ctx.inputType(0).getRank() < 2) {
    ctx.emitError() << "expects scores of shape [N, C, d1, ...], got " << ctx.input(0).getType();
    return failure();
  }
  Value logProb = d.op<LogSoftmaxOp>({ctx.input(0)}, {ctx.namedI64("axis", 1)});
  Value loss = negativeLogLikelihood(d, logProb, ctx.input(1), ctx.input(2), *reduction);
  if (failed(d.finish(loss)))
    return failure();
  ctx.setOutput(1, logProb);
  return success();
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
// Integer quantization
//===----------------------------------------------------------------------===//

/// True for the 8-bit element types the quantized operators take.
bool isEightBit(Type type) { return type.isUnsignedInteger(8) || type.isSignlessInteger(8); }

/// Shapes the quantization parameter of a matrix product's left operand (`isLeft`, per row) or
/// right operand (per column) of rank `rank` to broadcast against it: a scalar or one element as
/// it is, a vector of the left operand's rows as [M, 1], one of the right operand's columns as
/// it is.
Value matmulParameter(Decomposition &d, Value parameter, bool isLeft, StringRef what) {
  if (!parameter)
    return parameter;
  auto type = llvm::cast<RankedTensorType>(parameter.getType());
  if (type.getRank() == 0 || (type.getRank() == 1 && type.getDimSize(0) == 1))
    return parameter;
  if (type.getRank() != 1) {
    d.context().emitError() << what << " must be a scalar or a vector, got " << type;
    return d.fail();
  }
  return isLeft ? d.reshape(parameter, {type.getDimSize(0) == ShapedType::kDynamic
                                            ? -1
                                            : type.getDimSize(0),
                                        1})
                : parameter;
}

/// `x - zeroPoint` in i32 (`x` alone without a zero point).
Value widenedDifference(Decomposition &d, Value x, Value zeroPoint) {
  Type i32 = IntegerType::get(d.context().context(), 32);
  Value wide = d.castTo(x, i32);
  return zeroPoint ? d.sub(wide, d.castTo(zeroPoint, i32)) : wide;
}

/// Reports an error unless the inputs at `indices` that are present are uint8 or int8.
LogicalResult requireEightBit(NodeContext &ctx, std::initializer_list<int> indices) {
  for (int index : indices)
    if (ctx.hasInput(index) && !isEightBit(elementTypeOf(ctx.input(index))))
      return ctx.emitError() << "input " << index << " must be uint8 or int8, got "
                             << ctx.input(index).getType();
  return success();
}

/// MatMulInteger (opset 10): (A - a_zero_point) x (B - b_zero_point) in int32; A's zero point is
/// per tensor or per row, B's per tensor or per column.
LogicalResult translateMatMulInteger(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(requireEightBit(ctx, {0, 1, 2, 3})))
    return failure();
  Decomposition d(ctx);
  Value aZero = matmulParameter(d, ctx.input(2), /*isLeft=*/true, "a_zero_point");
  Value bZero = matmulParameter(d, ctx.input(3), /*isLeft=*/false, "b_zero_point");
  Value a = widenedDifference(d, ctx.input(0), aZero);
  Value b = widenedDifference(d, ctx.input(1), bZero);
  return d.finish(d.op<MatmulOp>({a, b}));
}

/// Rounds `value` (halves to even), adds `zeroPoint` when present, saturates to `target`'s range
/// (uint8 or int8) and casts to it.
Value requantize(Decomposition &d, Value value, Value zeroPoint, Type target) {
  Value rounded = d.op<RoundOp>({value});
  if (zeroPoint)
    rounded = d.add(rounded, d.castTo(zeroPoint, elementTypeOf(rounded)));
  bool isUnsigned = target.isUnsignedInteger(8);
  Value low = d.scalar(rounded, isUnsigned ? 0 : -128);
  Value high = d.scalar(rounded, isUnsigned ? 255 : 127);
  return d.castTo(d.op<MinOp>({d.op<MaxOp>({rounded, low}), high}), target);
}

/// QLinearMatMul (opsets 10, 21): the product of the zero-point-shifted operands in int32, then
/// scaled by a_scale * b_scale / y_scale (formed in the scales' type) in f64, requantized to
/// y_zero_point's type. Scales and zero points of A are per tensor or per row, of B per tensor or
/// per column.
LogicalResult translateQLinearMatMul(NodeContext &ctx) {
  if (failed(ctx.requireInputs(8)) || failed(requireEightBit(ctx, {0, 2, 3, 5, 7})))
    return failure();
  Decomposition d(ctx);
  Value aScale = matmulParameter(d, ctx.input(1), /*isLeft=*/true, "a_scale");
  Value aZero = matmulParameter(d, ctx.input(2), /*isLeft=*/true, "a_zero_point");
  Value bScale = matmulParameter(d, ctx.input(4), /*isLeft=*/false, "b_scale");
  Value bZero = matmulParameter(d, ctx.input(5), /*isLeft=*/false, "b_zero_point");
  Value yScale = ctx.input(6), yZero = ctx.input(7);
  if (llvm::cast<RankedTensorType>(yScale.getType()).getNumElements() != 1 ||
      llvm::cast<RankedTensorType>(yZero.getType()).getNumElements() != 1)
    return ctx.emitError() << "y_scale and y_zero_point must be scalars, got "
                           << yScale.getType() << " and " << yZero.getType();
  Value product = d.op<MatmulOp>(
      {widenedDifference(d, ctx.input(0), aZero), widenedDifference(d, ctx.input(3), bZero)});
  Value multiplier = d.div(d.mul(aScale, bScale), yScale);
  Type f64 = Float64Type::get(ctx.context());
  Value scaled = d.mul(d.castTo(product, f64), d.castTo(multiplier, f64));
  return d.finish(requantize(d, scaled, yZero, elementTypeOf(yZero)));
}

/// DynamicQuantizeLinear (opset 11): uint8 quantization of a float tensor with its range widened
/// to include 0: y_scale = (max - min) / 255 (1 / 255 when the range is empty, as the reference
/// does), y_zero_point = saturate(round(-min / y_scale)), y = saturate(round(x / y_scale) +
/// y_zero_point).
LogicalResult translateDynamicQuantizeLinear(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  if (!elementTypeOf(x).isF32())
    return ctx.emitError() << "expects a float input, got " << x.getType();
  Decomposition d(ctx);
  SmallVector<int64_t> axes = allAxes(ctx.inputType(0).getRank());
  Value zero = d.scalar(x, 0);
  Value low = d.op<MinOp>({d.op<ReduceMinOp>({x}, {namedAxes(ctx, axes)}), zero});
  Value high = d.op<MaxOp>({d.op<ReduceMaxOp>({x}, {namedAxes(ctx, axes)}), zero});
  Value range = d.sub(high, low);
  Value empty = d.compare(ComparisonDirection::eq, range, zero);
  Value scale = d.div(d.select(empty, d.scalar(x, 1), range), d.scalar(x, 255));
  Type u8 = IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  Value zeroPoint = requantize(d, d.div(d.op<NegOp>({low}), scale), Value(), u8);
  Value y = requantize(d, d.div(x, scale), zeroPoint, u8);
  if (failed(d.finish(y)))
    return failure();
  ctx.setOutput(1, scale);
  ctx.setOutput(2, zeroPoint);
  return success();
}


//===----------------------------------------------------------------------===//
// Signal and spatial operators
//===----------------------------------------------------------------------===//

/// The one element of input `index` as a double when it is a constant; reports an error naming
/// `what` otherwise.
FailureOr<double> constantScalar(NodeContext &ctx, int index, StringRef what) {
  std::optional<DenseElementsAttr> elements = ctx.constantInput(index);
  if (!elements || elements->getNumElements() != 1)
    return ctx.emitError() << what << " (input " << index
                           << ") must be a single value known at import time";
  Attribute value = *elements->getValues<Attribute>().begin();
  if (auto floatValue = llvm::dyn_cast<FloatAttr>(value))
    return floatValue.getValueAsDouble();
  return static_cast<double>(llvm::cast<IntegerAttr>(value).getInt());
}

/// MelWeightMatrix (opset 17) of constant inputs: a graph.constant of shape
/// [dft_length / 2 + 1, num_mel_bins] computed as the spec's reference does. The num_mel_bins + 2
/// band edges are spaced evenly on the mel scale 2595 log10(1 + f / 700) (the edge mels in f32,
/// as the reference computes them from f32 inputs) and mapped to spectrogram bins as
/// floor((dft_length + 1) f / sample_rate); each band is a triangle rising from its left edge to
/// 1 at its centre and falling to its right edge.
LogicalResult translateMelWeightMatrix(NodeContext &ctx) {
  if (failed(ctx.requireInputs(5)))
    return failure();
  double inputs[5];
  const char *names[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                          "upper_edge_hertz"};
  for (int index = 0; index < 5; ++index) {
    FailureOr<double> value = constantScalar(ctx, index, names[index]);
    if (failed(value))
      return failure();
    inputs[index] = *value;
  }
  double sampleRate = inputs[2], lowerHertz = inputs[3], upperHertz = inputs[4];
  int64_t melBins = static_cast<int64_t>(inputs[0]), length = static_cast<int64_t>(inputs[1]);
  if (melBins <= 0 || length <= 0 || sampleRate <= 0)
    return ctx.emitError() << "num_mel_bins, dft_length and sample_rate must be positive";
  int64_t dataType = ctx.intAttr("output_datatype", onnx::TensorProto::FLOAT);
  Type element = convertElementType(*ctx.context(), static_cast<int32_t>(dataType));
  if (!element || element.isInteger(1))
    return ctx.emitError() << "output_datatype " << dataType << " is not supported";
  int64_t spectrogramBins = length / 2 + 1;

  auto toMel = [](double hertz) {
    float ratio = 1.0f + static_cast<float>(hertz) / 700.0f;
    return static_cast<double>(2595.0f * static_cast<float>(std::log10(ratio)));
  };
  double lowMel = toMel(lowerHertz), highMel = toMel(upperHertz);
  double melStep = static_cast<float>(highMel - lowMel) / static_cast<float>(melBins + 2);
  SmallVector<int64_t> edges;
  for (int64_t i = 0; i < melBins + 2; ++i) {
    double hertz = 700 * (std::pow(10.0, (i * melStep + lowMel) / 2595) - 1);
    edges.push_back(static_cast<int64_t>(std::floor((length + 1) * hertz / sampleRate)));
  }
  SmallVector<double> weights(spectrogramBins * melBins, 0.0);
  auto set = [&](int64_t bin, int64_t band, double value) {
    if (bin >= 0 && bin < spectrogramBins)
      weights[bin * melBins + band] = value;
  };
  for (int64_t band = 0; band < melBins; ++band) {
    int64_t left = edges[band], centre = edges[band + 1], right = edges[band + 2];
    if (centre == left)
      set(centre, band, 1);
    else
      for (int64_t j = left; j <= centre; ++j)
        set(j, band, static_cast<double>(j - left) / (centre - left));
    for (int64_t j = centre; j < right; ++j)
      set(j, band, static_cast<double>(right - j) / (right - centre));
  }
  SmallVector<Attribute> values;
  for (double weight : weights) {
    if (auto floatType = llvm::dyn_cast<FloatType>(element))
      values.push_back(FloatAttr::get(floatType, weight));
    else
      values.push_back(IntegerAttr::get(element, static_cast<int64_t>(weight)));
  }
  auto type = RankedTensorType::get({spectrogramBins, melBins}, element);
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type, values)));
  return success();
}

/// CenterCropPad (opset 18) to a constant shape along `axes` (every axis by default): one
/// graph.pad whose amounts are negative where the dimension shrinks. A dimension growing by d
/// gets floor(d / 2) zeros before it, one shrinking by d loses floor(d / 2) elements from its
/// start, as the reference does; the dimensions changed must be static.
LogicalResult translateCenterCropPad(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  SmallVector<int64_t> axes = allAxes(rank);
  if (std::optional<SmallVector<int64_t>> given = ctx.intsAttr("axes")) {
    axes.clear();
    for (int64_t axis : *given) {
      FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank, "axes");
      if (failed(normalized))
        return failure();
      if (llvm::is_contained(axes, *normalized))
        return ctx.emitError() << "axes repeats axis " << *normalized;
      axes.push_back(*normalized);
    }
  }
  if (shape->size() != axes.size())
    return ctx.emitError() << "shape has " << shape->size() << " entries for " << axes.size()
                           << " axes";
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [axis, target] : llvm::zip(axes, *shape)) {
    int64_t dim = type.getDimSize(axis);
    if (target < 0)
      return ctx.emitError() << "shape entries must be non-negative, got " << target;
    if (dim == ShapedType::kDynamic)
      return ctx.emitError() << "dimension " << axis << " of " << type
                             << " is dynamic; bind its shape with --shape";
    int64_t change = target - dim;
    low[axis] = change >= 0 ? change / 2 : -(-change / 2);
    high[axis] = change - low[axis];
  }
  Decomposition d(ctx);
  return d.finish(d.op<PadOp>({ctx.input(0)},
                              {ctx.namedArray("pad_low", low), ctx.namedArray("pad_high", high)}));
}

/// MaxUnpool (opsets 9, 11): X's elements written at their flat indices I into a zero tensor of
/// the output shape, as graph.scatter_elements on the flattened tensors reshaped back. The output
/// shape is output_shape when it is known at import time, else the output's declared static
/// shape, checked against output_shape at every run, when output_shape is given, else (in - 1) *
/// stride + kernel - pad_begin - pad_end per spatial dimension. X must have a static shape.
LogicalResult translateMaxUnpool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (!type.hasStaticShape() || ctx.inputType(1).getShape() != type.getShape())
    return ctx.emitError() << "expects X with a static shape and indices of the same shape, got "
                           << type << " and " << ctx.input(1).getType();
  int64_t rank = type.getRank(), spatial = rank - 2;
  std::optional<SmallVector<int64_t>> kernel = ctx.intsAttr("kernel_shape");
  if (!kernel || static_cast<int64_t>(kernel->size()) != spatial)
    return ctx.emitError() << "kernel_shape must have one entry per spatial dimension ("
                           << spatial << ")";
  SmallVector<int64_t> strides =
      ctx.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads = ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return ctx.emitError() << "strides and pads must have " << spatial << " and " << 2 * spatial
                           << " entries";
  SmallVector<int64_t> outputShape(type.getShape());
  if (ctx.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> shape =
        intsKnownOrChecked(ctx, 2, "output_shape", 0, [](RankedTensorType declared) {
          return FailureOr<SmallVector<int64_t>>(llvm::to_vector(declared.getShape()));
        });
    if (failed(shape))
      return failure();
    outputShape = *shape;
  } else {
    for (int64_t i = 0; i < spatial; ++i)
      outputShape[2 + i] = (type.getDimSize(2 + i) - 1) * strides[i] + (*kernel)[i] - pads[i] -
                           pads[spatial + i];
  }
  if (static_cast<int64_t>(outputShape.size()) != rank ||
      llvm::any_of(outputShape, [](int64_t dim) { return dim <= 0; }))
    return ctx.emitError() << "the output shape must have " << rank
                           << " positive dimensions";
  int64_t total = 1;
  for (int64_t dim : outputShape)
    total *= dim;
  Decomposition d(ctx);
  auto flatType = RankedTensorType::get({total}, type.getElementType());
  Value zeros = ctx.constant(DenseElementsAttr::get(
      flatType, ctx.builder().getZeroAttr(type.getElementType())));
  Value indices = d.reshape(ctx.input(1), {-1});
  Value updates = d.reshape(ctx.input(0), {-1});
  Value scattered =
      d.op<ScatterElementsOp>({zeros, indices, updates}, {ctx.namedI64("axis", 0)});
  return d.finish(d.reshape(scattered, outputShape));
}


/// AffineGrid (opset 20) of a constant size [N, C, H, W] (or [N, C, D, H, W]): the base grid of
/// normalized coordinates (x along W first, then y, then z, and a 1), a graph.constant of shape
/// [H * W, 3] (or [D * H * W, 4]), multiplied by each transposed theta ([N, 2, 3] or
/// [N, 3, 4]) and reshaped to [N, H, W, 2] (or [N, D, H, W, 3]). Coordinate i of a dimension of
/// length L is -1 + i * step with step 2 / (L - 1) under align_corners (-1 alone when L is 1),
/// and -1 + step / 2 + i * step with step 2 / L otherwise, as the reference computes them.
LogicalResult translateAffineGrid(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<SmallVector<int64_t>> size = ctx.constantInts(1, "size");
  if (failed(size))
    return failure();
  if (size->size() != 4 && size->size() != 5)
    return ctx.emitError() << "size must have 4 or 5 entries, got " << size->size();
  if (llvm::any_of(*size, [](int64_t dim) { return dim <= 0; }))
    return ctx.emitError() << "size entries must be positive";
  int64_t spatial = size->size() - 2;
  RankedTensorType thetaType = ctx.inputType(0);
  auto element = llvm::dyn_cast<FloatType>(thetaType.getElementType());
  if (!element || thetaType.getRank() != 3 || thetaType.getDimSize(1) != spatial ||
      thetaType.getDimSize(2) != spatial + 1)
    return ctx.emitError() << "theta must be a float tensor of shape [N, " << spatial << ", "
                           << spatial + 1 << "], got " << thetaType;
  bool alignCorners = ctx.intAttr("align_corners", 0) != 0;
  auto coordinate = [&](int64_t i, int64_t length) {
    if (alignCorners)
      return length == 1 ? -1.0 : -1.0 + i * (2.0 / (length - 1));
    double step = 2.0 / length;
    return -1.0 + step / 2 + i * step;
  };
  // Spatial sizes from the outermost (D or H) to W; the points are row-major over them.
  ArrayRef<int64_t> extents = ArrayRef<int64_t>(*size).drop_front(2);
  int64_t points = 1;
  for (int64_t extent : extents)
    points *= extent;
  SmallVector<Attribute> base;
  SmallVector<int64_t> position(spatial, 0);
  for (int64_t point = 0; point < points; ++point) {
    for (int64_t rest = point, d = spatial - 1; d >= 0; --d) {
      position[d] = rest % extents[d];
      rest /= extents[d];
    }
    for (int64_t d = spatial - 1; d >= 0; --d)
      base.push_back(FloatAttr::get(element, coordinate(position[d], extents[d])));
    base.push_back(FloatAttr::get(element, 1.0));
  }
  auto baseType = RankedTensorType::get({points, spatial + 1}, element);
  Value grid = ctx.constant(DenseElementsAttr::get(baseType, base));
  Decomposition d(ctx);
  Value thetaT = d.op<TransposeOp>({ctx.input(0)}, {ctx.namedArray("permutation", {0, 2, 1})});
  Value product = d.op<MatmulOp>({grid, thetaT});
  SmallVector<int64_t> shape{(*size)[0]};
  shape.append(extents.begin(), extents.end());
  shape.push_back(spatial);
  return d.finish(d.reshape(product, shape));
}

/// The Fourier transform of the rows of `real` and `imag` ([M, L], imag null for a real signal)
/// as products with constant [L, K] matrices: forward X_k = sum_n x_n e^(-2 pi i k n / N) over
/// the first min(L, N) samples (the rest of an N-point transform being zeros), for k < K; the
/// inverse with e^(+...) / N; and the one-sided inverse (irfft: the Hermitian spectrum's half in,
/// a real signal of N out) with the bins above 0 and below N/2 counted twice. Angles are
/// reduced modulo N in integers and the entries computed in double, then rounded to the
/// signal's type, in which the products run (the library calls' matmuls). Returns {Re, Im}
/// ([M, K]; Im null for the real output of irfft).
std::pair<Value, Value> fourierRows(NodeContext &ctx, Decomposition &d, Value real, Value imag,
                                    int64_t length, int64_t n, int64_t bins, bool inverse,
                                    bool realOutput, Type element) {
  auto matrix = [&](auto entry) {
    SmallVector<Attribute> values;
    for (int64_t row = 0; row < length; ++row)
      for (int64_t column = 0; column < bins; ++column)
        values.push_back(FloatAttr::get(element, entry(row, column)));
    return ctx.constant(
        DenseElementsAttr::get(RankedTensorType::get({length, bins}, element), values));
  };
  // Row r of the input (a sample, or a frequency for the inverse) and column c of the output.
  auto angle = [&](int64_t r, int64_t c) {
    return 2.0 * M_PI * static_cast<double>((r % n) * (c % n) % n) / static_cast<double>(n);
  };
  auto weight = [&](int64_t r) {
    // irfft: the Hermitian half; DC and (N even) Nyquist once, the others for their mirror too.
    if (!realOutput)
      return 1.0;
    return r == 0 || 2 * r == n ? 1.0 : 2.0;
  };
  double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  double sign = inverse ? 1.0 : -1.0;
  // The rows past the transform's length (or, for irfft, past N/2 + 1) contribute nothing.
  int64_t used = realOutput ? n / 2 + 1 : n;
  auto cosine = matrix([&](int64_t r, int64_t c) {
    return r < used ? scale * weight(r) * std::cos(angle(r, c)) : 0.0;
  });
  auto sine = matrix([&](int64_t r, int64_t c) {
    return r < used ? sign * scale * weight(r) * std::sin(angle(r, c)) : 0.0;
  });
  // (a + ib)(cos + i sign sin) = (a cos - b sign sin) + i (a sign sin + b cos).
  Value re = d.op<MatmulOp>({real, cosine});
  Value im = realOutput ? Value() : d.op<MatmulOp>({real, sine});
  if (imag) {
    re = d.sub(re, d.op<MatmulOp>({imag, sine}));
    if (!realOutput)
      im = d.add(im, d.op<MatmulOp>({imag, cosine}));
  }
  return {re, im};
}

/// The one positive integer of constant input `index` (dft_length, frame_step, frame_length), or
/// failure (reported, naming `what`).
FailureOr<int64_t> positiveConstant(NodeContext &ctx, int index, StringRef what) {
  FailureOr<SmallVector<int64_t>> given = ctx.constantInts(index, what);
  if (failed(given))
    return failure();
  if (given->size() != 1 || (*given)[0] < 1)
    return ctx.emitError() << what << " must be one positive value";
  return (*given)[0];
}

/// The DFT of `signal` ([.., L, .., c], c 1 for a real signal or 2) along `axis`, of length `n`
/// (the signal cut or zero-padded): the axis is moved last, the components split, the transform
/// done as products with constant matrices (fourierRows), and the result laid out back with its
/// components last. Its shape along the axis: n, n / 2 + 1 when one-sided, n for the real result
/// of an inverse one-sided transform.
Value dftAlong(NodeContext &ctx, Decomposition &d, Value signal, int64_t axis, int64_t n,
               bool inverse, bool onesided) {
  auto type = cast<RankedTensorType>(signal.getType());
  int64_t rank = type.getRank();
  int64_t components = type.getDimSize(rank - 1);
  int64_t length = type.getDimSize(axis);
  bool realOutput = inverse && onesided;
  int64_t bins = realOutput ? n : onesided ? n / 2 + 1 : n;
  // [.., L, .., c] -> [rest.., L, c] -> rows [M, L] per component.
  SmallVector<int64_t> permutation;
  for (int64_t i = 0; i < rank - 1; ++i)
    if (i != axis)
      permutation.push_back(i);
  permutation.append({axis, rank - 1});
  Value moved = d.transpose(signal, permutation);
  int64_t rows = type.getNumElements() / (length * components);
  auto component = [&](int64_t c) {
    SmallVector<int64_t> starts(rank, 0), limits, strides(rank, 1);
    for (int64_t i : permutation)
      limits.push_back(type.getDimSize(i));
    starts.back() = c;
    limits.back() = c + 1;
    Value slice =
        d.op<SliceOp>({moved}, {ctx.namedArray("starts", starts), ctx.namedArray("limits", limits),
                                ctx.namedArray("strides", strides)});
    return d.reshape(slice, {rows, length});
  };
  Value real = component(0);
  Value imag = components == 2 ? component(1) : Value();
  if (d.failed())
    return Value();
  auto [re, im] =
      fourierRows(ctx, d, real, imag, length, n, bins, inverse, realOutput, type.getElementType());
  // [M, K] per component -> [rest.., K, c] -> the axis back in place.
  SmallVector<int64_t> shape;
  for (int64_t i : ArrayRef<int64_t>(permutation).drop_back(2))
    shape.push_back(type.getDimSize(i));
  shape.append({bins, 1});
  Value result = d.reshape(re, shape);
  if (im)
    result = d.concat({result, d.reshape(im, shape)}, rank - 1);
  SmallVector<int64_t> inversePermutation(rank);
  for (int64_t i = 0; i < rank; ++i)
    inversePermutation[permutation[i]] = i;
  return d.transpose(result, inversePermutation);
}

/// DFT (opset 17: axis an attribute, default 1; opset 20: an optional scalar input, default
/// -2). An axis of the run takes the declared result shape: the transform is computed along
/// every axis that gives it, the run's axis selects one, and a check of every run fails it when
/// the axis is none of them.
LogicalResult translateDFT(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  Type element = type.getElementType();
  if (!type.hasStaticShape())
    return ctx.emitError() << "needs a static input shape, but input type is " << type
                           << " (bind it with --shape)";
  if (!element.isF32() && !element.isF64())
    return ctx.emitError() << "takes f32 and f64 signals, not " << element;
  int64_t rank = type.getRank();
  int64_t components = type.getDimSize(rank - 1);
  if (rank < 2 || (components != 1 && components != 2))
    return ctx.emitError() << "the signal's last dimension must be 1 (real) or 2 (complex), not "
                           << type;
  bool inverse = ctx.intAttr("inverse", 0) != 0;
  bool onesided = ctx.intAttr("onesided", 0) != 0;
  if (onesided && !inverse && components == 2)
    return ctx.emitError() << "a one-sided transform takes a real signal";
  std::optional<int64_t> givenLength;
  if (ctx.hasInput(1)) {
    FailureOr<int64_t> given = positiveConstant(ctx, 1, "dft_length");
    if (failed(given))
      return failure();
    givenLength = *given;
  }
  // The transform's length along `axis`: dft_length, else the signal's (twice the bins less
  // one for the real result of an inverse one-sided transform).
  auto lengthAlong = [&](int64_t axis) {
    int64_t length = type.getDimSize(axis);
    return givenLength ? *givenLength : inverse && onesided ? 2 * (length - 1) : length;
  };
  bool runTimeAxis = ctx.opset() >= 20 && ctx.hasInput(2) && !ctx.knownAtImport(2);
  if (runTimeAxis) {
    RankedTensorType declared = declaredResultType(ctx, 0, 2, "axis");
    if (!declared)
      return failure();
    auto candidates = masksOf(ctx, "axis (input 2)", rank, 1, [&](ArrayRef<int64_t> mask) {
      int64_t axis = llvm::find(mask, 1) - mask.begin();
      int64_t n = lengthAlong(axis);
      if (axis == rank - 1 || n < 1)
        return false;
      SmallVector<int64_t> shape(type.getShape());
      shape[axis] = inverse && onesided ? n : onesided ? n / 2 + 1 : n;
      shape[rank - 1] = inverse && onesided ? 1 : 2;
      return ArrayRef<int64_t>(shape) == declared.getShape();
    });
    Decomposition d(ctx);
    Value mask = axesMask(d, runTimeVector(d, 2, "axis"), rank);
    if (failed(candidates) || d.failed() ||
        failed(checkMaskIsOneOf(d, mask, *candidates, "axis (input 2)", declared)))
      return failure();
    // The last candidate is what the run gets when no earlier one matches (the check then
    // fails the run).
    Value result;
    for (const SmallVector<int64_t> &candidate : llvm::reverse(*candidates)) {
      int64_t axis = llvm::find(candidate, 1) - candidate.begin();
      Value transformed =
          dftAlong(ctx, d, ctx.input(0), axis, lengthAlong(axis), inverse, onesided);
      if (!transformed)
        return failure();
      result =
          result ? d.select(equalsConstant(d, mask, candidate), transformed, result) : transformed;
    }
    return d.finish(result);
  }
  int64_t axis = ctx.opset() >= 20 ? -2 : ctx.intAttr("axis", 1);
  if (ctx.opset() >= 20 && ctx.hasInput(2)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(2, "axis");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return ctx.emitError() << "axis must be a scalar";
    axis = (*given)[0];
  }
  if (axis < -rank || axis >= rank)
    return ctx.emitError() << "axis " << axis << " is outside the signal's rank " << rank;
  axis = axis < 0 ? axis + rank : axis;
  if (axis == rank - 1)
    return ctx.emitError() << "axis " << axis << " is the real/imaginary dimension";
  int64_t n = lengthAlong(axis);
  if (n < 1)
    return ctx.emitError() << "the transform's length is " << n;
  Decomposition d(ctx);
  Value result = dftAlong(ctx, d, ctx.input(0), axis, n, inverse, onesided);
  if (!result)
    return failure();
  return d.finish(result);
}

/// STFT (opset 17): signal [B, L, 1|2], frame_step, an optional window [W] and frame_length;
/// frame f holds samples [f * step, f * step + W), windowed, and its DFT of length W (one-sided
/// by default, for a real signal) is row f of the result [B, frames, bins, 2]. A frame_step of
/// the run takes the declared frame count, checked.
LogicalResult translateSTFT(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  Type element = type.getElementType();
  if (!type.hasStaticShape() || type.getRank() != 3)
    return ctx.emitError() << "needs a static signal [batch, length, 1 or 2], not " << type;
  if (!element.isF32() && !element.isF64())
    return ctx.emitError() << "takes f32 and f64 signals, not " << element;
  int64_t batch = type.getDimSize(0), length = type.getDimSize(1), components = type.getDimSize(2);
  if (components != 1 && components != 2)
    return ctx.emitError() << "the signal's last dimension must be 1 or 2, not " << components;
  // frame_step: a constant, or a value of the run when the output's frame count is declared.
  std::optional<int64_t> constantStep;
  if (ctx.knownAtImport(1)) {
    FailureOr<int64_t> step = positiveConstant(ctx, 1, "frame_step");
    if (failed(step))
      return failure();
    constantStep = *step;
  }
  int64_t frameLength = -1;
  if (ctx.hasInput(3)) {
    FailureOr<int64_t> given = positiveConstant(ctx, 3, "frame_length");
    if (failed(given))
      return failure();
    frameLength = *given;
  }
  if (ctx.hasInput(2)) {
    RankedTensorType windowType = ctx.inputType(2);
    if (windowType.getRank() != 1 || !windowType.hasStaticShape() ||
        (frameLength >= 0 && windowType.getDimSize(0) != frameLength))
      return ctx.emitError() << "window must be [frame_length], not " << windowType;
    frameLength = windowType.getDimSize(0);
  }
  if (frameLength < 1)
    return ctx.emitError() << "needs a window or a frame_length";
  if (frameLength > length)
    return ctx.emitError() << "frame_length " << frameLength << " exceeds the signal's length "
                           << length;
  bool onesided = ctx.intAttr("onesided", 1) != 0;
  if (onesided && components == 2)
    return ctx.emitError() << "a one-sided transform takes a real signal";
  int64_t bins = onesided ? frameLength / 2 + 1 : frameLength;
  Decomposition d(ctx);
  int64_t frames;
  Value runStep, holds;
  Type i64 = ctx.builder().getI64Type();
  if (constantStep) {
    frames = (length - frameLength) / *constantStep + 1;
  } else {
    RankedTensorType declared = declaredResultType(ctx, 0, 1, "frame_step");
    if (!declared)
      return failure();
    if (declared.getRank() != 4 || declared.getDimSize(1) < 1)
      return ctx.emitError() << "the output is declared as " << declared
                             << "; [batch, frames, bins, 2] is expected";
    if (runTimeLength(ctx, 1) != 1)
      return ctx.emitError() << "frame_step must be one value";
    frames = declared.getDimSize(1);
    runStep = elementOf(d, runTimeVector(d, 1, "frame_step"), 0);
    // A positive step that gives the declared frames: (length - W) / step + 1.
    holds = d.op<AndOp>(
        {d.compare(ComparisonDirection::ge, runStep, ctx.scalar(i64, 1)),
         d.compare(ComparisonDirection::eq,
                   d.add(d.div(ctx.scalar(i64, static_cast<double>(length - frameLength)),
                               d.op<MaxOp>({runStep, ctx.scalar(i64, 1)})),
                         ctx.scalar(i64, 1)),
                   ctx.scalar(i64, static_cast<double>(frames)))});
  }

  // Frames [B, frames, W] per component: slices for a constant step; for a step of the run, a
  // gather at f * step + k (clamped into the signal; the check fails a run that reaches past it).
  auto framesOf = [&](int64_t c) {
    Value framesFirst;
    if (constantStep) {
      SmallVector<Value> pieces;
      for (int64_t f = 0; f < frames; ++f)
        pieces.push_back(d.op<SliceOp>(
            {ctx.input(0)},
            {ctx.namedArray("starts", {0, f * *constantStep, c}),
             ctx.namedArray("limits", {batch, f * *constantStep + frameLength, c + 1}),
             ctx.namedArray("strides", {1, 1, 1})}));
      Value stacked = pieces.size() == 1 ? pieces[0] : d.concat(pieces, 2);
      // [B, W, frames] (frames side by side along the last axis) -> [B, frames, W].
      framesFirst = d.transpose(d.reshape(stacked, {batch, frameLength, frames}), {0, 2, 1});
    } else {
      Value component =
          d.reshape(d.op<SliceOp>({ctx.input(0)}, {ctx.namedArray("starts", {0, 0, c}),
                                                   ctx.namedArray("limits", {batch, length, c + 1}),
                                                   ctx.namedArray("strides", {1, 1, 1})}),
                    {batch, length});
      Value starts = d.mul(
          d.reshape(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, frames))), {frames, 1}),
          runStep);
      Value offsets = d.reshape(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, frameLength))),
                                {1, frameLength});
      framesFirst = d.op<GatherOp>({component, clampIndex(d, d.add(starts, offsets), length)},
                                   {ctx.namedI64("axis", 1)});
    }
    if (ctx.hasInput(2))
      framesFirst = d.mul(framesFirst, ctx.input(2));
    return d.reshape(framesFirst, {batch * frames, frameLength});
  };
  Value real = framesOf(0);
  Value imag = components == 2 ? framesOf(1) : Value();
  if (d.failed())
    return failure();
  auto [re, im] = fourierRows(ctx, d, real, imag, frameLength, frameLength, bins,
                              /*inverse=*/false, /*realOutput=*/false, element);
  Value result = d.concat(
      {d.reshape(re, {batch, frames, bins, 1}), d.reshape(im, {batch, frames, bins, 1})}, 3);
  if (holds)
    return finishChecked(d, result, holds,
                         "frame_step (input 1) does not give the declared " +
                             std::to_string(frames) + " frames");
  return d.finish(result);
}

//===----------------------------------------------------------------------===//
// Training optimizers (ai.onnx.preview.training): one update step, elementwise
//===----------------------------------------------------------------------===//

/// The tensors an optimizer updates: its inputs are R (the learning rate) and T (the step count),
/// then `lists` lists of n tensors each (X, G and the optimizer's states); it writes `lists - 1`
/// lists of n. Returns n, or failure (reported).
FailureOr<int> optimizedTensors(NodeContext &ctx, int lists) {
  int operands = ctx.numInputs() - 2;
  if (operands < lists || operands % lists != 0)
    return ctx.emitError() << "expects R, T and " << lists
                           << " lists of tensors of one length, got " << ctx.numInputs()
                           << " inputs";
  int n = operands / lists;
  for (int i = 0; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.emitError() << "input " << i << " is missing";
  return n;
}

/// norm_coefficient * X + G: the gradient of the L2 regularization added.
Value regularizedGradient(Decomposition &d, Value x, Value g, float norm) {
  return d.add(d.mul(d.scalar(x, norm), x), g);
}

/// Momentum: V' = alpha V + beta' G (beta' is 1 at the first step, T = 0), then X' = X - R V'
/// ("standard") or X' = X - R (G + alpha V') ("nesterov"); G carries the L2 term.
LogicalResult translateMomentum(NodeContext &ctx) {
  FailureOr<int> count = optimizedTensors(ctx, 3);
  if (failed(count))
    return failure();
  std::string mode = ctx.stringAttr("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return ctx.emitError() << "mode must be 'standard' or 'nesterov', got '" << mode << "'";
  for (const char *name : {"alpha", "beta", "norm_coefficient"})
    if (!ctx.attribute(name))
      return ctx.emitError() << "attribute '" << name << "' is required";
  float alpha = ctx.floatAttr("alpha", 0), beta = ctx.floatAttr("beta", 0);
  float norm = ctx.floatAttr("norm_coefficient", 0);
  Decomposition d(ctx);
  int n = *count;
  for (int i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i), v = ctx.input(2 + 2 * n + i);
    Value rate = d.castTo(ctx.input(0), elementTypeOf(x));
    Value step = ctx.input(1);
    Value gradient = regularizedGradient(d, x, g, norm);
    Value started = d.compare(ComparisonDirection::gt, step, d.scalar(step, 0));
    Value betaNow = d.select(started, d.scalar(x, beta), d.scalar(x, 1));
    Value velocity = d.add(d.mul(d.scalar(x, alpha), v), d.mul(betaNow, gradient));
    Value direction =
        mode == "standard" ? velocity : d.add(gradient, d.mul(d.scalar(x, alpha), velocity));
    Value updated = d.sub(x, d.mul(rate, direction));
    if (d.failed())
      return failure();
    ctx.setOutput(i, updated);
    ctx.setOutput(n + i, velocity);
  }
  return success();
}

/// Adagrad: r = R / (1 + T decay_factor), H' = H + G^2, X' = X - r G / (sqrt(H') + epsilon).
LogicalResult translateAdagrad(NodeContext &ctx) {
  FailureOr<int> count = optimizedTensors(ctx, 3);
  if (failed(count))
    return failure();
  float decay = ctx.floatAttr("decay_factor", 0), epsilon = ctx.floatAttr("epsilon", 1e-6f);
  float norm = ctx.floatAttr("norm_coefficient", 0);
  Decomposition d(ctx);
  int n = *count;
  for (int i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i), h = ctx.input(2 + 2 * n + i);
    Value step = d.castTo(ctx.input(1), elementTypeOf(x));
    Value rate = d.div(d.castTo(ctx.input(0), elementTypeOf(x)),
                       d.add(d.scalar(x, 1), d.mul(step, d.scalar(x, decay))));
    Value gradient = regularizedGradient(d, x, g, norm);
    Value accumulated = d.add(h, d.mul(gradient, gradient));
    Value scale = d.add(d.op<SqrtOp>({accumulated}), d.scalar(x, epsilon));
    Value updated = d.sub(x, d.div(d.mul(rate, gradient), scale));
    if (d.failed())
      return failure();
    ctx.setOutput(i, updated);
    ctx.setOutput(n + i, accumulated);
  }
  return success();
}

/// Adam: V' = alpha V + (1 - alpha) G, H' = beta H + (1 - beta) G^2, the rate corrected by
/// sqrt(1 - beta^T) / (1 - alpha^T) once T > 0, X' = (1 - norm_coefficient_post)
/// (X - r V' / (sqrt(H') + epsilon)).
LogicalResult translateAdam(NodeContext &ctx) {
  FailureOr<int> count = optimizedTensors(ctx, 4);
  if (failed(count))
    return failure();
  float alpha = ctx.floatAttr("alpha", 0.9f), beta = ctx.floatAttr("beta", 0.999f);
  float epsilon = ctx.floatAttr("epsilon", 1e-6f), norm = ctx.floatAttr("norm_coefficient", 0);
  float post = ctx.floatAttr("norm_coefficient_post", 0);
  Decomposition d(ctx);
  int n = *count;
  for (int i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i);
    Value v = ctx.input(2 + 2 * n + i), h = ctx.input(2 + 3 * n + i);
    Value rate = d.castTo(ctx.input(0), elementTypeOf(x));
    Value stepCount = ctx.input(1);
    Value step = d.castTo(stepCount, elementTypeOf(x));
    Value gradient = regularizedGradient(d, x, g, norm);
    Value velocity = d.add(d.mul(d.scalar(x, alpha), v), d.mul(d.scalar(x, 1 - alpha), gradient));
    Value second =
        d.add(d.mul(d.scalar(x, beta), h), d.mul(d.scalar(x, 1 - beta), d.mul(gradient, gradient)));
    Value scale = d.add(d.op<SqrtOp>({second}), d.scalar(x, epsilon));
    // beta^T and alpha^T as exp(T ln beta): T is a run-time value.
    auto power = [&](float base) {
      return d.op<ExpOp>({d.mul(step, d.scalar(x, std::log(static_cast<double>(base))))});
    };
    Value corrected = d.div(d.mul(rate, d.op<SqrtOp>({d.sub(d.scalar(x, 1), power(beta))})),
                            d.sub(d.scalar(x, 1), power(alpha)));
    Value started = d.compare(ComparisonDirection::gt, stepCount, d.scalar(stepCount, 0));
    Value adjusted = d.select(started, corrected, rate);
    Value updated = d.sub(x, d.mul(adjusted, d.div(velocity, scale)));
    Value final = d.mul(d.scalar(x, 1 - post), updated);
    if (d.failed())
      return failure();
    ctx.setOutput(i, final);
    ctx.setOutput(n + i, velocity);
    ctx.setOutput(2 * n + i, second);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ai.onnx.ml: Binarizer, ArrayFeatureExtractor
//===----------------------------------------------------------------------===//

/// Binarizer: 1 where X > threshold, else 0, in X's type.
LogicalResult translateBinarizer(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  Value above = d.compare(ComparisonDirection::gt, x, d.scalar(x, ctx.floatAttr("threshold", 0)));
  return d.finish(d.select(above, d.scalar(x, 1), d.scalar(x, 0)));
}

/// ArrayFeatureExtractor: the entries of the last axis at the indices Y; a 1-D X gives [1, K].
LogicalResult translateArrayFeatureExtractor(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Decomposition d(ctx);
  RankedTensorType type = ctx.inputType(0);
  Value indices = ctx.input(1);
  if (ctx.inputType(1).getRank() != 1)
    indices = d.reshape(indices, {ctx.inputType(1).getNumElements()});
  Value picked =
      d.op<GatherOp>({ctx.input(0), indices}, {ctx.namedI64("axis", type.getRank() - 1)});
  if (type.getRank() == 1)
    picked = d.reshape(picked, {1, ctx.inputType(1).getNumElements()});
  return d.finish(picked);
}

//===----------------------------------------------------------------------===//
// Det
//===----------------------------------------------------------------------===//

/// Det: the determinant of each [M, M] matrix in the last two axes, by its cofactor formula for
/// M of 1, 2 and 3 (the products of entries, as LAPACK's pivoted LU would round differently but
/// within float tolerance); larger M is refused, naming the node.
LogicalResult translateDet(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape() || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return ctx.emitError() << "expects a static [..., M, M] input, got " << type;
  int64_t m = type.getDimSize(rank - 1);
  if (m > 3)
    return ctx.emitError() << "determinants of " << m << "x" << m
                           << " matrices are not supported (at most 3x3)";
  Decomposition d(ctx);
  SmallVector<int64_t> batch(type.getShape().drop_back(2));
  auto entry = [&](int64_t i, int64_t j) {
    SmallVector<int64_t> starts(rank, 0), limits(type.getShape()), strides(rank, 1);
    starts[rank - 2] = i;
    limits[rank - 2] = i + 1;
    starts[rank - 1] = j;
    limits[rank - 1] = j + 1;
    Value slice = d.op<SliceOp>({ctx.input(0)},
                                {ctx.namedArray("starts", starts), ctx.namedArray("limits", limits),
                                 ctx.namedArray("strides", strides)});
    return d.reshape(slice, batch);
  };
  auto minor = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    return d.sub(d.mul(entry(r0, c0), entry(r1, c1)), d.mul(entry(r0, c1), entry(r1, c0)));
  };
  Value det;
  if (m == 1)
    det = entry(0, 0);
  else if (m == 2)
    det = minor(0, 1, 0, 1);
  else
    det = d.add(d.sub(d.mul(entry(0, 0), minor(1, 2, 1, 2)), d.mul(entry(0, 1), minor(1, 2, 0, 2))),
                d.mul(entry(0, 2), minor(1, 2, 0, 1)));
  return d.finish(det);
}

//===----------------------------------------------------------------------===//
// TfIdfVectorizer
//===----------------------------------------------------------------------===//

/// TfIdfVectorizer: counts, in each row of X ([C] or [B, C] integers), the n-grams of the pool
/// (pool_int64s, grouped by length from ngram_counts) of min_gram_length to max_gram_length items,
/// the items of an n-gram of two or more taken every k + 1 positions for each skip k up to
/// max_skip_count; then weighs them (TF: the count, IDF: the weight once present, TFIDF: count
/// times weight) into the output column ngram_indexes names. Built from static slices: for each
/// length and skip, the n windows of X compared with the pool's columns and combined, summed over
/// the positions; a one-hot matrix of ngram_indexes places them.
LogicalResult translateTfIdfVectorizer(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (!type.hasStaticShape() || type.getRank() < 1 || type.getRank() > 2 ||
      !type.getElementType().isInteger())
    return ctx.emitError() << "expects a static [C] or [B, C] integer input, got " << type;
  std::string mode = ctx.stringAttr("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.emitError() << "mode must be TF, IDF or TFIDF, got '" << mode << "'";
  if (ctx.attribute("pool_strings"))
    return ctx.emitError() << "pool_strings is not supported (string tensors)";
  int64_t minLength = ctx.intAttr("min_gram_length", 1),
          maxLength = ctx.intAttr("max_gram_length", 1);
  int64_t maxSkip = ctx.intAttr("max_skip_count", 0);
  SmallVector<int64_t> pool = ctx.intsAttr("pool_int64s").value_or(SmallVector<int64_t>());
  SmallVector<int64_t> starts = ctx.intsAttr("ngram_counts").value_or(SmallVector<int64_t>());
  SmallVector<int64_t> columns = ctx.intsAttr("ngram_indexes").value_or(SmallVector<int64_t>());
  std::optional<SmallVector<float>> weights = ctx.floatsAttr("weights");
  if (minLength < 1 || maxLength < minLength || maxSkip < 0 || starts.empty() ||
      static_cast<int64_t>(starts.size()) < maxLength)
    return ctx.emitError() << "inconsistent n-gram lengths, skip count or ngram_counts";
  // The pool's n-grams by length: [first index in pool, count].
  SmallVector<std::pair<int64_t, int64_t>> byLength;
  int64_t grams = 0;
  for (size_t n = 1; n <= starts.size(); ++n) {
    int64_t begin = starts[n - 1];
    int64_t end = n < starts.size() ? starts[n] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
        (end - begin) % static_cast<int64_t>(n) != 0)
      return ctx.emitError() << "ngram_counts does not split pool_int64s into whole n-grams";
    byLength.push_back({begin, (end - begin) / static_cast<int64_t>(n)});
    grams += (end - begin) / static_cast<int64_t>(n);
  }
  if (static_cast<int64_t>(columns.size()) != grams ||
      (weights && weights->size() != columns.size()))
    return ctx.emitError() << "ngram_indexes (and weights) must name one entry per n-gram ("
                           << grams << ")";
  int64_t width = 0;
  for (int64_t column : columns) {
    if (column < 0)
      return ctx.emitError() << "ngram_indexes must not be negative";
    width = std::max(width, column + 1);
  }

  Decomposition d(ctx);
  Type f32 = Float32Type::get(ctx.context());
  Type element = type.getElementType();
  int64_t rows = type.getRank() == 2 ? type.getDimSize(0) : 1;
  int64_t length = type.getShape().back();
  Value x = d.reshape(ctx.input(0), {rows, length, 1});
  SmallVector<Value> counts; // [rows, count of the length] per length, in pool order.
  for (int64_t n = 1; n <= static_cast<int64_t>(byLength.size()); ++n) {
    auto [begin, count] = byLength[n - 1];
    if (count == 0)
      continue;
    // Lengths outside [min_gram_length, max_gram_length], and windows longer than a row, count 0.
    Value total;
    bool counted = n >= minLength && n <= maxLength;
    for (int64_t skip = 0; counted && skip <= (n == 1 ? 0 : maxSkip); ++skip) {
      int64_t step = skip + 1, positions = length - (n - 1) * step;
      if (positions <= 0)
        break;
      Value match;
      for (int64_t j = 0; j < n; ++j) {
        Value window =
            d.op<SliceOp>({x}, {ctx.namedArray("starts", {0, j * step, 0}),
                                ctx.namedArray("limits", {rows, j * step + positions, 1}),
                                ctx.namedArray("strides", {1, 1, 1})});
        SmallVector<APInt> items;
        for (int64_t g = 0; g < count; ++g)
          items.push_back(APInt(element.getIntOrFloatBitWidth(),
                                static_cast<uint64_t>(pool[begin + g * n + j]), true));
        Value wanted = ctx.constant(
            DenseElementsAttr::get(RankedTensorType::get({1, 1, count}, element), items));
        Value equal = d.compare(ComparisonDirection::eq, window, wanted);
        match = match ? d.op<AndOp>({match, equal}) : equal;
      }
      Value found = d.op<ReduceSumOp>({d.castTo(match, f32)}, {namedAxes(ctx, {1})});
      total = total ? d.add(total, found) : found;
    }
    if (!total)
      total = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({rows, count}, f32), 0.0f));
    counts.push_back(total);
  }
  Value perGram = counts.size() == 1 ? counts.front() : d.concat(counts, 1);
  if (mode != "TF") {
    SmallVector<float> scale = weights ? *weights : SmallVector<float>(grams, 1.0f);
    Value weight = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({1, grams}, f32),
                                                       llvm::ArrayRef<float>(scale)));
    if (mode == "IDF")
      perGram = d.castTo(d.compare(ComparisonDirection::gt, perGram, d.scalar(perGram, 0)), f32);
    perGram = d.mul(perGram, weight);
  }
  SmallVector<float> placement(grams * width, 0.0f);
  for (int64_t g = 0; g < grams; ++g)
    placement[g * width + columns[g]] = 1.0f;
  Value place = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({grams, width}, f32),
                                                    llvm::ArrayRef<float>(placement)));
  Value result = d.op<MatmulOp>({perGram, place});
  if (type.getRank() == 1)
    result = d.reshape(result, {width});
  return d.finish(result);
}

} // namespace

void registerExtraOps(OpTable &table) {
  table.add("", "BitwiseAnd", 18, translateBitwiseBinary<AndOp>);
  table.add("", "BitwiseOr", 18, translateBitwiseBinary<OrOp>);
  table.add("", "BitwiseXor", 18, translateBitwiseBinary<XorOp>);
  table.add("", "BitwiseNot", 18, translateBitwiseNot);

  table.add("", "NegativeLogLikelihoodLoss", {12, 13}, translateNegativeLogLikelihoodLoss);
  table.add("", "SoftmaxCrossEntropyLoss", {12, 13}, translateSoftmaxCrossEntropyLoss);

  table.add("", "GroupNormalization", {18, 21}, translateGroupNormalization);

  table.add("", "MatMulInteger", 10, translateMatMulInteger);
  table.add("", "QLinearMatMul", {10, 21}, translateQLinearMatMul);
  table.add("", "DynamicQuantizeLinear", 11, translateDynamicQuantizeLinear);

  table.add("", "MelWeightMatrix", 17, translateMelWeightMatrix);
  table.add("", "CenterCropPad", 18, translateCenterCropPad);
  table.add("", "MaxUnpool", {9, 11}, translateMaxUnpool);
  table.add("", "AffineGrid", 20, translateAffineGrid);
  table.add("", "DFT", {17, 20}, translateDFT);
  table.add("", "STFT", 17, translateSTFT);
  table.add("", "Det", {11, 22}, translateDet);

  table.add("ai.onnx.preview.training", "Momentum", 1, translateMomentum);
  table.add("ai.onnx.preview.training", "Adagrad", 1, translateAdagrad);
  table.add("ai.onnx.preview.training", "Adam", 1, translateAdam);

  table.add("", "TfIdfVectorizer", 9, translateTfIdfVectorizer);

  table.add("ai.onnx.ml", "Binarizer", 1, translateBinarizer);
  table.add("ai.onnx.ml", "ArrayFeatureExtractor", 1, translateArrayFeatureExtractor);
}

} // namespace kiln::onnx_frontend
