//===- Math.cpp - ONNX math functions, predicates, quantization, windows ---===//
//
// Trigonometric and hyperbolic functions, IsNaN and IsInf, BitShift and the Bitwise operators,
// the Celu, Mish and Shrink activations, QuantizeLinear and DequantizeLinear, the spectral
// windows, and Det. Functions without a graph op of their own are decomposed into elementwise
// graph ops in forms that stay accurate near the ends of their domains: acos through a half-angle arctangent, asin and acosh with the
// square root factored so nothing squares a large operand, sinh by its series near zero, and the
// inverse hyperbolic functions through an accurate log(1 + t) so that small arguments keep their
// relative precision.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/TensorData.h"
#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

//===----------------------------------------------------------------------===//
// Elementwise functions
//===----------------------------------------------------------------------===//

/// Builds `f(x)` from graph ops; returns null after a failure.
using UnaryDecomposition = Value (*)(Decomposition &, Value);

template <UnaryDecomposition Fn>
LogicalResult translateDecomposedUnary(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  return d.finish(Fn(d, ctx.input(0)));
}

/// asin(x) = atan(x / sqrt((1 - x) * (1 + x))); at |x| = 1 the quotient is infinite and the
/// arctangent gives the exact +-pi/2, and beyond it the square root gives NaN.
Value asin(Decomposition &d, Value x) {
  Value one = d.scalar(x, 1);
  Value radicand = d.mul(d.sub(one, x), d.add(one, x));
  return d.op<AtanOp>({d.div(x, d.op<SqrtOp>({radicand}))});
}

/// acos(x) = 2 * atan(sqrt((1 - x) / (1 + x))), accurate near both ends (no pi/2 - asin(x)
/// cancellation); x = -1 gives 2 * atan(inf) = pi.
Value acos(Decomposition &d, Value x) {
  Value one = d.scalar(x, 1);
  Value ratio = d.div(d.sub(one, x), d.add(one, x));
  return d.mul(d.scalar(x, 2), d.op<AtanOp>({d.op<SqrtOp>({ratio})}));
}

Value atan(Decomposition &d, Value x) { return d.op<AtanOp>({x}); }

/// tan(x) = sin(x) / cos(x).
Value tan(Decomposition &d, Value x) { return d.div(d.op<SinOp>({x}), d.op<CosOp>({x})); }

/// The floating-point element type of `x`, or null after reporting that it is not one.
FloatType floatElementOf(Decomposition &d, Value x) {
  if (!x) {
    d.fail();
    return {};
  }
  auto element = llvm::dyn_cast<FloatType>(elementTypeOf(x));
  if (!element) {
    d.context().emitError() << "expects a floating-point input, got " << x.getType();
    d.fail();
  }
  return element;
}

/// cosh(x) = (exp(x) + exp(-x)) / 2.
Value cosh(Decomposition &d, Value x) {
  Value sum = d.add(d.op<ExpOp>({x}), d.op<ExpOp>({d.op<NegOp>({x})}));
  return d.mul(sum, d.scalar(x, 0.5));
}

/// sinh(x) = (exp(x) - exp(-x)) / 2, which cancels near 0; there, below (5040 eps)^(1/6) where
/// the next term is under the type's epsilon, it is the series x (1 + x^2 (1/6 + x^2 / 120)).
Value sinh(Decomposition &d, Value x) {
  FloatType element = floatElementOf(d, x);
  if (!element)
    return d.fail();
  Value difference = d.sub(d.op<ExpOp>({x}), d.op<ExpOp>({d.op<NegOp>({x})}));
  Value exponential = d.mul(difference, d.scalar(x, 0.5));
  Value square = d.mul(x, x);
  Value inner = d.add(d.scalar(x, 1.0 / 6.0), d.div(square, d.scalar(x, 120)));
  Value series = d.mul(x, d.add(d.scalar(x, 1), d.mul(square, inner)));
  double epsilon = std::ldexp(1.0, 1 - static_cast<int>(element.getFPMantissaWidth()));
  double threshold = std::pow(5040 * epsilon, 1.0 / 6.0);
  Value small = d.compare(ComparisonDirection::lt, d.op<AbsOp>({x}), d.scalar(x, threshold));
  return d.select(small, series, exponential);
}

