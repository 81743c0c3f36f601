//===- GraphToLinalgResize.cpp - Lower resize and grid sample to interpolating generics ===//
//
// Resize becomes one linalg.generic over the result. For each dimension whose size or scale
// changes, the body maps the output index to an input coordinate (the coordinate transform),
// turns it into taps (one for nearest, two for linear, four for cubic), each an input index
// clamped to the edge and a weight; the result is the weighted sum over the product of the
// dimensions' taps, read with tensor.extract. Antialiased shrinking stretches linear's and
// cubic's filters by 1 / scale, so a dimension takes as many taps as the stretched support spans.
// Coordinates and weights are computed in f32 (f64 for f64 tensors), as ONNX's reference does.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/LinalgBuilders.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace kiln::graph;
using namespace kiln::conversion;

namespace {

/// One input index of an interpolation and its weight.
struct Tap {
  Value index;
  Value weight;
};

/// Scalar arithmetic on the coordinate type, to keep the formulas readable.
struct CoordinateMath {
  OpBuilder &b;
  Location loc;
  FloatType type;

  Value constant(double value) const { return scalarConstant(b, loc, type, value); }
  Value add(Value x, Value y) const { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) const { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) const { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) const { return arith::DivFOp::create(b, loc, x, y); }
  Value floor(Value x) const { return math::FloorOp::create(b, loc, x); }
  Value ceil(Value x) const { return math::CeilOp::create(b, loc, x); }
  Value fromIndex(Value index) const {
    Value asInteger = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    return arith::SIToFPOp::create(b, loc, type, asInteger);
  }
  Value toIndex(Value x) const {
    Value asInteger = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), asInteger);
  }
  Value select(Value condition, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, condition, x, y);
  }
  Value greater(Value x, Value y) const {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  }
  Value clampIndex(Value index, Value size) const {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value last = arith::SubIOp::create(b, loc, size, arith::ConstantIndexOp::create(b, loc, 1));
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, index, zero), last);
  }
};

/// The input coordinate of output index `x` (as a float) along a dimension resized from
/// `inSize` to `outSize` elements with `scale`. align_corners divides by the output length as
/// ONNX's reference computes it, scale x input length, unrounded: with scales that need not be
/// a whole number (with sizes the scale is size / input length, so the two agree).
Value inputCoordinate(const CoordinateMath &m, CoordinateTransform transform, Value x, Value inSize,
                      int64_t outSize, double scale, double roiStart, double roiEnd) {
  Value half = m.constant(0.5);
  Value one = m.constant(1);
  Value halfPixel = m.sub(m.div(m.add(x, half), m.constant(scale)), half);
  Value outLength = m.mul(m.constant(scale), inSize);
  switch (transform) {
  case CoordinateTransform::half_pixel:
    return halfPixel;
  case CoordinateTransform::pytorch_half_pixel:
    return outSize > 1 ? halfPixel : m.constant(0);
  case CoordinateTransform::align_corners: {
    // 0 where the output length is at most 1 (no span to align), not a division by 0.
    Value span = m.sub(outLength, one);
    Value hasSpan = m.greater(span, m.constant(0));
    Value aligned = m.div(m.mul(x, m.sub(inSize, one)), m.select(hasSpan, span, one));
    return m.select(hasSpan, aligned, m.constant(0));
  }
  case CoordinateTransform::asymmetric:
    return m.div(x, m.constant(scale));
  case CoordinateTransform::tf_half_pixel_for_nn:
    return m.div(m.add(x, half), m.constant(scale));
  case CoordinateTransform::tf_crop_and_resize: {
    // The region [start, end] of the input's extent (in - 1) spread over the output; its
    // middle where the output length is 1.
    Value extent = m.sub(inSize, one);
    Value region = m.mul(m.constant(roiEnd - roiStart), extent);
    Value span = m.sub(outLength, one);
    Value hasSpan = m.greater(span, m.constant(0));
    Value spread = m.div(m.mul(x, region), m.select(hasSpan, span, one));
    Value placed = m.select(hasSpan, spread, m.div(region, m.constant(2)));
    return m.add(placed, m.mul(m.constant(roiStart), extent));
  }
  case CoordinateTransform::half_pixel_symmetric: {
    // The output's centre stays on the input's centre even when the size was rounded.
    Value adjustment = m.div(m.constant(outSize), m.mul(m.constant(scale), inSize));
    Value offset = m.mul(m.div(inSize, m.constant(2)), m.sub(m.constant(1), adjustment));
    return m.add(offset, halfPixel);
  }
  }
  llvm_unreachable("unknown coordinate transform");
}

