//===- ExpandFloat8Conversions.cpp - f8 <-> f32 as integer arithmetic ------===//
//
// The kernels of a model that casts to or from an 8-bit float (ONNX Cast, QuantizeLinear and
// DequantizeLinear to float8) hold arith.extf / arith.truncf on f8 types, which no LLVM lowering
// takes. Each becomes arithmetic on the bits, with the format read from APFloat:
//
//   decode: sign s, exponent field e, mantissa field m; e = 0 is subnormal (m · 2^(1-bias-M));
//           otherwise the f32 with exponent e - bias + 127 and mantissa m << (23 - M); the
//           format's infinity and NaN codes map to f32's.
//   encode: from f32's bits, the target exponent and mantissa, rounded to nearest even (a carry
//           into the exponent is the right next value); below the smallest normal a shifted
//           significand; past the largest finite code infinity or NaN as APFloat does.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/APFloat.h"

namespace kiln {

#define GEN_PASS_DEF_EXPANDFLOAT8CONVERSIONSPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

/// What encoding and decoding need to know of an 8-bit float format.
struct Format {
  int mantissaBits;
  int exponentBits;
  int bias;
  /// The largest finite positive code, and the positive infinity code (-1: none).
  uint32_t maxFinite;
  int64_t infinity;
  /// The code of the (positive) quiet NaN APFloat produces.
  uint32_t nan;
  /// False for the FNUZ formats: 0x80 is their only NaN, and there is no negative zero.
  bool signedZero;
};

bool isFloat8(Type type) {
  auto element = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  return element && element.getWidth() == 8 && !isa<Float8E8M0FNUType>(element);
}

Format formatOf(FloatType type) {
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  Format format;
  format.mantissaBits = static_cast<int>(llvm::APFloat::semanticsPrecision(semantics)) - 1;
  format.exponentBits = 7 - format.mantissaBits;
  format.bias = 1 - llvm::APFloat::semanticsMinExponent(semantics);
  format.maxFinite =
      static_cast<uint32_t>(llvm::APFloat::getLargest(semantics).bitcastToAPInt().getZExtValue());
  format.infinity =
      llvm::APFloat::semanticsHasInf(semantics)
          ? static_cast<int64_t>(llvm::APFloat::getInf(semantics).bitcastToAPInt().getZExtValue())
          : -1;
  format.nan =
      static_cast<uint32_t>(llvm::APFloat::getQNaN(semantics).bitcastToAPInt().getZExtValue());
  format.signedZero = llvm::APFloat::semanticsHasSignedRepr(semantics) &&
                      llvm::APFloat::getZero(semantics, /*Negative=*/true).isNegative();
  return format;
}

/// Builds i32 (or vector-of-i32) arithmetic shaped like a given value.
class Bits {
public:
  Bits(PatternRewriter &rewriter, Location loc, Type like) : b(rewriter), loc(loc) {
    Type i32 = b.getI32Type();
    if (auto vector = dyn_cast<VectorType>(like))
      type = VectorType::get(vector.getShape(), i32);
    else
      type = i32;
  }

  Value constant(int64_t value) {
    auto attribute = b.getI32IntegerAttr(static_cast<int32_t>(value));
    if (auto vector = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b, loc, type, DenseElementsAttr::get(vector, attribute));
    return arith::ConstantOp::create(b, loc, attribute);
  }
  Value fconstant(Type floatType, double value) {
    auto attribute = b.getFloatAttr(getElementTypeOrSelf(floatType), value);
    if (auto vector = dyn_cast<VectorType>(floatType))
      return arith::ConstantOp::create(b, loc, floatType,
                                       DenseElementsAttr::get(vector, attribute));
    return arith::ConstantOp::create(b, loc, attribute);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, loc, x, y); }
  Value shr(Value x, Value y) { return arith::ShRUIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y);
  }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value umin(Value x, Value y) { return arith::MinUIOp::create(b, loc, x, y); }

  PatternRewriter &b;
  Location loc;
  Type type;
};

