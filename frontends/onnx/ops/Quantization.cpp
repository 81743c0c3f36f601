//===- Quantization.cpp - ONNX integer-arithmetic quantization ------------===//
//
// The integer-arithmetic quantization operators: MatMulInteger, QLinearMatMul and
// DynamicQuantizeLinear. The quantized products multiply in i32 and requantize in floating point
// with rounding of halves to even and saturation, as the spec's reference does (QuantizeLinear
// and DequantizeLinear are in Math.cpp).
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

} // namespace

void registerQuantizationOps(OpTable &table) {
  table.add("", "MatMulInteger", 10, translateMatMulInteger);
  table.add("", "QLinearMatMul", {10, 21}, translateQLinearMatMul);
  table.add("", "DynamicQuantizeLinear", 11, translateDynamicQuantizeLinear);
}

} // namespace kiln::onnx_frontend