/// The cubic convolution weights of the taps at offsets -1, 0, 1 and 2 from floor(coordinate),
/// for the fraction `t` and coefficient `a`.
SmallVector<Value> cubicWeights(const CoordinateMath &m, Value t, double a) {
  Value ca = m.constant(a);
  // |s| in [1, 2): ((a|s| - 5a)|s| + 8a)|s| - 4a; |s| < 1: ((a + 2)|s| - (a + 3))|s|^2 + 1.
  auto outer = [&](Value s) {
    Value inner = m.sub(m.mul(ca, s), m.constant(5 * a));
    return m.sub(m.mul(m.add(m.mul(inner, s), m.constant(8 * a)), s), m.constant(4 * a));
  };
  auto near = [&](Value s) {
    Value inner = m.sub(m.mul(m.constant(a + 2), s), m.constant(a + 3));
    return m.add(m.mul(m.mul(inner, s), s), m.constant(1));
  };
  Value one = m.constant(1);
  return {outer(m.add(t, one)), near(t), near(m.sub(one, t)), outer(m.sub(m.constant(2), t))};
}

/// The cubic convolution kernel with coefficient `a` at distance `s` (any sign): zero from 2 on.
Value cubicKernel(const CoordinateMath &m, Value s, double a) {
  Value x = math::AbsFOp::create(m.b, m.loc, s);
  Value x2 = m.mul(x, x), x3 = m.mul(x2, x);
  Value near =
      m.add(m.sub(m.mul(m.constant(a + 2), x3), m.mul(m.constant(a + 3), x2)), m.constant(1));
  Value far = m.sub(m.add(m.sub(m.mul(m.constant(a), x3), m.mul(m.constant(5 * a), x2)),
                          m.mul(m.constant(8 * a), x)),
                    m.constant(4 * a));
  Value withinTwo = arith::CmpFOp::create(m.b, m.loc, arith::CmpFPredicate::OLT, x, m.constant(2));
  return m.select(m.greater(x, m.constant(1)), m.select(withinTwo, far, m.constant(0)), near);
}

/// The offsets from the tap base of an antialiased filter that shrinks by `scale` (< 1):
/// linear's support of 1 and cubic's of 2 stretched by 1 / scale, as ONNX's reference places
/// them (the first offset, and how many).
std::pair<int64_t, int64_t> antialiasOffsets(bool linear, double scale) {
  int64_t first = static_cast<int64_t>(std::floor((linear ? -1.0 : -2.0) / scale)) + 1;
  return {first, 2 - 2 * first};
}