/// log(1 + t), accurate for small t (Goldberg): log(u) * t / (u - 1) with u = 1 + t, since the
/// rounding of u cancels in the quotient; t itself where u rounds to 1, and u where it is
/// infinite (the quotient would be NaN).
Value log1p(Decomposition &d, Value t) {
  Value one = d.scalar(t, 1);
  Value u = d.add(one, t);
  Value general = d.mul(d.op<LogOp>({u}), d.div(t, d.sub(u, one)));
  Value tiny = d.compare(ComparisonDirection::eq, u, one);
  return d.select(tiny, t, d.select(d.op<IsInfOp>({u}), u, general));
}

/// exp(y) - 1, accurate for small y (Kahan): (u - 1) * y / log(u) with u = exp(y); y itself where
/// u rounds to 1, and u - 1 where it is -1 or infinite (the quotient would be 0 / -inf or NaN).
Value expm1(Decomposition &d, Value y) {
  Value one = d.scalar(y, 1);
  Value u = d.op<ExpOp>({y});
  Value shifted = d.sub(u, one);
  Value general = d.div(d.mul(shifted, y), d.op<LogOp>({u}));
  Value tiny = d.compare(ComparisonDirection::eq, u, one);
  Value saturated = d.op<OrOp>({d.compare(ComparisonDirection::eq, shifted, d.scalar(y, -1)),
                               d.op<IsInfOp>({u})});
  return d.select(tiny, y, d.select(saturated, shifted, general));
}

/// asinh(x) = sign(x) * log1p(a + a^2 / (1 + sqrt(1 + a^2))), a = |x|: odd by construction and
/// accurate near 0. Where a^2 + 1 rounds to a^2 (a above 2^(p/2) for p mantissa bits) it is
/// log(a) + log(2), which does not overflow a^2.
Value asinh(Decomposition &d, Value x) {
  FloatType element = floatElementOf(d, x);
  if (!element)
    return d.fail();
  Value a = d.op<AbsOp>({x});
  Value one = d.scalar(x, 1);
  Value square = d.mul(a, a);
  Value root = d.op<SqrtOp>({d.add(one, square)});
  Value moderate = log1p(d, d.add(a, d.div(square, d.add(one, root))));
  Value large = d.add(d.op<LogOp>({a}), d.scalar(x, M_LN2));
  double threshold = std::ldexp(1.0, static_cast<int>(element.getFPMantissaWidth()) / 2);
  Value isLarge = d.compare(ComparisonDirection::gt, a, d.scalar(x, threshold));
  return d.mul(d.op<SignOp>({x}), d.select(isLarge, large, moderate));
}

/// acosh(x) = log1p((x - 1) + sqrt(x - 1) * sqrt(x + 1)): x - 1 is exact near 1, where the result
/// is small, the factored root does not overflow for large x, and below 1 it is NaN.
Value acosh(Decomposition &d, Value x) {
  Value one = d.scalar(x, 1);
  Value below = d.sub(x, one);
  Value root = d.mul(d.op<SqrtOp>({below}), d.op<SqrtOp>({d.add(x, one)}));
  return log1p(d, d.add(below, root));
}

/// atanh(x) = sign(x) * log1p(2a / (1 - a)) / 2, a = |x|: accurate near 0, and with a
/// non-negative argument the log1p does not cancel near -1; |x| = 1 gives an infinity.
Value atanh(Decomposition &d, Value x) {
  Value a = d.op<AbsOp>({x});
  Value ratio = d.div(d.add(a, a), d.sub(d.scalar(x, 1), a));
  Value magnitude = d.mul(log1p(d, ratio), d.scalar(x, 0.5));
  return d.mul(d.op<SignOp>({x}), magnitude);
}

/// Mish (opset 18): x * tanh(softplus(x)), softplus(x) = log1p(exp(x)), which keeps the tiny
/// values of very negative x; a large x overflows the softplus to infinity, whose tanh is 1.
Value mish(Decomposition &d, Value x) {
  return d.mul(x, d.op<TanhOp>({log1p(d, d.op<ExpOp>({x}))}));
}

//===----------------------------------------------------------------------===//
// Activations with attributes
//===----------------------------------------------------------------------===//

/// Celu (opset 12): max(0, x) + min(0, alpha * expm1(x / alpha)), alpha = 1 by default.
LogicalResult translateCelu(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  double alpha = ctx.floatAttr("alpha", 1.0f);
  if (alpha == 0)
    return ctx.emitError() << "alpha must be non-zero";
  Value zero = d.scalar(x, 0);
  Value scaled = expm1(d, d.div(x, d.scalar(x, alpha)));
  Value negative = d.op<MinOp>({zero, d.mul(scaled, d.scalar(x, alpha))});
  return d.finish(d.add(d.op<MaxOp>({zero, x}), negative));
}

