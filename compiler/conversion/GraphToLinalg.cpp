//===- GraphToLinalg.cpp - Lower graph ops to linalg on tensors -------------===//
//
// Elementwise ops become one linalg.generic each, with NumPy broadcasting expressed in the
// indexing maps (a size-1 operand dimension against a larger result dimension reads index 0);
// upstream elementwise fusion then merges chains. Reductions become linalg.reduce, softmax its
// numerically stable max / exp / sum / divide sequence.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/LinalgBuilders.h"
#include "compiler/conversion/Passes.h"
#include "dialects/graph/GraphOps.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_CONVERTGRAPHTOLINALGPASS
#include "compiler/conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln::graph;
using namespace kiln::conversion;

namespace {

//===----------------------------------------------------------------------===//
// Scalar bodies of the elementwise ops
//===----------------------------------------------------------------------===//

template <typename FloatOp, typename IntOp>
Value floatOrInt(OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0].getType()))
    return FloatOp::create(b, loc, args);
  return IntOp::create(b, loc, args);
}

/// The float, signed or unsigned integer op, as `op`'s element type asks.
template <typename FloatOp, typename SignedOp, typename UnsignedOp>
Value bySignedness(Operation *op, OpBuilder &b, Location loc, ValueRange args) {
  if (hasUnsignedElements(op))
    return UnsignedOp::create(b, loc, args);
  return floatOrInt<FloatOp, SignedOp>(b, loc, args);
}

template <typename MathOp>
Value unaryMath(OpBuilder &b, Location loc, ValueRange args) {
  return MathOp::create(b, loc, args[0]);
}

Value scalarOf(AbsOp op, OpBuilder &b, Location loc, ValueRange args) {
  if (hasUnsignedElements(op))
    return args[0];
  if (isFloat(args[0].getType()))
    return math::AbsFOp::create(b, loc, args[0]);
  // max(x, 0 - x) rather than math.absi, which the NVVM lowering has no pattern for; LLVM
  // recognizes the form as its abs intrinsic on the CPU.
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(args[0].getType()));
  return arith::MaxSIOp::create(b, loc, args[0], arith::SubIOp::create(b, loc, zero, args[0]));
}
Value scalarOf(AtanOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::AtanOp>(b, loc, args);
}
Value scalarOf(CeilOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::CeilOp>(b, loc, args);
}
Value scalarOf(CosOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::CosOp>(b, loc, args);
}
Value scalarOf(ErfOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::ErfOp>(b, loc, args);
}
Value scalarOf(ExpOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::ExpOp>(b, loc, args);
}
Value scalarOf(FloorOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::FloorOp>(b, loc, args);
}
Value scalarOf(LogOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::LogOp>(b, loc, args);
}
Value scalarOf(NegOp, OpBuilder &b, Location loc, ValueRange args) {
  if (isFloat(args[0].getType()))
    return arith::NegFOp::create(b, loc, args[0]);
  return arith::SubIOp::create(b, loc, scalarConstant(b, loc, args[0].getType(), 0), args[0]);
}
Value scalarOf(NotOp, OpBuilder &b, Location loc, ValueRange args) {
  // All ones: true for i1, every bit for wider integers.
  return arith::XOrIOp::create(b, loc, args[0], scalarConstant(b, loc, args[0].getType(), -1));
}
Value scalarOf(ReciprocalOp, OpBuilder &b, Location loc, ValueRange args) {
  return arith::DivFOp::create(b, loc, scalarConstant(b, loc, args[0].getType(), 1), args[0]);
}
Value scalarOf(RoundOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::RoundEvenOp>(b, loc, args);
}
Value scalarOf(RsqrtOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::RsqrtOp>(b, loc, args);
}
Value scalarOf(SigmoidOp, OpBuilder &b, Location loc, ValueRange args) {
  Type type = args[0].getType();
  Value negated = arith::NegFOp::create(b, loc, args[0]);
  Value exp = math::ExpOp::create(b, loc, negated);
  Value one = scalarConstant(b, loc, type, 1);
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, exp));
}
Value scalarOf(SignOp op, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  Type type = x.getType();
  Value zero = scalarConstant(b, loc, type, 0);
  Value one = scalarConstant(b, loc, type, 1);
  if (hasUnsignedElements(op))
    return arith::SelectOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero), one, zero);
  Value minusOne = scalarConstant(b, loc, type, -1);
  Value positive, negative;
  if (isFloat(type)) {
    positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  } else {
    positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
    negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  }
  // Zero (and NaN) stays as it is.
  Value other = isFloat(type) ? x : zero;
  Value inner = arith::SelectOp::create(b, loc, negative, minusOne, other);
  return arith::SelectOp::create(b, loc, positive, one, inner);
}
Value scalarOf(SinOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::SinOp>(b, loc, args);
}
Value scalarOf(SqrtOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::SqrtOp>(b, loc, args);
}
Value scalarOf(TanhOp, OpBuilder &b, Location loc, ValueRange args) {
  return unaryMath<math::TanhOp>(b, loc, args);
}
Value scalarOf(IsNanOp, OpBuilder &b, Location loc, ValueRange args) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, args[0], args[0]);
}
Value scalarOf(IsInfOp, OpBuilder &b, Location loc, ValueRange args) {
  auto type = llvm::cast<FloatType>(args[0].getType());
  Value infinity = arith::ConstantOp::create(
      b, loc, FloatAttr::get(type, APFloat::getInf(type.getFloatSemantics())));
  Value magnitude = math::AbsFOp::create(b, loc, args[0]);
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, magnitude, infinity);
}