/// The taps of one resized dimension of `sizeIndex` input elements for output index `index`.
SmallVector<Tap> tapsOf(const CoordinateMath &m, ResizeOp op, Value index, Value sizeIndex,
                        int64_t outSize, double scale, double roiStart, double roiEnd,
                        Value *outside) {
  Value x = m.fromIndex(index);
  Value inSize = m.fromIndex(sizeIndex);
  Value coordinate =
      inputCoordinate(m, op.getCoordinateTransform(), x, inSize, outSize, scale, roiStart, roiEnd);
  // tf_crop_and_resize: a position outside [0, in - 1] takes the extrapolation value.
  *outside = arith::OrIOp::create(
      m.b, m.loc,
      arith::CmpFOp::create(m.b, m.loc, arith::CmpFPredicate::OLT, coordinate, m.constant(0)),
      m.greater(coordinate, m.sub(inSize, m.constant(1))));
  switch (op.getMode()) {
  case ResizeMode::nearest: {
    Value rounded;
    switch (op.getNearestRounding()) {
    case NearestRounding::round_prefer_floor:
      rounded = m.ceil(m.sub(coordinate, m.constant(0.5)));
      break;
    case NearestRounding::round_prefer_ceil:
      rounded = m.floor(m.add(coordinate, m.constant(0.5)));
      break;
    case NearestRounding::floor:
      rounded = m.floor(coordinate);
      break;
    case NearestRounding::ceil:
      rounded = m.ceil(coordinate);
      break;
    }
    return {{m.clampIndex(m.toIndex(rounded), sizeIndex), m.constant(1)}};
  }
  case ResizeMode::linear:
  case ResizeMode::cubic:
    break;
  }
  bool linear = op.getMode() == ResizeMode::linear;
  double a = op.getCubicCoeffA().convertToDouble();
  SmallVector<Value> weights;
  Value baseIndex;
  int64_t firstOffset = linear ? 0 : -1;
  bool antialias = op.getAntialias() && scale < 1.0;
  if (antialias) {
    // The base is the element left of the coordinate (fraction in (0, 1]); each tap weighs
    // the stretched kernel at scale * (offset - fraction), normalized below.
    Value base = m.sub(m.ceil(coordinate), m.constant(1));
    Value fraction = m.sub(coordinate, base);
    baseIndex = m.toIndex(base);
    auto [first, count] = antialiasOffsets(linear, scale);
    firstOffset = first;
    for (int64_t i = 0; i < count; ++i) {
      Value s =
          m.mul(m.constant(scale), m.sub(m.constant(static_cast<double>(first + i)), fraction));
      weights.push_back(linear ? arith::MaximumFOp::create(
                                     m.b, m.loc,
                                     m.sub(m.constant(1), math::AbsFOp::create(m.b, m.loc, s)),
                                     m.constant(0))
                                     .getResult()
                               : cubicKernel(m, s, a));
    }
  } else {
    Value base = m.floor(coordinate);
    Value fraction = m.sub(coordinate, base);
    baseIndex = m.toIndex(base);
    weights = linear ? SmallVector<Value>{m.sub(m.constant(1), fraction), fraction}
                     : cubicWeights(m, fraction, a);
  }
  bool exclude = !linear && op.getExcludeOutside();
  SmallVector<Tap> taps;
  Value total = m.constant(0);
  for (auto [i, weight] : llvm::enumerate(weights)) {
    Value unclamped = arith::AddIOp::create(
        m.b, m.loc, baseIndex,
        arith::ConstantIndexOp::create(m.b, m.loc, firstOffset + static_cast<int64_t>(i)));
    if (exclude) {
      // Taps outside the input weigh nothing; the others are renormalized below.
      Value zero = arith::ConstantIndexOp::create(m.b, m.loc, 0);
      Value inside = arith::AndIOp::create(
          m.b, m.loc, arith::CmpIOp::create(m.b, m.loc, arith::CmpIPredicate::sge, unclamped, zero),
          arith::CmpIOp::create(m.b, m.loc, arith::CmpIPredicate::slt, unclamped, sizeIndex));
      weight = m.select(inside, weight, m.constant(0));
    }
    total = m.add(total, weight);
    taps.push_back({m.clampIndex(unclamped, sizeIndex), weight});
  }
  // Taps left out and stretched filters are renormalized to sum to 1.
  if (exclude || antialias)
    for (Tap &tap : taps)
      tap.weight = m.div(tap.weight, total);
  return taps;
}

/// The sum, over every combination of one tap per dimension of `dims`, of the product of the
/// taps' weights and the input element there (`position` with those dimensions replaced by the
/// taps' indices), in the coordinate type; a combination with a tap marked outside (`inside`,
/// when given: zeros padding) reads 0.
Value sumOverTaps(const CoordinateMath &m, Value input, ArrayRef<Value> position,
                  ArrayRef<int64_t> dims, ArrayRef<SmallVector<Tap>> taps,
                  ArrayRef<SmallVector<Value>> inside = {}) {
  Value sum = m.constant(0);
  SmallVector<size_t> choice(taps.size(), 0);
  while (true) {
    SmallVector<Value> source(position);
    Value weight = m.constant(1);
    Value valid;
    for (auto [i, d] : llvm::enumerate(dims)) {
      source[d] = taps[i][choice[i]].index;
      weight = m.mul(weight, taps[i][choice[i]].weight);
      if (!inside.empty())
        valid = valid ? arith::AndIOp::create(m.b, m.loc, valid, inside[i][choice[i]]).getResult()
                      : inside[i][choice[i]];
    }
    Value value = tensor::ExtractOp::create(m.b, m.loc, input, source);
    if (value.getType() != m.type)
      value = arith::ExtFOp::create(m.b, m.loc, m.type, value);
    if (valid)
      value = m.select(valid, value, m.constant(0));
    sum = m.add(sum, m.mul(weight, value));
    size_t i = 0;
    while (i < choice.size() && ++choice[i] == taps[i].size())
      choice[i++] = 0;
    if (i == choice.size())
      return sum;
  }
}