/// Shrink (opset 9): x + bias below -lambd, x - bias above lambd, 0 in between (lambd = 0.5,
/// bias = 0 by default). Integer inputs take the attributes converted to their type.
LogicalResult translateShrink(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  double lambd = ctx.floatAttr("lambd", 0.5f), bias = ctx.floatAttr("bias", 0.0f);
  Value below = d.compare(ComparisonDirection::lt, x, d.scalar(x, -lambd));
  Value above = d.compare(ComparisonDirection::gt, x, d.scalar(x, lambd));
  Value biasValue = d.scalar(x, bias);
  Value middle = d.select(above, d.sub(x, biasValue), d.scalar(x, 0));
  return d.finish(d.select(below, d.add(x, biasValue), middle));
}

//===----------------------------------------------------------------------===//
// Predicates
//===----------------------------------------------------------------------===//

LogicalResult translateIsNaN(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  return d.finish(d.op<IsNanOp>({ctx.input(0)}));
}

/// IsInf (opset 10): detect_negative and detect_positive (both 1 by default) choose which
/// infinities count. One sign alone is an equality test; neither is an all-false comparison with
/// NaN (ordered comparisons with NaN are false).
LogicalResult translateIsInf(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  bool negative = ctx.intAttr("detect_negative", 1) != 0;
  bool positive = ctx.intAttr("detect_positive", 1) != 0;
  if (negative && positive)
    return d.finish(d.op<IsInfOp>({x}));
  double infinity = std::numeric_limits<double>::infinity();
  double target = positive ? infinity : negative ? -infinity : std::nan("");
  return d.finish(d.compare(ComparisonDirection::eq, x, d.scalar(x, target)));
}

//===----------------------------------------------------------------------===//
// BitShift
//===----------------------------------------------------------------------===//