/// f8 → f32, exactly.
Value decode(PatternRewriter &rewriter, Location loc, Value input, FloatType f8) {
  Format format = formatOf(f8);
  Type inputType = input.getType();
  Type i8 = rewriter.getI8Type(), f32 = rewriter.getF32Type();
  auto shaped = [&](Type element) -> Type {
    if (auto vector = dyn_cast<VectorType>(inputType))
      return VectorType::get(vector.getShape(), element);
    return element;
  };
  Bits x(rewriter, loc, inputType);
  Value byte = arith::BitcastOp::create(rewriter, loc, shaped(i8), input);
  Value code = arith::ExtUIOp::create(rewriter, loc, x.type, byte);
  using P = arith::CmpIPredicate;
  Value sign = x.shl(x.shr(code, x.constant(7)), x.constant(31));
  Value magnitude = x.band(code, x.constant(0x7F));
  Value exponent = x.shr(magnitude, x.constant(format.mantissaBits));
  Value mantissa = x.band(magnitude, x.constant((1 << format.mantissaBits) - 1));
  // Normal: rebias the exponent, align the mantissa.
  Value normal = x.bor(x.shl(x.add(exponent, x.constant(127 - format.bias)), x.constant(23)),
                       x.shl(mantissa, x.constant(23 - format.mantissaBits)));
  // Subnormal (and zero): m · 2^(1 - bias - M), exact in f32.
  Value subnormalValue = arith::MulFOp::create(
      rewriter, loc, arith::UIToFPOp::create(rewriter, loc, shaped(f32), mantissa),
      x.fconstant(shaped(f32), std::ldexp(1.0, 1 - format.bias - format.mantissaBits)));
  Value subnormal = arith::BitcastOp::create(rewriter, loc, x.type, subnormalValue);
  Value bits = x.select(x.cmp(P::eq, exponent, x.constant(0)), subnormal, normal);
  // Specials.
  Value isNan;
  if (format.signedZero) {
    isNan = x.cmp(P::ugt, magnitude, x.constant(format.maxFinite));
    if (format.infinity >= 0) {
      Value isInf = x.cmp(P::eq, magnitude, x.constant(format.infinity));
      bits = x.select(isInf, x.constant(0x7F800000), bits);
      isNan = x.band(isNan, x.cmp(P::ne, magnitude, x.constant(format.infinity)));
    }
  } else {
    isNan = x.cmp(P::eq, code, x.constant(0x80));
  }
  bits = x.bor(bits, sign);
  bits = x.select(isNan, x.constant(0x7FC00000), bits);
  return arith::BitcastOp::create(rewriter, loc, shaped(f32), bits);
}