struct ResizeLowering : GraphLowering<ResizeOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    RankedTensorType resultType = op.getType();
    if (!resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "resize to a dynamic size");
    ArrayRef<float> scales = op.getScales();
    Type element = resultType.getElementType();
    auto coordinateType = element.isF64() ? rewriter.getF64Type() : rewriter.getF32Type();
    // Dimensions that keep their size at scale 1 (and, cropping, their whole extent) map every
    // index to itself.
    bool cropping = op.getCoordinateTransform() == CoordinateTransform::tf_crop_and_resize;
    int64_t rank = resultType.getRank();
    SmallVector<double> roiStart(rank, 0.0), roiEnd(rank, 1.0);
    if (std::optional<ArrayRef<float>> roi = op.getRoi())
      for (int64_t d = 0; d < rank; ++d) {
        roiStart[d] = (*roi)[d];
        roiEnd[d] = (*roi)[rank + d];
      }
    SmallVector<int64_t> resized;
    for (int64_t d = 0; d < rank; ++d)
      if (inputType.getDimSize(d) != resultType.getDimSize(d) || scales[d] != 1.0f ||
          (cropping && (roiStart[d] != 0.0 || roiEnd[d] != 1.0)))
        resized.push_back(d);
    SmallVector<Value> inSizes;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      inSizes.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, dimSize(rewriter, loc, input, d)));
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), element);
    Value result = buildGeneric(rewriter, loc, resultType, {}, {}, init,
                                [&](OpBuilder &b, Location l, ValueRange) -> Value {
                                  CoordinateMath m{b, l, coordinateType};
                                  SmallVector<Value> position;
                                  for (int64_t d = 0; d < resultType.getRank(); ++d)
                                    position.push_back(linalg::IndexOp::create(b, l, d));
                                  SmallVector<SmallVector<Tap>> taps;
                                  Value outside;
                                  for (int64_t d : resized) {
                                    Value dimOutside;
                                    taps.push_back(tapsOf(m, op, position[d], inSizes[d],
                                                          resultType.getDimSize(d),
                                                          static_cast<double>(scales[d]),
                                                          roiStart[d], roiEnd[d], &dimOutside));
                                    outside = outside
                                                  ? arith::OrIOp::create(b, l, outside, dimOutside)
                                                        .getResult()
                                                  : dimOutside;
                                  }
                                  Value sum = sumOverTaps(m, input, position, resized, taps);
                                  if (cropping && outside)
                                    sum = m.select(
                                        outside,
                                        m.constant(op.getExtrapolationValue().convertToDouble()),
                                        sum);
                                  if (element != coordinateType)
                                    return arith::TruncFOp::create(b, l, element, sum);
                                  return sum;
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `x` reflected at `low` and `high` until it lies between them (ONNX GridSample's reference:
/// each whole span crossed flips the direction); `low` where the span is empty.
Value reflect(const CoordinateMath &m, Value x, Value low, Value high) {
  Value span = m.sub(high, low);
  auto fold = [&](Value distance, Value near, Value far, bool below) {
    // distance = n * span + r; even n lands r past the near border, odd n r before the far one.
    Value crossings = m.floor(m.div(distance, span));
    Value r = m.sub(distance, m.mul(crossings, span));
    Value count = arith::FPToSIOp::create(m.b, m.loc, m.b.getI64Type(), crossings);
    Value odd = arith::TruncIOp::create(m.b, m.loc, m.b.getI1Type(), count);
    Value fromNear = below ? m.add(near, r) : m.sub(near, r);
    Value fromFar = below ? m.sub(far, r) : m.add(far, r);
    return m.select(odd, fromFar, fromNear);
  };
  Value below = arith::CmpFOp::create(m.b, m.loc, arith::CmpFPredicate::OLT, x, low);
  Value above = m.greater(x, high);
  Value reflected = m.select(below, fold(m.sub(low, x), low, high, true),
                             m.select(above, fold(m.sub(x, high), high, low, false), x));
  return m.select(m.greater(span, m.constant(0)), reflected, low);
}

/// Grid sample becomes one linalg.generic over the result: per spatial dimension the grid's
/// component (read with tensor.extract, innermost dimension first) is denormalized, rounded for
/// nearest, clamped or reflected into the input for border and reflection padding, and turned
/// into taps as resize does (one, two or four); the taps' indices are clamped, reflected, or
/// marked as outside (zeros padding, which reads 0 there). The result is the weighted sum over
/// the product of the dimensions' taps, as ONNX's reference computes it.
struct GridSampleLowering : GraphLowering<GridSampleOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(GridSampleOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), grid = adaptor.getGrid();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    RankedTensorType resultType = op.getType();
    if (!resultType.hasStaticShape() || !inputType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "grid sample with dynamic shapes");
    Type element = resultType.getElementType();
    auto coordinateType = element.isF64() ? rewriter.getF64Type() : rewriter.getF32Type();
    int64_t spatial = inputType.getRank() - 2;
    ResizeMode mode = op.getMode();
    GridSamplePadding padding = op.getPadding();
    bool alignCorners = op.getAlignCorners();
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(), element);
    Value result = buildGeneric(
        rewriter, loc, resultType, {}, {}, init,
        [&](OpBuilder &b, Location l, ValueRange) -> Value {
          CoordinateMath m{b, l, coordinateType};
          SmallVector<Value> position;
          for (int64_t d = 0; d < resultType.getRank(); ++d)
            position.push_back(linalg::IndexOp::create(b, l, d));
          // Per spatial dimension: its taps, and whether each lies inside (zeros padding).
          SmallVector<SmallVector<Tap>> taps(spatial);
          SmallVector<SmallVector<Value>> inside(spatial);
          for (int64_t k = 0; k < spatial; ++k) {
            int64_t size = inputType.getDimSize(2 + k);
            Value sizeIndex = arith::ConstantIndexOp::create(b, l, size);
            SmallVector<Value> at(position.begin() + 2, position.end());
            at.insert(at.begin(), position[0]);
            at.push_back(arith::ConstantIndexOp::create(b, l, spatial - 1 - k));
            Value g = tensor::ExtractOp::create(b, l, grid, at);
            if (g.getType() != coordinateType)
              g = cast<FloatType>(g.getType()).getWidth() < coordinateType.getWidth()
                      ? arith::ExtFOp::create(b, l, coordinateType, g).getResult()
                      : arith::TruncFOp::create(b, l, coordinateType, g).getResult();
            Value dim = m.constant(static_cast<double>(size));
            Value one = m.constant(1);
            Value x = alignCorners ? m.mul(m.div(m.add(g, one), m.constant(2)), m.sub(dim, one))
                                   : m.div(m.sub(m.mul(m.add(g, one), dim), one), m.constant(2));
            if (mode == ResizeMode::nearest)
              x = math::RoundEvenOp::create(b, l, x);
            Value low = alignCorners ? m.constant(0) : m.constant(-0.5);
            Value high = alignCorners ? m.sub(dim, one) : m.sub(dim, m.constant(0.5));
            if (padding == GridSamplePadding::border) {
              Value last = m.sub(dim, one);
              Value clamped = arith::MinimumFOp::create(
                  b, l, arith::MaximumFOp::create(b, l, x, m.constant(0)), last);
              Value outside = arith::OrIOp::create(
                  b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, low),
                  m.greater(x, high));
              x = m.select(outside, clamped, x);
            } else if (padding == GridSamplePadding::reflection) {
              x = reflect(m, x, low, high);
            }
            // The taps: the rounded position, or the neighbours around it with their weights.
            SmallVector<std::pair<Value, Value>> raw;
            if (mode == ResizeMode::nearest) {
              raw.push_back({arith::FPToSIOp::create(b, l, b.getI64Type(), x), m.constant(1)});
            } else {
              Value base = m.floor(x);
              Value fraction = m.sub(x, base);
              SmallVector<Value> weights = mode == ResizeMode::linear
                                               ? SmallVector<Value>{m.sub(one, fraction), fraction}
                                               : cubicWeights(m, fraction, -0.75);
              Value baseIndex = arith::FPToSIOp::create(b, l, b.getI64Type(), base);
              int64_t first = mode == ResizeMode::linear ? 0 : -1;
              for (auto [i, weight] : llvm::enumerate(weights))
                raw.push_back(
                    {arith::AddIOp::create(
                         b, l, baseIndex,
                         arith::ConstantIntOp::create(b, l, first + static_cast<int64_t>(i), 64)),
                     weight});
            }
            for (auto [index, weight] : raw) {
              Value sizeI64 = arith::ConstantIntOp::create(b, l, size, 64);
              if (padding == GridSamplePadding::zeros) {
                Value zero = arith::ConstantIntOp::create(b, l, 0, 64);
                inside[k].push_back(arith::AndIOp::create(
                    b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, index, zero),
                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, sizeI64)));
              } else if (padding == GridSamplePadding::reflection) {
                Value asFloat = arith::SIToFPOp::create(b, l, coordinateType, index);
                index =
                    arith::FPToSIOp::create(b, l, b.getI64Type(), reflect(m, asFloat, low, high));
              }
              Value asIndex = arith::IndexCastOp::create(b, l, b.getIndexType(), index);
              taps[k].push_back({m.clampIndex(asIndex, sizeIndex), weight});
            }
          }
          SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(2, 2 + spatial));
          Value sum =
              sumOverTaps(m, input, position, dims, taps,
                          padding == GridSamplePadding::zeros ? ArrayRef<SmallVector<Value>>(inside)
                                                              : ArrayRef<SmallVector<Value>>());
          if (element != coordinateType)
            return arith::TruncFOp::create(b, l, element, sum);
          return sum;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::conversion::populateResizeLowerings(const TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<ResizeLowering, GridSampleLowering>(converter, patterns.getContext());
}