Value scalarOf(AddOp, OpBuilder &b, Location loc, ValueRange args) {
  return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, args);
}
Value scalarOf(SubOp, OpBuilder &b, Location loc, ValueRange args) {
  return floatOrInt<arith::SubFOp, arith::SubIOp>(b, loc, args);
}
Value scalarOf(MulOp, OpBuilder &b, Location loc, ValueRange args) {
  return floatOrInt<arith::MulFOp, arith::MulIOp>(b, loc, args);
}
Value scalarOf(DivOp op, OpBuilder &b, Location loc, ValueRange args) {
  return bySignedness<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(op, b, loc, args);
}
Value scalarOf(MaxOp op, OpBuilder &b, Location loc, ValueRange args) {
  return bySignedness<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(op, b, loc, args);
}
Value scalarOf(MinOp op, OpBuilder &b, Location loc, ValueRange args) {
  return bySignedness<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(op, b, loc, args);
}
Value scalarOf(PowOp, OpBuilder &b, Location loc, ValueRange args) {
  return floatOrInt<math::PowFOp, math::IPowIOp>(b, loc, args);
}
Value scalarOf(RemOp op, OpBuilder &b, Location loc, ValueRange args) {
  return bySignedness<arith::RemFOp, arith::RemSIOp, arith::RemUIOp>(op, b, loc, args);
}
Value scalarOf(AndOp, OpBuilder &b, Location loc, ValueRange args) {
  return arith::AndIOp::create(b, loc, args);
}
Value scalarOf(OrOp, OpBuilder &b, Location loc, ValueRange args) {
  return arith::OrIOp::create(b, loc, args);
}
/// Whether a shift amount is one arith's shifts define: 0 <= amount < the bit width. Unsigned
/// amounts are never negative.
Value shiftInRange(Operation *op, OpBuilder &b, Location loc, Value amount) {
  Type type = amount.getType();
  Value width = scalarConstant(b, loc, type, type.getIntOrFloatBitWidth());
  if (hasUnsignedElements(op))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, amount, width);
  Value nonNegative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, amount,
                                            scalarConstant(b, loc, type, 0));
  Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, amount, width);
  return arith::AndIOp::create(b, loc, nonNegative, below);
}
Value scalarOf(ShiftLeftOp op, OpBuilder &b, Location loc, ValueRange args) {
  // arith's shifts are poison past the bit width; the select never takes that value.
  Value shifted = arith::ShLIOp::create(b, loc, args[0], args[1]);
  return arith::SelectOp::create(b, loc, shiftInRange(op, b, loc, args[1]), shifted,
                                 scalarConstant(b, loc, args[0].getType(), 0));
}
Value scalarOf(ShiftRightOp op, OpBuilder &b, Location loc, ValueRange args) {
  Type type = args[0].getType();
  Value inRange = shiftInRange(op, b, loc, args[1]);
  if (hasUnsignedElements(op))
    return arith::SelectOp::create(b, loc, inRange, arith::ShRUIOp::create(b, loc, args),
                                   scalarConstant(b, loc, type, 0));
  // Out of range, the sign fill alone: a shift by the width less one.
  Value fill = arith::ShRSIOp::create(
      b, loc, args[0], scalarConstant(b, loc, type, type.getIntOrFloatBitWidth() - 1));
  return arith::SelectOp::create(b, loc, inRange, arith::ShRSIOp::create(b, loc, args), fill);
}
Value scalarOf(XorOp, OpBuilder &b, Location loc, ValueRange args) {
  return arith::XOrIOp::create(b, loc, args);
}
Value scalarOf(SelectOp, OpBuilder &b, Location loc, ValueRange args) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

