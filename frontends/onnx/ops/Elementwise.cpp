//===- Elementwise.cpp - ONNX elementwise operators -------------------------===//
//
// Arithmetic, math functions, comparisons, logic, casts and activations. Activations without a
// graph op of their own are decomposed into elementwise math (Relu into max with zero, HardSwish
// into clamps, Gelu into erf or tanh math), as the graph dialect's design asks.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/TensorData.h"
#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/OpTable.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

Type elementTypeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getElementType();
}

template <typename OpTy>
LogicalResult translateUnary(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<Value> result = ctx.build<OpTy>({ctx.input(0)});
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

template <typename OpTy>
LogicalResult translateBinary(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<Value> result = ctx.build<OpTy>({ctx.input(0), ctx.input(1)});
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

/// Max, Min and Sum with one or more inputs: a left fold of the binary op.
template <typename OpTy>
FailureOr<Value> foldVariadic(NodeContext &ctx) {
  if (ctx.numInputs() < 1 || failed(ctx.requireInputs(ctx.numInputs()))) {
    ctx.emitError() << "expects at least one input";
    return failure();
  }
  Value result = ctx.input(0);
  for (int i = 1; i < ctx.numInputs(); ++i) {
    FailureOr<Value> next = ctx.build<OpTy>({result, ctx.input(i)});
    if (failed(next))
      return failure();
    result = *next;
  }
  return result;
}

template <typename OpTy>
LogicalResult translateVariadic(NodeContext &ctx) {
  FailureOr<Value> result = foldVariadic<OpTy>(ctx);
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

LogicalResult translateMean(NodeContext &ctx) {
  FailureOr<Value> sum = foldVariadic<AddOp>(ctx);
  if (failed(sum))
    return failure();
  Value count = ctx.scalar(elementTypeOf(*sum), ctx.numInputs());
  FailureOr<Value> mean = ctx.build<DivOp>({*sum, count});
  if (failed(mean))
    return failure();
  ctx.setOutput(0, *mean);
  return success();
}

LogicalResult translatePow(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value base = ctx.input(0), exponent = ctx.input(1);
  // From opset 12 the exponent may have another numeric type; it is converted to the base's.
  if (elementTypeOf(exponent) != elementTypeOf(base)) {
    FailureOr<Value> cast =
        ctx.build<CastOp>({exponent}, {ctx.named("to", TypeAttr::get(elementTypeOf(base)))});
    if (failed(cast))
      return failure();
    exponent = *cast;
  }
  FailureOr<Value> result = ctx.build<PowOp>({base, exponent});
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

FailureOr<Value> compare(NodeContext &ctx, ComparisonDirection direction, Value lhs, Value rhs) {
  return ctx.build<CompareOp>(
      {lhs, rhs}, {ctx.named("direction", ComparisonDirectionAttr::get(ctx.context(), direction))});
}

template <ComparisonDirection Direction>
LogicalResult translateCompare(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<Value> result = compare(ctx, Direction, ctx.input(0), ctx.input(1));
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

LogicalResult translateWhere(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<Value> result = ctx.build<SelectOp>({ctx.input(0), ctx.input(1), ctx.input(2)});
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

LogicalResult translateIdentity(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  ctx.setOutput(0, ctx.input(0));
  return success();
}

/// Dropout at inference, or in training with a ratio of zero, is the identity and keeps every
/// element: its mask output (opset 10 on) is all true.
LogicalResult translateDropout(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  // From opset 12 the training mode is an input; a constant false (or none) is inference.
  if (ctx.opset() >= 12 && ctx.hasInput(2)) {
    std::optional<DenseElementsAttr> training = ctx.constantInput(2);
    std::optional<DenseElementsAttr> ratio = ctx.hasInput(1) ? ctx.constantInput(1) : std::nullopt;
    bool zeroRatio = ratio && ratio->isSplat() && llvm::isa<FloatType>(ratio->getElementType()) &&
                     ratio->getSplatValue<APFloat>().isZero();
    if (training && training->isSplat()) {
      if (training->getSplatValue<bool>() && !zeroRatio)
        return ctx.emitError() << "training mode with a nonzero ratio drops random elements, "
                                  "which is not supported (only inference, or a ratio of 0)";
    } else if (!zeroRatio) {
      // A training mode (or ratio) of the run: the identity, and a check of every run that it
      // does not ask for random dropout.
      if (ctx.inputType(2).getNumElements() != 1 ||
          (ctx.hasInput(1) && ctx.inputType(1).getNumElements() != 1))
        return ctx.emitError() << "training_mode and ratio must hold one element each";
      Decomposition d(ctx);
      Value deterministic = d.op<NotOp>({d.reshape(ctx.input(2), {})});
      if (ctx.hasInput(1) && !ratio) {
        Value r = d.reshape(ctx.input(1), {});
        deterministic =
            d.op<OrOp>({deterministic, d.compare(ComparisonDirection::eq, r, d.scalar(r, 0))});
      }
      if (d.failed() ||
          failed(ctx.addCheck(deterministic, "training_mode (input 2) with a nonzero ratio asks "
                                             "for random dropout, which is not supported")))
        return failure();
    }
  }
  ctx.setOutput(0, ctx.input(0));
  if (ctx.outputUsed(1)) {
    RankedTensorType type = ctx.inputType(0);
    if (!type.hasStaticShape())
      return ctx.emitError() << "the mask output needs a static input shape, not " << type;
    auto maskType = RankedTensorType::get(type.getShape(), ctx.builder().getI1Type());
    ctx.setOutput(1, ctx.constant(DenseElementsAttr::get(maskType, true)));
  }
  return success();
}

/// Builds `OpTy` (graph.cast or graph.bitcast) of the first input to element type `to` as the
/// node's output.
template <typename OpTy> LogicalResult convertTo(NodeContext &ctx, Type to) {
  FailureOr<Value> result = ctx.build<OpTy>({ctx.input(0)}, {ctx.named("to", TypeAttr::get(to))});
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

LogicalResult castTo(NodeContext &ctx, Type to) { return convertTo<CastOp>(ctx, to); }

/// Cast and CastLike: to an 8-bit float with `saturate` (the default), a float input is first
/// clamped to the target's largest finite magnitude (infinities included, NaN kept), as ONNX's
/// saturate_cast does; without it the cast rounds and overflows to infinity or NaN.
LogicalResult castToFloat8Aware(NodeContext &ctx, Type to) {
  auto target = llvm::dyn_cast<FloatType>(to);
  Value input = ctx.input(0);
  auto source = llvm::dyn_cast<FloatType>(elementTypeOf(input));
  if (!target || target.getWidth() != 8 || !source || ctx.intAttr("saturate", 1) != 1)
    return castTo(ctx, to);
  APFloat largest = APFloat::getLargest(target.getFloatSemantics());
  double bound = largest.convertToDouble();
  FailureOr<Value> upper = ctx.build<MinOp>({input, ctx.scalar(source, bound)});
  if (failed(upper))
    return failure();
  FailureOr<Value> clamped = ctx.build<MaxOp>({*upper, ctx.scalar(source, -bound)});
  if (failed(clamped))
    return failure();
  FailureOr<Value> cast = ctx.build<CastOp>({*clamped}, {ctx.named("to", TypeAttr::get(to))});
  if (failed(cast))
    return failure();
  ctx.setOutput(0, *cast);
  return success();
}

/// The element type the required attribute `to` names, or failure (reported; `what` says what
/// the node would do with it: "cast to", "reinterpret as").
FailureOr<Type> targetElementType(NodeContext &ctx, StringRef what) {
  const onnx::AttributeProto *to = ctx.attribute("to");
  if (!to)
    return ctx.emitError() << "attribute 'to' is required";
  Type element = convertElementType(*ctx.context(), static_cast<int32_t>(to->i()));
  if (!element)
    return ctx.emitError() << "cannot " << what << " ONNX element type " << to->i()
                           << ", which the graph dialect does not support";
  return element;
}

/// Cast and CastLike to a 4- or 2-bit integer, held in the 8-bit type of its signedness: the
/// value is converted to int32 (a float truncated toward zero), then wraps to the narrow range as
/// ONNX's reference does (INT4: -9 becomes 7 and 8 becomes -8): its low bits, sign-extended for
/// the signed types.
LogicalResult castToSubByte(NodeContext &ctx, SubByteInteger integer) {
  Decomposition d(ctx);
  Value wide = d.castTo(ctx.input(0), IntegerType::get(ctx.context(), 32));
  Value low = d.op<AndOp>({wide, d.scalar(wide, (1 << integer.bits) - 1)});
  Type byte = integer.isSigned ? Type(IntegerType::get(ctx.context(), 8))
                               : IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  if (!integer.isSigned)
    return d.finish(d.castTo(low, byte));
  // (low ^ half) - half sign-extends the narrow value.
  Value half = d.scalar(wide, 1 << (integer.bits - 1));
  return d.finish(d.castTo(d.sub(d.op<XorOp>({low, half}), half), byte));
}

} // namespace

Value encodeFloat4E2M1(Decomposition &d, Value value) {
  NodeContext &ctx = d.context();
  Type f32 = Float32Type::get(ctx.context());
  Type u8 = IntegerType::get(ctx.context(), 8, IntegerType::Unsigned);
  Value x = d.castTo(value, f32);
  // The sign from the bits (negative zero and NaNs included), the magnitude's code from the
  // midpoints between neighbouring values: a tie goes to the even code (0.25 to 0, 0.75 to 1.0).
  Value bits =
      d.op<BitcastOp>({x}, {ctx.named("to", TypeAttr::get(IntegerType::get(ctx.context(), 32)))});
  Value negative = d.compare(ComparisonDirection::lt, bits, d.scalar(bits, 0));
  Value magnitude = d.op<AbsOp>({x});
  constexpr std::pair<double, bool> kMidpoints[] = {{0.25, false}, {0.75, true}, {1.25, false},
                                                    {1.75, true},  {2.5, false}, {3.5, true},
                                                    {5.0, false}};
  Value code;
  for (auto [midpoint, tieUp] : kMidpoints) {
    Value step = d.castTo(d.compare(tieUp ? ComparisonDirection::ge : ComparisonDirection::gt,
                                    magnitude, d.scalar(magnitude, midpoint)),
                          u8);
    code = code ? d.add(code, step) : step;
  }
  Value eight = ctx.scalar(u8, 8);
  Value signedCode = d.select(negative, d.add(code, eight), code);
  Value nan = d.compare(ComparisonDirection::ne, x, x);
  return d.select(nan, eight, signedCode);
}

Value decodeFloat4E2M1(Decomposition &d, Value codes) {
  NodeContext &ctx = d.context();
  static constexpr float kValues[16] = {0,     0.5f,  1,  1.5f,  2,  3,  4,  6,
                                        -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  auto tableType = RankedTensorType::get({16}, Float32Type::get(ctx.context()));
  Value table = ctx.constant(DenseElementsAttr::get(tableType, llvm::ArrayRef<float>(kValues)));
  Value index = d.castTo(codes, IntegerType::get(ctx.context(), 64));
  return d.op<GatherOp>({table, index}, {ctx.namedI64("axis", 0)});
}

namespace {

/// Whether Kiln holds ONNX element type `dataType` as codes in a uint8.
bool isCodedFloat(int32_t dataType) { return dataType == kFloat4E2M1 || dataType == kFloat8E8M0; }

/// FLOAT8E8M0 codes (kFloat8E8M0) of a float tensor, as ONNX's reference computes them from the
/// f32 bits: the exponent field, plus one when `roundMode` is "up" and the mantissa is not zero,
/// or "nearest" and the mantissa's guard bit rounds it up (never past 0xFE under `saturate`); NaN
/// and infinities give 0xFF; the sign is dropped.
Value encodeFloat8E8M0(Decomposition &d, Value value, StringRef roundMode, bool saturate) {
  NodeContext &ctx = d.context();
  Type i32 = IntegerType::get(ctx.context(), 32);
  Value bits = d.op<BitcastOp>({d.castTo(value, Float32Type::get(ctx.context()))},
                               {ctx.named("to", TypeAttr::get(i32))});
  auto masked = [&](int64_t mask) { return d.op<AndOp>({bits, d.scalar(bits, mask)}); };
  auto nonZero = [&](Value v) { return d.compare(ComparisonDirection::ne, v, d.scalar(v, 0)); };
  Value exponent = d.op<ShiftRightOp>({masked(0x7F800000), d.scalar(bits, 23)});
  Value special = d.compare(ComparisonDirection::eq, exponent, d.scalar(exponent, 0xFF));
  Value roundUp;
  if (roundMode == "up") {
    roundUp = nonZero(masked(0x7FFFFF));
  } else if (roundMode == "nearest") {
    Value lsb = d.compare(ComparisonDirection::gt, exponent, d.scalar(exponent, 0));
    Value rest = d.op<OrOp>({nonZero(masked(0x3FFFFF)), lsb});
    roundUp = d.op<AndOp>({nonZero(masked(0x400000)), rest});
  }
  if (roundUp) {
    if (saturate)
      roundUp = d.op<AndOp>(
          {roundUp, d.compare(ComparisonDirection::ne, exponent, d.scalar(exponent, 0xFE))});
    exponent = d.add(exponent, d.castTo(roundUp, i32));
  }
  Value code = d.select(special, d.scalar(exponent, 0xFF), exponent);
  return d.castTo(code, IntegerType::get(ctx.context(), 8, IntegerType::Unsigned));
}

/// The values of FLOAT8E8M0 codes, as f32: 2^(code - 127), code 0 the subnormal 2^-127, 0xFF NaN.
Value decodeFloat8E8M0(Decomposition &d, Value codes) {
  NodeContext &ctx = d.context();
  Type i32 = IntegerType::get(ctx.context(), 32);
  Value code = d.castTo(codes, i32);
  Value bits = d.op<ShiftLeftOp>({code, d.scalar(code, 23)});
  bits = d.select(d.compare(ComparisonDirection::eq, code, d.scalar(code, 0)),
                  d.scalar(code, 0x400000), bits);
  bits = d.select(d.compare(ComparisonDirection::eq, code, d.scalar(code, 0xFF)),
                  d.scalar(code, 0x7FC00000), bits);
  return d.op<BitcastOp>({bits}, {ctx.named("to", TypeAttr::get(Float32Type::get(ctx.context())))});
}

/// Cast and CastLike from or to FLOAT4E2M1 or FLOAT8E8M0 (kFloat4E2M1, kFloat8E8M0), whose codes
/// Kiln holds in a uint8: the input decoded to f32 first, the result encoded last.
LogicalResult castCodedFloat(NodeContext &ctx, int32_t from, int32_t to) {
  Decomposition d(ctx);
  Value input = ctx.input(0);
  if (from == kFloat4E2M1)
    input = decodeFloat4E2M1(d, input);
  else if (from == kFloat8E8M0)
    input = decodeFloat8E8M0(d, input);
  if (to == kFloat4E2M1)
    return d.finish(encodeFloat4E2M1(d, input));
  if (to == kFloat8E8M0) {
    std::string roundMode = ctx.stringAttr("round_mode", "up");
    if (roundMode != "up" && roundMode != "down" && roundMode != "nearest")
      return ctx.emitError() << "round_mode must be 'up', 'down' or 'nearest', got '" << roundMode
                             << "'";
    return d.finish(encodeFloat8E8M0(d, input, roundMode, ctx.intAttr("saturate", 1) != 0));
  }
  Type element = convertElementType(*ctx.context(), to);
  if (!element)
    return ctx.emitError() << "cannot cast to ONNX element type " << to
                           << ", which the graph dialect does not support";
  return d.finish(d.castTo(input, element));
}

LogicalResult translateCast(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (const onnx::AttributeProto *to = ctx.attribute("to")) {
    int32_t target = static_cast<int32_t>(to->i()), from = ctx.declaredElementType(0);
    if (isCodedFloat(target) || isCodedFloat(from))
      return castCodedFloat(ctx, from, target);
    if (std::optional<SubByteInteger> integer = subByteInteger(target))
      return castToSubByte(ctx, *integer);
  }
  FailureOr<Type> element = targetElementType(ctx, "cast to");
  if (failed(element))
    return failure();
  return castToFloat8Aware(ctx, *element);
}

/// BitCast (opset 26): each element's bits read as `to`, of the same width (bool, a byte, reads as
/// a uint8 or int8).
LogicalResult translateBitCast(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<Type> element = targetElementType(ctx, "reinterpret as");
  if (failed(element))
    return failure();
  return convertTo<BitcastOp>(ctx, *element);
}

LogicalResult translateCastLike(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int32_t like = ctx.declaredElementType(1), from = ctx.declaredElementType(0);
  if (isCodedFloat(like) || isCodedFloat(from)) {
    if (like == 0)
      return ctx.emitError() << "the element type of input 'like' is not declared";
    return castCodedFloat(ctx, from, like);
  }
  if (std::optional<SubByteInteger> integer = subByteInteger(like))
    return castToSubByte(ctx, *integer);
  return castToFloat8Aware(ctx, elementTypeOf(ctx.input(1)));
}

/// ONNX Mod: fmod = 1 is C's fmod (the remainder takes the dividend's sign, graph.rem); fmod = 0
/// (integers only) takes the divisor's sign, so a non-zero remainder of the other sign gets the
/// divisor added.
LogicalResult translateMod(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value a = ctx.input(0), b = ctx.input(1);
  int64_t fmod = ctx.intAttr("fmod", 0);
  bool isFloat = llvm::isa<FloatType>(elementTypeOf(a));
  // Before opset 28 fmod = 0 was defined for integers only; Mod-28 defines it for floating point
  // too, as A - floor(A / B) * B, which the sign correction below computes.
  if (isFloat && fmod != 1 && ctx.opset() < 28)
    return ctx.emitError() << "floating-point Mod requires fmod = 1 before opset 28";
  FailureOr<Value> rem = ctx.build<RemOp>({a, b});
  if (failed(rem))
    return failure();
  if (fmod == 1) {
    ctx.setOutput(0, *rem);
    return success();
  }
  Value zero = ctx.scalar(elementTypeOf(a), 0);
  FailureOr<Value> nonZero = compare(ctx, ComparisonDirection::ne, *rem, zero);
  FailureOr<Value> remNegative = compare(ctx, ComparisonDirection::lt, *rem, zero);
  FailureOr<Value> divisorNegative = compare(ctx, ComparisonDirection::lt, b, zero);
  if (failed(nonZero) || failed(remNegative) || failed(divisorNegative))
    return failure();
  FailureOr<Value> signsDiffer = ctx.build<XorOp>({*remNegative, *divisorNegative});
  if (failed(signsDiffer))
    return failure();
  FailureOr<Value> adjust = ctx.build<AndOp>({*nonZero, *signsDiffer});
  FailureOr<Value> adjusted = ctx.build<AddOp>({*rem, b});
  if (failed(adjust) || failed(adjusted))
    return failure();
  FailureOr<Value> result = ctx.build<SelectOp>({*adjust, *adjusted, *rem});
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// Builds `op(x)` for a decomposed activation; each helper returns the result value.
using Activation = FailureOr<Value> (*)(NodeContext &, Value);

template <Activation Fn>
LogicalResult translateActivation(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<Value> result = Fn(ctx, ctx.input(0));
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

FailureOr<Value> relu(NodeContext &ctx, Value x) {
  return ctx.build<MaxOp>({x, ctx.scalar(elementTypeOf(x), 0)});
}

/// `x >= 0 ? x : negative`.
FailureOr<Value> selectNonNegative(NodeContext &ctx, Value x, Value negative) {
  FailureOr<Value> nonNegative =
      compare(ctx, ComparisonDirection::ge, x, ctx.scalar(elementTypeOf(x), 0));
  if (failed(nonNegative))
    return failure();
  return ctx.build<SelectOp>({*nonNegative, x, negative});
}

FailureOr<Value> leakyRelu(NodeContext &ctx, Value x) {
  FailureOr<Value> scaled =
      ctx.build<MulOp>({x, ctx.scalar(elementTypeOf(x), ctx.floatAttr("alpha", 0.01f))});
  if (failed(scaled))
    return failure();
  return selectNonNegative(ctx, x, *scaled);
}

/// alpha * (exp(x) - 1).
FailureOr<Value> scaledExpm1(NodeContext &ctx, Value x, double alpha) {
  Type element = elementTypeOf(x);
  FailureOr<Value> exp = ctx.build<ExpOp>({x});
  if (failed(exp))
    return failure();
  FailureOr<Value> expm1 = ctx.build<SubOp>({*exp, ctx.scalar(element, 1)});
  if (failed(expm1))
    return failure();
  return ctx.build<MulOp>({*expm1, ctx.scalar(element, alpha)});
}

FailureOr<Value> elu(NodeContext &ctx, Value x) {
  FailureOr<Value> negative = scaledExpm1(ctx, x, ctx.floatAttr("alpha", 1.0f));
  if (failed(negative))
    return failure();
  return selectNonNegative(ctx, x, *negative);
}

FailureOr<Value> selu(NodeContext &ctx, Value x) {
  double alpha = ctx.floatAttr("alpha", 1.67326319217681884765625f);
  double gamma = ctx.floatAttr("gamma", 1.05070102214813232421875f);
  Type element = elementTypeOf(x);
  FailureOr<Value> negative = scaledExpm1(ctx, x, alpha);
  if (failed(negative))
    return failure();
  FailureOr<Value> positive =
      compare(ctx, ComparisonDirection::gt, x, ctx.scalar(element, 0));
  if (failed(positive))
    return failure();
  FailureOr<Value> selected = ctx.build<SelectOp>({*positive, x, *negative});
  if (failed(selected))
    return failure();
  return ctx.build<MulOp>({*selected, ctx.scalar(element, gamma)});
}

FailureOr<Value> thresholdedRelu(NodeContext &ctx, Value x) {
  Type element = elementTypeOf(x);
  FailureOr<Value> above =
      compare(ctx, ComparisonDirection::gt, x, ctx.scalar(element, ctx.floatAttr("alpha", 1.0f)));
  if (failed(above))
    return failure();
  return ctx.build<SelectOp>({*above, x, ctx.scalar(element, 0)});
}

/// max(0, min(1, alpha * x + beta)).
FailureOr<Value> hardSigmoidOf(NodeContext &ctx, Value x, double alpha, double beta) {
  Type element = elementTypeOf(x);
  FailureOr<Value> scaled = ctx.build<MulOp>({x, ctx.scalar(element, alpha)});
  if (failed(scaled))
    return failure();
  FailureOr<Value> shifted = ctx.build<AddOp>({*scaled, ctx.scalar(element, beta)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> upper = ctx.build<MinOp>({*shifted, ctx.scalar(element, 1)});
  if (failed(upper))
    return failure();
  return ctx.build<MaxOp>({*upper, ctx.scalar(element, 0)});
}

FailureOr<Value> hardSigmoid(NodeContext &ctx, Value x) {
  return hardSigmoidOf(ctx, x, ctx.floatAttr("alpha", 0.2f), ctx.floatAttr("beta", 0.5f));
}

FailureOr<Value> hardSwish(NodeContext &ctx, Value x) {
  FailureOr<Value> gate = hardSigmoidOf(ctx, x, 1.0 / 6.0, 0.5);
  if (failed(gate))
    return failure();
  return ctx.build<MulOp>({x, *gate});
}

FailureOr<Value> softplus(NodeContext &ctx, Value x) {
  FailureOr<Value> exp = ctx.build<ExpOp>({x});
  if (failed(exp))
    return failure();
  FailureOr<Value> sum = ctx.build<AddOp>({*exp, ctx.scalar(elementTypeOf(x), 1)});
  if (failed(sum))
    return failure();
  return ctx.build<LogOp>({*sum});
}

FailureOr<Value> softsign(NodeContext &ctx, Value x) {
  FailureOr<Value> abs = ctx.build<AbsOp>({x});
  if (failed(abs))
    return failure();
  FailureOr<Value> denominator = ctx.build<AddOp>({*abs, ctx.scalar(elementTypeOf(x), 1)});
  if (failed(denominator))
    return failure();
  return ctx.build<DivOp>({x, *denominator});
}

/// Gelu (opset 20): 0.5 * x * (1 + erf(x / sqrt(2))), or with approximate = "tanh"
/// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
FailureOr<Value> gelu(NodeContext &ctx, Value x) {
  Type element = elementTypeOf(x);
  std::string approximate = ctx.stringAttr("approximate", "none");
  FailureOr<Value> inner = failure();
  if (approximate == "none") {
    FailureOr<Value> scaled = ctx.build<MulOp>({x, ctx.scalar(element, M_SQRT1_2)});
    if (failed(scaled))
      return failure();
    inner = ctx.build<ErfOp>({*scaled});
  } else if (approximate == "tanh") {
    FailureOr<Value> square = ctx.build<MulOp>({x, x});
    if (failed(square))
      return failure();
    FailureOr<Value> cube = ctx.build<MulOp>({*square, x});
    if (failed(cube))
      return failure();
    FailureOr<Value> term = ctx.build<MulOp>({*cube, ctx.scalar(element, 0.044715)});
    if (failed(term))
      return failure();
    FailureOr<Value> sum = ctx.build<AddOp>({x, *term});
    if (failed(sum))
      return failure();
    FailureOr<Value> scaled =
        ctx.build<MulOp>({*sum, ctx.scalar(element, std::sqrt(2.0 / M_PI))});
    if (failed(scaled))
      return failure();
    inner = ctx.build<TanhOp>({*scaled});
  } else {
    ctx.emitError() << "approximate = '" << approximate << "' is not one of 'none', 'tanh'";
    return failure();
  }
  if (failed(inner))
    return failure();
  FailureOr<Value> onePlus = ctx.build<AddOp>({*inner, ctx.scalar(element, 1)});
  if (failed(onePlus))
    return failure();
  FailureOr<Value> half = ctx.build<MulOp>({x, ctx.scalar(element, 0.5)});
  if (failed(half))
    return failure();
  return ctx.build<MulOp>({*half, *onePlus});
}

LogicalResult translatePRelu(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<Value> scaled = ctx.build<MulOp>({ctx.input(0), ctx.input(1)});
  if (failed(scaled))
    return failure();
  FailureOr<Value> result = selectNonNegative(ctx, ctx.input(0), *scaled);
  if (failed(result))
    return failure();
  ctx.setOutput(0, *result);
  return success();
}

/// Clip: bounds are attributes before opset 11 (defaulting to the float range) and optional
/// scalar inputs from 11 on; a missing bound does not clamp.
LogicalResult translateClip(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  Type element = elementTypeOf(x);
  Value low, high;
  if (ctx.opset() < 11) {
    if (ctx.attribute("min"))
      low = ctx.scalar(element, ctx.floatAttr("min", 0));
    if (ctx.attribute("max"))
      high = ctx.scalar(element, ctx.floatAttr("max", 0));
  } else {
    low = ctx.input(1);
    high = ctx.input(2);
  }
  Value result = x;
  if (low) {
    FailureOr<Value> clamped = ctx.build<MaxOp>({result, low});
    if (failed(clamped))
      return failure();
    result = *clamped;
  }
  if (high) {
    FailureOr<Value> clamped = ctx.build<MinOp>({result, high});
    if (failed(clamped))
      return failure();
    result = *clamped;
  }
  ctx.setOutput(0, result);
  return success();
}

} // namespace

void registerElementwiseOps(OpTable &table) {
  // Binary arithmetic: multidirectional broadcasting from opset 7.
  table.add("", "Add", {7, 13, 14}, translateBinary<AddOp>);
  table.add("", "Sub", {7, 13, 14}, translateBinary<SubOp>);
  table.add("", "Mul", {7, 13, 14}, translateBinary<MulOp>);
  table.add("", "Div", {7, 13, 14}, translateBinary<DivOp>);
  table.add("", "Pow", {7, 12, 13, 15}, translatePow);
  table.add("", "Mod", {10, 13, 28}, translateMod);
  table.add("", "Max", {6, 8, 12, 13}, translateVariadic<MaxOp>);
  table.add("", "Min", {6, 8, 12, 13}, translateVariadic<MinOp>);
  table.add("", "Sum", {6, 8, 13}, translateVariadic<AddOp>);
  table.add("", "Mean", {6, 8, 13}, translateMean);

  // Unary math.
  table.add("", "Neg", {6, 13}, translateUnary<NegOp>);
  table.add("", "Abs", {6, 13}, translateUnary<AbsOp>);
  table.add("", "Exp", {6, 13}, translateUnary<ExpOp>);
  table.add("", "Log", {6, 13}, translateUnary<LogOp>);
  table.add("", "Sqrt", {6, 13}, translateUnary<SqrtOp>);
  table.add("", "Reciprocal", {6, 13}, translateUnary<ReciprocalOp>);
  table.add("", "Tanh", {6, 13}, translateUnary<TanhOp>);
  table.add("", "Sigmoid", {6, 13}, translateUnary<SigmoidOp>);
  table.add("", "Erf", {9, 13}, translateUnary<ErfOp>);
  table.add("", "Floor", {6, 13}, translateUnary<FloorOp>);
  table.add("", "Ceil", {6, 13}, translateUnary<CeilOp>);
  table.add("", "Round", 11, translateUnary<RoundOp>);
  table.add("", "Sign", {9, 13}, translateUnary<SignOp>);
  table.add("", "Sin", 7, translateUnary<SinOp>);
  table.add("", "Cos", 7, translateUnary<CosOp>);

  // Comparison, logic and selection.
  table.add("", "Equal", {7, 11, 13, 19}, translateCompare<ComparisonDirection::eq>);
  table.add("", "Less", {7, 9, 13}, translateCompare<ComparisonDirection::lt>);
  table.add("", "Greater", {7, 9, 13}, translateCompare<ComparisonDirection::gt>);
  table.add("", "LessOrEqual", {12, 16}, translateCompare<ComparisonDirection::le>);
  table.add("", "GreaterOrEqual", {12, 16}, translateCompare<ComparisonDirection::ge>);
  table.add("", "Not", 1, translateUnary<NotOp>);
  table.add("", "And", 7, translateBinary<AndOp>);
  table.add("", "Or", 7, translateBinary<OrOp>);
  table.add("", "Xor", 7, translateBinary<XorOp>);
  table.add("", "Where", {9, 16}, translateWhere);

  // Casts and identities.
  table.add("", "Identity", {1, 13, 14, 16, 19, 21}, translateIdentity);
  table.add("", "Dropout", {7, 10, 12, 13}, translateDropout);
  table.add("", "Cast", {6, 9, 13, 19, 21}, translateCast);
  table.add("", "BitCast", 26, translateBitCast);
  table.add("", "CastLike", {15, 19, 21}, translateCastLike);

  // Activations.
  table.add("", "Relu", {6, 13, 14}, translateActivation<relu>);
  table.add("", "LeakyRelu", {6, 16}, translateActivation<leakyRelu>);
  table.add("", "PRelu", {7, 9, 16}, translatePRelu);
  table.add("", "Elu", 6, translateActivation<elu>);
  table.add("", "Selu", 6, translateActivation<selu>);
  table.add("", "ThresholdedRelu", 10, translateActivation<thresholdedRelu>);
  table.add("", "Clip", {6, 11, 12, 13}, translateClip);
  table.add("", "HardSigmoid", 6, translateActivation<hardSigmoid>);
  table.add("", "HardSwish", 14, translateActivation<hardSwish>);
  table.add("", "Softplus", 1, translateActivation<softplus>);
  table.add("", "Softsign", 1, translateActivation<softsign>);
  table.add("", "Gelu", 20, translateActivation<gelu>);
}

} // namespace kiln::onnx_frontend