/// BitShift: opset 11 on unsigned integers (uint8, uint16, uint32, uint64), opset 28 on signed
/// ones too, whose right shift is arithmetic. Shift amounts outside
/// [0, bits) give what the fill alone gives, as graph.shift_left and graph.shift_right define.
LogicalResult translateBitShift(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value x = ctx.input(0), y = ctx.input(1);
  Type element = elementTypeOf(x);
  bool isUnsigned = element.isUnsignedInteger();
  bool isSigned = element.isSignlessInteger() && !element.isInteger(1);
  if (!isUnsigned && !(isSigned && ctx.opset() >= 28))
    return ctx.emitError() << "only unsigned operands"
                           << (ctx.opset() >= 28 ? " and signed integers are" : " are")
                           << " supported, got " << x.getType()
                           << (isSigned ? " (signed operands need BitShift-28)" : "");
  std::string direction = ctx.stringAttr("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return ctx.emitError() << "direction must be 'LEFT' or 'RIGHT', got '" << direction << "'";
  FailureOr<Value> shifted = direction == "LEFT" ? ctx.build<ShiftLeftOp>({x, y})
                                                 : ctx.build<ShiftRightOp>({x, y});
  if (failed(shifted))
    return failure();
  ctx.setOutput(0, *shifted);
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// Shapes a quantization parameter to broadcast against an input of `rank`: a scalar or
/// one-element parameter as it is (per tensor); from opset 13 a vector along `axis` (per axis)
/// as `[D, 1, ..., 1]` with a 1 for each dimension after the axis.
Value broadcastQuantizationParameter(Decomposition &d, Value parameter, int64_t rank) {
  NodeContext &ctx = d.context();
  if (!parameter)
    return parameter;
  auto type = llvm::cast<RankedTensorType>(parameter.getType());
  if (type.getRank() == 0 || (type.getRank() == 1 && type.getDimSize(0) == 1))
    return parameter;
  if (ctx.opset() < 13 || type.getRank() != 1) {
    ctx.emitError() << "the scale and zero point must be scalars"
                    << (ctx.opset() < 13 ? "" : " or vectors along 'axis'") << ", got "
                    << parameter.getType();
    return d.fail();
  }
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", 1), rank);
  if (failed(axis))
    return d.fail();
  SmallVector<int64_t> shape{type.getDimSize(0) == ShapedType::kDynamic ? -1 : type.getDimSize(0)};
  shape.append(rank - *axis - 1, 1);
  return d.reshape(parameter, shape);
}

/// Blocked quantization (opset 21's block_size B): a parameter of the input's rank whose `axis`
/// dimension is ceil(D / B) holds one value per block of B elements along the axis; it is
/// repeated B times along the axis (a new axis after it, concatenated B times, merged back) and
/// cut to D when the last block is partial.
Value expandBlockedParameter(Decomposition &d, Value parameter, RankedTensorType inputType,
                             int64_t block) {
  NodeContext &ctx = d.context();
  if (!parameter)
    return parameter;
  auto type = llvm::cast<RankedTensorType>(parameter.getType());
  int64_t rank = inputType.getRank();
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", 1), rank);
  if (failed(axis))
    return d.fail();
  if (block < 1 || type.getRank() != rank || !type.hasStaticShape() ||
      !inputType.hasStaticShape()) {
    ctx.emitError() << "blocked quantization needs a block_size above 0 and static parameters of "
                    << "the input's rank, got block_size " << block << " and " << type;
    return d.fail();
  }
  int64_t size = inputType.getDimSize(*axis), blocks = (size + block - 1) / block;
  for (int64_t i = 0; i < rank; ++i) {
    if (type.getDimSize(i) != (i == *axis ? blocks : inputType.getDimSize(i))) {
      ctx.emitError() << "the scale and zero point of blocked quantization must be "
                      << RankedTensorType::get(
                             [&] {
                               SmallVector<int64_t> shape(inputType.getShape());
                               shape[*axis] = blocks;
                               return shape;
                             }(),
                             type.getElementType())
                      << " for block_size " << block << ", got " << type;
      return d.fail();
    }
  }
  if (block == 1)
    return parameter;
  Value repeated = d.unsqueeze(parameter, {*axis + 1});
  repeated = d.concat(SmallVector<Value>(block, repeated), *axis + 1);
  SmallVector<int64_t> merged(type.getShape());
  merged[*axis] = blocks * block;
  repeated = d.reshape(repeated, merged);
  if (blocks * block == size)
    return repeated;
  SmallVector<int64_t> starts(rank, 0), ends(inputType.getShape()), steps(rank, 1);
  return d.op<SliceOp>({repeated},
                       {ctx.namedArray("starts", starts), ctx.namedArray("limits", ends),
                        ctx.namedArray("strides", steps)});
}

/// A quantization parameter shaped to broadcast against input `x`: per tensor, per axis, or
/// (with a block_size from opset 21) per block.
Value quantizationParameter(Decomposition &d, Value parameter, Value x) {
  NodeContext &ctx = d.context();
  auto inputType = llvm::cast<RankedTensorType>(x.getType());
  if (int64_t block = ctx.opset() >= 21 ? ctx.intAttr("block_size", 0) : 0)
    return expandBlockedParameter(d, parameter, inputType, block);
  return broadcastQuantizationParameter(d, parameter, inputType.getRank());
}

/// QuantizeLinear (opsets 10, 13, 19, 21, 23, 24, 25 and 28; the later ones add element types):
/// saturate(round(x / scale) + zero_point), rounding halves to even, into the zero point's type
/// (opset 21's output_dtype, or uint8, without one), for 8- and 16-bit integers. Opset 13 adds
/// per-axis parameters, 21 blocked ones (block_size); the division is in the scale's type, or in
/// `precision`'s when given.
LogicalResult translateQuantizeLinear(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  Value scale = quantizationParameter(d, ctx.input(1), x);
  Value zeroPoint = quantizationParameter(d, ctx.input(2), x);
  // The output type as declared: output_dtype, else the zero point's ONNX type.
  int64_t outputType = ctx.opset() >= 21 ? ctx.intAttr("output_dtype", 0) : 0;
  int32_t declared = outputType ? static_cast<int32_t>(outputType) : ctx.declaredElementType(2);
  if (declared == kFloat4E2M1) {
    // FLOAT4E2M1 (codes in a uint8): x / scale (+ the zero point, 0 by the specification) rounded
    // and saturated by the encoding, as the reference's cast does; `saturate` changes nothing for a
    // type without infinities.
    if (d.failed())
      return failure();
    Type compute = elementTypeOf(scale);
    Value quotient = d.div(d.castTo(x, compute), scale);
    if (zeroPoint)
      quotient = d.add(quotient, d.castTo(decodeFloat4E2M1(d, zeroPoint), compute));
    return d.finish(encodeFloat4E2M1(d, quotient));
  }
  Type target = ctx.hasInput(2) ? elementTypeOf(ctx.input(2))
                                : IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  if (outputType) {
    Type requested = convertElementType(*ctx.context(), static_cast<int32_t>(outputType));
    if (!requested || (ctx.hasInput(2) && requested != target))
      return ctx.emitError() << "output_dtype " << outputType
                             << " is unsupported or differs from the zero point's type";
    target = requested;
  }
  unsigned width = target.isInteger() ? target.getIntOrFloatBitWidth() : 0;
  // A 4- or 2-bit zero point (or output_dtype) is held in a byte: the range is the narrow one.
  if (std::optional<SubByteInteger> narrow = subByteInteger(declared))
    width = narrow->bits;
  auto float8 = llvm::dyn_cast<FloatType>(target);
  if (float8 && (float8.getWidth() != 8 || llvm::isa<Float8E8M0FNUType>(float8)))
    float8 = nullptr;
  if (!float8 &&
      ((width != 2 && width != 4 && width != 8 && width != 16) || target.isSignedInteger()))
    return ctx.emitError() << "quantizing to " << target
                           << " is not supported (uint8, int8, uint16, int16, the 4- and 2-bit "
                              "integers or float8)";
  if (d.failed())
    return failure();
  Type compute = elementTypeOf(scale);
  if (int64_t precision = ctx.intAttr("precision", 0)) {
    compute = convertElementType(*ctx.context(), static_cast<int32_t>(precision));
    if (!compute || !llvm::isa<FloatType>(compute))
      return ctx.emitError() << "precision " << precision << " is not a floating-point type";
  }
  if (float8) {
    // Float8: x / scale (+ the zero point, which the specification requires to be 0) rounded by
    // the cast itself, clamped to the largest finite value first unless saturate = 0.
    Value quotient = d.div(d.castTo(x, compute), d.castTo(scale, compute));
    if (zeroPoint)
      quotient = d.add(quotient, d.castTo(zeroPoint, compute));
    if (ctx.intAttr("saturate", 1) == 1) {
      double largest = APFloat::getLargest(float8.getFloatSemantics()).convertToDouble();
      quotient = d.op<MaxOp>(
          {d.op<MinOp>({quotient, d.scalar(quotient, largest)}), d.scalar(quotient, -largest)});
    }
    return d.finish(d.castTo(quotient, target));
  }
  Value scaled = d.op<RoundOp>({d.div(d.castTo(x, compute), d.castTo(scale, compute))});
  if (zeroPoint)
    scaled = d.add(scaled, d.castTo(zeroPoint, compute));
  bool isUnsigned = target.isUnsignedInteger();
  double range = static_cast<double>(1ull << width);
  Value low = d.scalar(scaled, isUnsigned ? 0 : -range / 2);
  Value high = d.scalar(scaled, isUnsigned ? range - 1 : range / 2 - 1);
  Value clamped = d.op<MinOp>({d.op<MaxOp>({scaled, low}), high});
  return d.finish(d.castTo(clamped, target));
}

/// DequantizeLinear (opsets 10, 13, 19, 21, 23, 24, 25 and 28; the later ones add input and
/// scale types): (x - zero_point) * scale in the scale's type, cast to `output_dtype` when given.
/// Opset 13 adds per-axis parameters, 21 blocked ones (block_size).
LogicalResult translateDequantizeLinear(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Decomposition d(ctx);
  Value scale = quantizationParameter(d, ctx.input(1), ctx.input(0));
  Value zeroPoint = quantizationParameter(d, ctx.input(2), ctx.input(0));
  if (d.failed())
    return failure();
  Type compute = elementTypeOf(scale);
  // FLOAT4E2M1 codes (and their zero point) decode to their values first.
  bool float4 = ctx.declaredElementType(0) == kFloat4E2M1;
  Value x = d.castTo(float4 ? decodeFloat4E2M1(d, ctx.input(0)) : ctx.input(0), compute);
  if (zeroPoint)
    x = d.sub(x, d.castTo(float4 ? decodeFloat4E2M1(d, zeroPoint) : zeroPoint, compute));
  Value result = d.mul(x, scale);
  if (int64_t outputType = ctx.opset() >= 23 ? ctx.intAttr("output_dtype", 0) : 0) {
    Type requested = convertElementType(*ctx.context(), static_cast<int32_t>(outputType));
    if (!requested || !llvm::isa<FloatType>(requested))
      return ctx.emitError() << "output_dtype " << outputType << " is not a floating-point type";
    result = d.castTo(result, requested);
  }
  return d.finish(result);
}

//===----------------------------------------------------------------------===//
// Spectral windows
//===----------------------------------------------------------------------===//

/// A generalized cosine window a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
struct CosineWindow {
  double a0, a1, a2;
};

constexpr CosineWindow kHann{0.5, 0.5, 0.0};
constexpr CosineWindow kHamming{25.0 / 46.0, 21.0 / 46.0, 0.0};
constexpr CosineWindow kBlackman{0.42, 0.5, 0.08};

/// HannWindow, HammingWindow and BlackmanWindow (opset 17) of a constant size: a graph.constant
/// of `output_datatype` (float by default). N is the size when `periodic` (the default) and the
/// size minus 1 otherwise.
template <const CosineWindow &Window>
LogicalResult translateWindow(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<SmallVector<int64_t>> size =
      intsKnownOrChecked(ctx, 0, "size", 0, [&](RankedTensorType declared) {
        if (declared.getRank() != 1)
          return FailureOr<SmallVector<int64_t>>(ctx.emitError()
                                                 << "the output is declared with rank "
                                                 << declared.getRank() << ", not 1");
        return FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>{declared.getDimSize(0)});
      });
  if (failed(size))
    return failure();
  if (size->size() != 1 || (*size)[0] < 0)
    return ctx.emitError() << "size must be one non-negative integer";
  int64_t length = (*size)[0];
  int64_t dataType = ctx.intAttr("output_datatype", onnx::TensorProto::FLOAT);
  Type element = convertElementType(*ctx.context(), static_cast<int32_t>(dataType));
  if (!element || element.isInteger(1))
    return ctx.emitError() << "output_datatype " << dataType << " is not supported";
  double period = ctx.intAttr("periodic", 1) != 0 ? length : length - 1;
  SmallVector<Attribute> values;
  for (int64_t n = 0; n < length; ++n) {
    double phase = period > 0 ? 2 * M_PI * n / period : 0;
    double value = Window.a0 - Window.a1 * std::cos(phase) + Window.a2 * std::cos(2 * phase);
    if (auto floatType = llvm::dyn_cast<FloatType>(element))
      values.push_back(FloatAttr::get(floatType, value));
    else
      values.push_back(IntegerAttr::get(element, static_cast<int64_t>(value)));
  }
  auto type = RankedTensorType::get({length}, element);
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type, values)));
  return success();
}