Value scalarOf(CompareOp op, OpBuilder &b, Location loc, ValueRange args) {
  ComparisonDirection direction = op.getDirection();
  if (isFloat(args[0].getType())) {
    // Ordered comparisons: false with NaN, except `ne`, which is true.
    arith::CmpFPredicate predicate = arith::CmpFPredicate::OEQ;
    switch (direction) {
    case ComparisonDirection::eq: predicate = arith::CmpFPredicate::OEQ; break;
    case ComparisonDirection::ne: predicate = arith::CmpFPredicate::UNE; break;
    case ComparisonDirection::lt: predicate = arith::CmpFPredicate::OLT; break;
    case ComparisonDirection::le: predicate = arith::CmpFPredicate::OLE; break;
    case ComparisonDirection::gt: predicate = arith::CmpFPredicate::OGT; break;
    case ComparisonDirection::ge: predicate = arith::CmpFPredicate::OGE; break;
    }
    return arith::CmpFOp::create(b, loc, predicate, args[0], args[1]);
  }
  // Unsigned operands compare with the unsigned predicates.
  using P = arith::CmpIPredicate;
  bool u = hasUnsignedElements(op);
  P predicate = P::eq;
  switch (direction) {
  case ComparisonDirection::eq: predicate = P::eq; break;
  case ComparisonDirection::ne: predicate = P::ne; break;
  case ComparisonDirection::lt: predicate = u ? P::ult : P::slt; break;
  case ComparisonDirection::le: predicate = u ? P::ule : P::sle; break;
  case ComparisonDirection::gt: predicate = u ? P::ugt : P::sgt; break;
  case ComparisonDirection::ge: predicate = u ? P::uge : P::sge; break;
  }
  return arith::CmpIOp::create(b, loc, predicate, args[0], args[1]);
}

Value scalarOf(BitcastOp op, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  Type to = getElementTypeOrSelf(signlessType(op.getResult()));
  if (x.getType() == to)
    return x;
  // A bool is a byte holding 0 or 1.
  if (x.getType().isInteger(1))
    return arith::ExtUIOp::create(b, loc, to, x);
  return arith::BitcastOp::create(b, loc, to, x);
}

Value scalarOf(CastOp op, OpBuilder &b, Location loc, ValueRange args) {
  Value x = args[0];
  Type from = x.getType(), to = getElementTypeOrSelf(signlessType(op.getResult()));
  if (from == to)
    return x;
  // i1 and unsigned sources widen with zeros; unsigned results come from fptoui.
  bool zeroExtends = from.isInteger(1) || isUnsigned(op.getInput().getType());
  auto fromFloat = llvm::dyn_cast<FloatType>(from);
  auto toFloat = llvm::dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, x);
    return arith::TruncFOp::create(b, loc, to, x);
  }
  if (to.isInteger(1)) {
    // Any non-zero value is true.
    Value zero = scalarConstant(b, loc, from, 0);
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x, zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
  }
  if (toFloat)
    return zeroExtends ? Value(arith::UIToFPOp::create(b, loc, to, x))
                       : Value(arith::SIToFPOp::create(b, loc, to, x));
  if (fromFloat)
    return isUnsigned(op.getTo()) ? Value(arith::FPToUIOp::create(b, loc, to, x))
                                  : Value(arith::FPToSIOp::create(b, loc, to, x));
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, to, x);
  return zeroExtends ? Value(arith::ExtUIOp::create(b, loc, to, x))
                     : Value(arith::ExtSIOp::create(b, loc, to, x));
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct ElementwiseLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), signlessType(op->getResult(0)), adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) { return scalarOf(op, b, loc, args); });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The constant `value` with unsigned integer elements reinterpreted as signless ones.
FailureOr<TypedAttr> signlessConstant(Attribute value) {
  auto typed = llvm::dyn_cast<TypedAttr>(value);
  if (!typed)
    return failure();
  if (!isUnsigned(typed.getType()))
    return typed;
  auto dense = llvm::dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return failure();
  auto signless = llvm::cast<ShapedType>(SignlessTypeConverter().convertType(dense.getType()));
  return TypedAttr(dense.bitcast(signless.getElementType()));
}