/// f32 → f8, rounding to nearest even.
Value encode(PatternRewriter &rewriter, Location loc, Value input, FloatType f8) {
  Format format = formatOf(f8);
  Type inputType = input.getType();
  Type i8 = rewriter.getI8Type();
  auto shaped = [&](Type element) -> Type {
    if (auto vector = dyn_cast<VectorType>(inputType))
      return VectorType::get(vector.getShape(), element);
    return element;
  };
  using P = arith::CmpIPredicate;
  Bits x(rewriter, loc, inputType);
  Value bits = arith::BitcastOp::create(rewriter, loc, x.type, input);
  Value sign = x.band(x.shr(bits, x.constant(31)), x.constant(1));
  Value magnitude = x.band(bits, x.constant(0x7FFFFFFF));
  Value isNan = x.cmp(P::ugt, magnitude, x.constant(0x7F800000));
  Value exponent = x.shr(magnitude, x.constant(23));
  Value mantissa = x.band(magnitude, x.constant(0x7FFFFF));
  int shiftNormal = 23 - format.mantissaBits;
  // The target's biased exponent; at most 0 means a subnormal (or zero) result.
  Value target = x.sub(exponent, x.constant(127 - format.bias));
  auto roundShifted = [&](Value significand, Value shift) {
    // significand >> shift, rounded to nearest even; shift in [1, 31].
    Value kept = x.shr(significand, shift);
    Value one = x.constant(1);
    Value rest = x.band(significand, x.sub(x.shl(one, shift), one));
    Value half = x.shl(one, x.sub(shift, one));
    Value up = x.bor(x.cmp(P::ugt, rest, half),
                     arith::AndIOp::create(rewriter, loc, x.cmp(P::eq, rest, half),
                                           x.cmp(P::ne, x.band(kept, one), x.constant(0))));
    return x.add(kept, arith::ExtUIOp::create(rewriter, loc, x.type, up));
  };
  // Normal: exponent and the mantissa's top bits; a carry rolls into the exponent.
  Value normalCode =
      roundShifted(x.bor(x.shl(target, x.constant(23)), mantissa), x.constant(shiftNormal));
  // Subnormal: the significand with its implicit bit, shifted by one more for each step below
  // the smallest normal (at most 31: anything further rounds to zero).
  Value significand = x.bor(mantissa, x.constant(0x800000));
  Value extra = x.sub(x.constant(1), target);
  Value shift = x.umin(x.add(extra, x.constant(shiftNormal)), x.constant(31));
  Value subnormalCode = roundShifted(significand, shift);
  // f32 zeros and subnormals are far below any 8-bit format's subnormals.
  Value tiny = x.cmp(P::eq, exponent, x.constant(0));
  Value code = x.select(x.cmp(P::sgt, target, x.constant(0)), normalCode, subnormalCode);
  code = x.select(tiny, x.constant(0), code);
  // Overflow (infinity included): infinity where the format has one, NaN otherwise.
  Value overflow = x.cmp(P::ugt, code, x.constant(format.maxFinite));
  overflow = x.bor(overflow, x.cmp(P::eq, magnitude, x.constant(0x7F800000)));
  int64_t tooLarge = format.infinity >= 0 ? format.infinity : format.nan & 0x7F;
  code = x.select(overflow, x.constant(tooLarge), code);
  if (format.signedZero) {
    // The sign on everything, NaN included (overflow in a NaN-only format is NaN of its sign).
    code = x.select(isNan, x.constant(format.nan & 0x7F), code);
    code = x.bor(code, x.shl(sign, x.constant(7)));
  } else {
    // FNUZ: overflow and NaN are 0x80; zero has no sign.
    Value isZero = x.cmp(P::eq, code, x.constant(0));
    code = x.select(isZero, code, x.bor(code, x.shl(sign, x.constant(7))));
    code = x.select(x.bor(isNan, overflow), x.constant(0x80), code);
  }
  Value byte = arith::TruncIOp::create(rewriter, loc, shaped(i8), code);
  return arith::BitcastOp::create(rewriter, loc, shaped(f8), byte);
}

Type withElement(Type like, Type element) {
  if (auto vector = dyn_cast<VectorType>(like))
    return VectorType::get(vector.getShape(), element);
  return element;
}

struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op, PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getIn().getType()))
      return failure();
    auto f8 = cast<FloatType>(getElementTypeOrSelf(op.getIn().getType()));
    Value wide = decode(rewriter, op.getLoc(), op.getIn(), f8);
    Type result = op.getType();
    if (!getElementTypeOrSelf(result).isF32())
      wide = getElementTypeOrSelf(result).getIntOrFloatBitWidth() > 32
                 ? Value(arith::ExtFOp::create(rewriter, op.getLoc(), result, wide))
                 : Value(arith::TruncFOp::create(rewriter, op.getLoc(), result, wide));
    rewriter.replaceOp(op, wide);
    return success();
  }
};

struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op, PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getType()))
      return failure();
    auto f8 = cast<FloatType>(getElementTypeOrSelf(op.getType()));
    Value input = op.getIn();
    Type f32 = withElement(input.getType(), rewriter.getF32Type());
    unsigned width = getElementTypeOrSelf(input.getType()).getIntOrFloatBitWidth();
    if (width < 32)
      input = arith::ExtFOp::create(rewriter, op.getLoc(), f32, input);
    else if (width > 32) // f64: one rounding to f32 first (double rounding is possible).
      input = arith::TruncFOp::create(rewriter, op.getLoc(), f32, input);
    rewriter.replaceOp(op, encode(rewriter, op.getLoc(), input, f8));
    return success();
  }
};

struct ExpandFloat8ConversionsPass
    : impl::ExpandFloat8ConversionsPassBase<ExpandFloat8ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandExtF, ExpandTruncF>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