/// True for a signed or unsigned integer element type other than i1.
bool isIntegerElement(Type type) {
  auto integer = llvm::dyn_cast<IntegerType>(type);
  return integer && integer.getWidth() > 1;
}

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

} // namespace

void registerMathOps(OpTable &table) {
  table.add("", "Acos", 7, translateDecomposedUnary<acos>);
  table.add("", "Asin", 7, translateDecomposedUnary<asin>);
  table.add("", "Atan", 7, translateDecomposedUnary<atan>);
  table.add("", "Tan", 7, translateDecomposedUnary<tan>);
  table.add("", "Acosh", 9, translateDecomposedUnary<acosh>);
  table.add("", "Asinh", 9, translateDecomposedUnary<asinh>);
  table.add("", "Atanh", 9, translateDecomposedUnary<atanh>);
  table.add("", "Cosh", 9, translateDecomposedUnary<cosh>);
  table.add("", "Sinh", 9, translateDecomposedUnary<sinh>);

  table.add("", "IsNaN", {9, 13, 20}, translateIsNaN);
  table.add("", "IsInf", {10, 20}, translateIsInf);
  table.add("", "BitShift", {11, 28}, translateBitShift);
  table.add("", "BitwiseAnd", 18, translateBitwiseBinary<AndOp>);
  table.add("", "BitwiseOr", 18, translateBitwiseBinary<OrOp>);
  table.add("", "BitwiseXor", 18, translateBitwiseBinary<XorOp>);
  table.add("", "BitwiseNot", 18, translateBitwiseNot);

  table.add("", "Celu", 12, translateCelu);
  table.add("", "Mish", 18, translateDecomposedUnary<mish>);
  table.add("", "Shrink", 9, translateShrink);

  table.add("", "QuantizeLinear", {10, 13, 19, 21, 23, 24, 25, 28}, translateQuantizeLinear);
  table.add("", "DequantizeLinear", {10, 13, 19, 21, 23, 24, 25, 28}, translateDequantizeLinear);

  table.add("", "HannWindow", 17, translateWindow<kHann>);
  table.add("", "HammingWindow", 17, translateWindow<kHamming>);
  table.add("", "BlackmanWindow", 17, translateWindow<kBlackman>);

  table.add("", "Det", {11, 22}, translateDet);
}

} // namespace kiln::onnx_frontend