struct ConstantLowering : GraphLowering<ConstantOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<TypedAttr> value = signlessConstant(op.getValue());
    if (failed(value))
      return rewriter.notifyMatchFailure(op, "unsigned elements held outside a dense attribute");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, *value);
    return success();
  }
};

/// Upstream constants of unsigned tensors (as written around graph functions) become signless.
struct SignlessArithConstant : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    FailureOr<TypedAttr> value = signlessConstant(op.getValue());
    if (failed(value))
      return failure();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, *value);
    return success();
  }
};

/// tensor.cast of unsigned tensors: the same cast on the signless ones.
struct SignlessTensorCast : OpConversionPattern<tensor::CastOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult matchAndRewrite(tensor::CastOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, getTypeConverter()->convertType(op.getType()),
                                                adaptor.getSource());
    return success();
  }
};

template <typename OpTy, Combiner kCombiner, bool kMean = false>
struct ReductionLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value reduced = reduceInto(rewriter, op.getLoc(), adaptor.getInput(), op.getAxes(), kCombiner,
                               kMean, signlessType(op.getResult()), hasUnsignedElements(op));
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

struct TransposeLowering : GraphLowering<TransposeOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = signlessType(op.getResult());
    SmallVector<Value> dynamicSizes;
    for (auto [d, source] : llvm::enumerate(op.getPermutation()))
      if (resultType.isDynamicDim(d))
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, adaptor.getInput(), source));
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(), dynamicSizes);
    auto transpose = linalg::TransposeOp::create(rewriter, loc, adaptor.getInput(), init,
                                                 op.getPermutation());
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

/// Reshape and the shape-only ops that canonicalization turns into it.
template <typename OpTy>
struct ReshapeLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = signlessType(op.getResult());
    SmallVector<OpFoldResult> sizes;
    if constexpr (std::is_same_v<OpTy, ReshapeOp>) {
      // The graph's sizes of the run for its `?` entries (null for the others).
      if (!adaptor.getSizes().empty())
        for (OpFoldResult entry :
             getMixedValues(op.getShape(), adaptor.getSizes(), rewriter.getContext()))
          sizes.push_back(llvm::dyn_cast<Value>(entry) ? entry : OpFoldResult());
    }
    if (sizes.empty() && llvm::count(resultType.getShape(), ShapedType::kDynamic) <= 1) {
      rewriter.replaceOp(op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(), resultType));
      return success();
    }
    Value result = reshapeToSizes(rewriter, op.getLoc(), adaptor.getInput(), resultType, sizes);
    if (!result)
      return rewriter.notifyMatchFailure(op, "a dynamic result dimension has no size");
    rewriter.replaceOp(op, result);
    return success();
  }
};

template <typename OpTy, bool kLog>
struct SoftmaxLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = llvm::cast<RankedTensorType>(x.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    MLIRContext *context = rewriter.getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(type.getRank(), context);
    AffineMap reducedMap = identity.dropResult(axis);

    // Subtract the maximum first, so exp never overflows.
    Value max = reduceAlong(rewriter, loc, x, {axis}, Combiner::Max);
    Value shifted = buildGeneric(rewriter, loc, type, ValueRange{x, max}, {identity, reducedMap},
                                 emptyForResult(rewriter, loc, type, ValueRange{x}),
                                 [](OpBuilder &b, Location l, ValueRange args) {
                                   return arith::SubFOp::create(b, l, args[0], args[1]);
                                 });
    Value exp = buildElementwise(rewriter, loc, type, ValueRange{shifted},
                                 [](OpBuilder &b, Location l, ValueRange args) {
                                   return math::ExpOp::create(b, l, args[0]);
                                 });
    Value sum = reduceAlong(rewriter, loc, exp, {axis}, Combiner::Sum);
    Value result = buildGeneric(
        rewriter, loc, type, ValueRange{kLog ? shifted : exp, sum}, {identity, reducedMap},
        emptyForResult(rewriter, loc, type, ValueRange{x}),
        [](OpBuilder &b, Location l, ValueRange args) -> Value {
          if (kLog)
            return arith::SubFOp::create(b, l, args[0], math::LogOp::create(b, l, args[1]));
          return arith::DivFOp::create(b, l, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvertGraphToLinalgPass
    : kiln::impl::ConvertGraphToLinalgPassBase<ConvertGraphToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // The signature keeps the element types the graph declared (kiln.declared_type) where the
    // lowering makes them signless, for the program's inputs and outputs.
    func::FuncOp function = getOperation();
    auto declare = [&](Type type) -> TypeAttr {
      auto tensor = dyn_cast<RankedTensorType>(type);
      return tensor && tensor.getElementType().isUnsignedInteger() ? TypeAttr::get(tensor)
                                                                   : TypeAttr();
    };
    for (auto [i, type] : llvm::enumerate(function.getArgumentTypes()))
      if (TypeAttr declared = declare(type))
        function.setArgAttr(i, ::kiln::attrs::kDeclaredType, declared);
    for (auto [i, type] : llvm::enumerate(function.getResultTypes()))
      if (TypeAttr declared = declare(type))
        function.setResultAttr(i, ::kiln::attrs::kDeclaredType, declared);
    SignlessTypeConverter converter;
    RewritePatternSet patterns(context);
    kiln::populateGraphToLinalgPatterns(converter, patterns);
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect, math::MathDialect,
                           scf::SCFDialect, tensor::TensorDialect>();
    // Unsigned integers leave the function: its signature, calls, returns and the constants and
    // casts around graph functions become signless.
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType());
    });
    target.addDynamicallyLegalOp<func::ReturnOp, func::CallOp, arith::ConstantOp,
                                 tensor::CastOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    // Graph ops have no declared legality: the partial conversion lowers those it has patterns
    // for and leaves the others for later stages.
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void kiln::populateGraphToLinalgPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns
      .add<ElementwiseLowering<AbsOp>, ElementwiseLowering<AtanOp>, ElementwiseLowering<CeilOp>,
           ElementwiseLowering<CosOp>, ElementwiseLowering<ErfOp>, ElementwiseLowering<ExpOp>,
           ElementwiseLowering<FloorOp>, ElementwiseLowering<LogOp>, ElementwiseLowering<NegOp>,
           ElementwiseLowering<NotOp>, ElementwiseLowering<ReciprocalOp>,
           ElementwiseLowering<RoundOp>, ElementwiseLowering<RsqrtOp>,
           ElementwiseLowering<SigmoidOp>, ElementwiseLowering<SignOp>, ElementwiseLowering<SinOp>,
           ElementwiseLowering<SqrtOp>, ElementwiseLowering<TanhOp>, ElementwiseLowering<IsNanOp>,
           ElementwiseLowering<IsInfOp>, ElementwiseLowering<AddOp>, ElementwiseLowering<SubOp>,
           ElementwiseLowering<MulOp>, ElementwiseLowering<DivOp>, ElementwiseLowering<MaxOp>,
           ElementwiseLowering<MinOp>, ElementwiseLowering<PowOp>, ElementwiseLowering<RemOp>,
           ElementwiseLowering<AndOp>, ElementwiseLowering<OrOp>, ElementwiseLowering<XorOp>,
           ElementwiseLowering<ShiftLeftOp>, ElementwiseLowering<ShiftRightOp>,
           ElementwiseLowering<CompareOp>, ElementwiseLowering<SelectOp>,
           ElementwiseLowering<CastOp>, ElementwiseLowering<BitcastOp>>(converter, context);
  patterns.add<ConstantLowering, TransposeLowering, ReshapeLowering<ReshapeOp>,
               ReshapeLowering<FlattenOp>, ReshapeLowering<SqueezeOp>,
               ReshapeLowering<UnsqueezeOp>>(converter, context);
  patterns.add<ReductionLowering<ReduceSumOp, Combiner::Sum>,
               ReductionLowering<ReduceMeanOp, Combiner::Sum, /*kMean=*/true>,
               ReductionLowering<ReduceProdOp, Combiner::Prod>,
               ReductionLowering<ReduceMaxOp, Combiner::Max>,
               ReductionLowering<ReduceMinOp, Combiner::Min>>(converter, context);
  patterns.add<SoftmaxLowering<SoftmaxOp, false>, SoftmaxLowering<LogSoftmaxOp, true>>(converter,
                                                                                       context);
  patterns.add<SignlessArithConstant, SignlessTensorCast>(converter, context);
  populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
  populateReturnOpTypeConversionPattern(patterns, converter);
  populateCallOpTypeConversionPattern(patterns, converter);
  populateDataMovementLowerings(converter, patterns);
  populateIndexingLowerings(converter, patterns);
  populateNeuralNetworkLowerings(converter, patterns);
  populateResizeLowerings(converter, patterns);
  populateScanLowerings(converter, patterns);
}
