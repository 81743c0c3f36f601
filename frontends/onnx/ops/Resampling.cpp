//===- Resampling.cpp - ONNX resizing and sampling grids ------------------===//
//
// Resize and Upsample (scales and sizes read at import time into graph.resize), GridSample, and
// AffineGrid, whose base grid is computed at import time.
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

//===----------------------------------------------------------------------===//
// Resize and Upsample
//===----------------------------------------------------------------------===//

/// The floating-point elements of constant input `index`, or failure (reported, naming `what`).
FailureOr<SmallVector<float>> constantFloats(NodeContext &ctx, int index, StringRef what) {
  std::optional<DenseElementsAttr> elements = ctx.constantInput(index);
  if (!elements || !llvm::isa<FloatType>(elements->getElementType())) {
    ctx.emitError() << what << " (input " << index << ") must be a floating-point constant "
                    << "(an initializer or a Constant node) to be imported";
    return failure();
  }
  SmallVector<float> values;
  for (APFloat value : elements->getValues<APFloat>()) {
    bool losesInfo;
    value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(value.convertToFloat());
  }
  return values;
}

/// What a Resize or Upsample node asks for, in the graph dialect's terms.
struct ResizeRequest {
  /// One of scales and sizes, or both (keep_aspect_ratio_policy), is non-empty.
  SmallVector<float> scales;
  SmallVector<int64_t> sizes;
  ResizeMode mode = ResizeMode::nearest;
  CoordinateTransform transform = CoordinateTransform::half_pixel;
  /// Unset for opset 10 Resize and Upsample: chosen from the scales.
  std::optional<NearestRounding> rounding;
  float cubicCoeffA = -0.75f;
  bool excludeOutside = false;
  /// Resize from opset 18: linear and cubic shrinking stretch their filter by 1 / scale.
  bool antialias = false;
  /// tf_crop_and_resize: the region (starts, then ends, for every dimension) and the value of
  /// positions outside the input.
  SmallVector<float> roi;
  float extrapolationValue = 0.0f;
};

/// Builds graph.resize of input 0. Output sizes are floor(input * scale) for scales alone and the
/// scales are sizes / input for sizes alone; both need the input's shape, so it must be static.
/// Without a nearest_mode (opset 10 Resize, Upsample) nearest rounds down when enlarging and up
/// when shrinking, the rule those operators were defined with; a node that does both at once is
/// refused.
LogicalResult buildResize(NodeContext &ctx, ResizeRequest request) {
  RankedTensorType input = ctx.inputType(0);
  int64_t rank = input.getRank();
  if (!input.hasStaticShape())
    return ctx.emitError() << "needs a static input shape, but input type is " << input
                           << " (bind it with --shape)";
  size_t given = request.sizes.empty() ? request.scales.size() : request.sizes.size();
  if (given != static_cast<size_t>(rank))
    return ctx.emitError() << (request.sizes.empty() ? "scales" : "sizes") << " has " << given
                           << " entries for an input of rank " << rank;
  if (request.sizes.empty()) {
    for (int64_t d = 0; d < rank; ++d) {
      if (!(request.scales[d] > 0))
        return ctx.emitError() << "scales must be positive";
      request.sizes.push_back(static_cast<int64_t>(
          std::floor(static_cast<double>(input.getDimSize(d)) * request.scales[d])));
    }
  } else if (request.scales.empty()) {
    for (int64_t d = 0; d < rank; ++d) {
      if (request.sizes[d] < 1 || input.getDimSize(d) < 1)
        return ctx.emitError() << "sizes and the input dimensions must be positive";
      request.scales.push_back(static_cast<float>(request.sizes[d]) /
                               static_cast<float>(input.getDimSize(d)));
    }
  }
  if (!request.rounding) {
    bool enlarges = llvm::any_of(request.scales, [](float s) { return s > 1; });
    bool shrinks = llvm::any_of(request.scales, [](float s) { return s < 1; });
    if (enlarges && shrinks && request.mode == ResizeMode::nearest)
      return ctx.emitError() << "nearest resizing that enlarges some dimensions and shrinks "
                                "others is not supported at opset "
                             << ctx.opset();
    request.rounding = shrinks ? NearestRounding::ceil : NearestRounding::floor;
  }
  MLIRContext *context = ctx.context();
  OpBuilder &b = ctx.builder();
  Decomposition d(ctx);
  SmallVector<NamedAttribute> attributes{
      ctx.namedArray("sizes", request.sizes),
      ctx.named("scales", b.getDenseF32ArrayAttr(request.scales)),
      ctx.named("mode", ResizeModeAttr::get(context, request.mode)),
      ctx.named("coordinate_transform", CoordinateTransformAttr::get(context, request.transform)),
      ctx.named("nearest_rounding", NearestRoundingAttr::get(context, *request.rounding)),
      ctx.named("cubic_coeff_a", b.getF32FloatAttr(request.cubicCoeffA)),
      ctx.named("exclude_outside", b.getBoolAttr(request.excludeOutside)),
      ctx.named("antialias", b.getBoolAttr(request.antialias)),
      ctx.named("extrapolation_value", b.getF32FloatAttr(request.extrapolationValue))};
  if (!request.roi.empty())
    attributes.push_back(ctx.named("roi", b.getDenseF32ArrayAttr(request.roi)));
  return d.finish(d.op<ResizeOp>({ctx.input(0)}, attributes));
}

/// The values of a Resize or Upsample whose scales or region are known only at run time, each a
/// rank-1 value of the run with one entry per listed axis (null when constant: then the
/// request's own scales, sizes and roi hold). `axes` lists the dimensions they give, in order.
struct RunTimeResizeOperands {
  Value scales;
  Value roi;
  /// Sizes of the run under keep_aspect_ratio_policy not_larger or not_smaller: one scale for
  /// every listed axis, the smallest (not_larger) or largest size / input.
  Value sizes;
  bool notLarger = false;
  SmallVector<int64_t> axes;
  int scalesIndex = -1;
  int roiIndex = -1;
  int sizesIndex = -1;
};

/// Resize or Upsample with scales, roi or aspect-keeping sizes of the run: the result has the
/// declared shape, and each dimension whose declared size differs from the input's is resampled
/// in turn (as ONNX's reference interpolates one dimension after another): the output positions
/// map to input
/// coordinates with the run's scale and region, each tap's index is clamped into the input and
/// gathered along the dimension, and the taps are weighted and summed (in f32, f64 for f64). A
/// check of every run verifies that the run's scales give the declared sizes (floor(input *
/// scale), times the region's extent when cropping; round(input * scale) for aspect-keeping
/// sizes) and that the dimensions the declaration keeps have scale 1 and, cropping, the whole
/// extent.
LogicalResult buildRunTimeResize(NodeContext &ctx, ResizeRequest request,
                                 const RunTimeResizeOperands &run) {
  RankedTensorType input = ctx.inputType(0);
  int64_t rank = input.getRank();
  if (!input.hasStaticShape())
    return ctx.emitError() << "scales or roi known only at run time need a static input, not "
                           << input;
  // The output's shape: the sizes where given, else the declared one.
  RankedTensorType declared;
  if (!request.sizes.empty())
    declared = input.clone(request.sizes);
  else if (!(declared = run.sizes ? declaredResultType(ctx, 0, run.sizesIndex, "sizes")
                                  : declaredResultType(ctx, 0, run.scalesIndex, "scales")))
    return failure();
  if (declared.getRank() != rank)
    return ctx.emitError() << "the output is declared as " << declared << " for an input of rank "
                           << rank;
  if (run.scales && runTimeLength(ctx, run.scalesIndex) != static_cast<int64_t>(run.axes.size()))
    return ctx.emitError() << "scales (input " << run.scalesIndex << ") has "
                           << runTimeLength(ctx, run.scalesIndex) << " entries, expected "
                           << run.axes.size();
  if (run.sizes && runTimeLength(ctx, run.sizesIndex) != static_cast<int64_t>(run.axes.size()))
    return ctx.emitError() << "sizes (input " << run.sizesIndex << ") has "
                           << runTimeLength(ctx, run.sizesIndex) << " entries, expected "
                           << run.axes.size();
  if (run.roi && runTimeLength(ctx, run.roiIndex) != 2 * static_cast<int64_t>(run.axes.size()))
    return ctx.emitError() << "roi (input " << run.roiIndex << ") has "
                           << runTimeLength(ctx, run.roiIndex) << " entries, expected "
                           << 2 * run.axes.size();
  bool cropping = request.transform == CoordinateTransform::tf_crop_and_resize;
  if (!request.rounding) {
    // Opset 10 Resize and Upsample round nearest down when enlarging, up when shrinking.
    bool enlarges = false, shrinks = false;
    for (int64_t d = 0; d < rank; ++d) {
      enlarges |= declared.getDimSize(d) > input.getDimSize(d);
      shrinks |= declared.getDimSize(d) < input.getDimSize(d);
    }
    if (enlarges && shrinks && request.mode == ResizeMode::nearest)
      return ctx.emitError() << "nearest resizing that enlarges some dimensions and shrinks "
                                "others is not supported at opset "
                             << ctx.opset();
    request.rounding = shrinks ? NearestRounding::ceil : NearestRounding::floor;
  }

  Decomposition d(ctx);
  Type element = input.getElementType();
  Type coordinate = element.isF64() ? ctx.builder().getF64Type() : ctx.builder().getF32Type();
  Type f64 = ctx.builder().getF64Type(), i64 = ctx.builder().getI64Type();
  auto number = [&](double value) { return ctx.scalar(coordinate, value); };
  auto position = [&](ArrayRef<int64_t> axes, int64_t axis) -> int64_t {
    const int64_t *it = llvm::find(axes, axis);
    return it == axes.end() ? -1 : it - axes.begin();
  };
  Value runScales = run.scales ? d.castTo(run.scales, coordinate) : Value();
  Value runRoi = run.roi ? d.castTo(run.roi, coordinate) : Value();
  int64_t listed = static_cast<int64_t>(run.axes.size());
  // The scale and region of dimension `axis` when constant: the request's (1 and [0, 1] for an
  // axis it does not list; size / input with sizes).
  auto constantScale = [&](int64_t axis) {
    if (!request.scales.empty())
      return static_cast<double>(request.scales[axis]);
    if (!request.sizes.empty())
      return static_cast<double>(static_cast<float>(request.sizes[axis]) /
                                 static_cast<float>(input.getDimSize(axis)));
    return 1.0;
  };
  auto constantRoi = [&](int64_t axis, bool end) {
    if (!request.roi.empty())
      return static_cast<double>(request.roi[(end ? rank : 0) + axis]);
    return end ? 1.0 : 0.0;
  };

  // Aspect-keeping sizes: the smallest or largest size / input over the listed axes, in f64.
  Value commonScale;
  if (run.sizes) {
    SmallVector<int64_t> listedSizes;
    for (int64_t axis : run.axes)
      listedSizes.push_back(input.getDimSize(axis));
    Value ratios = d.div(d.castTo(run.sizes, f64), d.castTo(ctx.i64Vector(listedSizes), f64));
    NamedAttribute over = ctx.namedArray("axes", {0});
    commonScale =
        run.notLarger ? d.op<ReduceMinOp>({ratios}, {over}) : d.op<ReduceMaxOp>({ratios}, {over});
  }

  Value result = d.castTo(ctx.input(0), coordinate);
  Value holds;
  auto require = [&](Value condition) {
    holds = holds ? d.op<AndOp>({holds, condition}) : condition;
  };
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t in = input.getDimSize(axis), out = declared.getDimSize(axis);
    int64_t at = position(run.axes, axis);
    bool scaleOfRun = (runScales || commonScale) && at >= 0;
    bool roiOfRun = cropping && runRoi && at >= 0;
    Value scale = number(constantScale(axis));
    if (scaleOfRun)
      scale = commonScale ? d.castTo(commonScale, coordinate) : elementOf(d, runScales, at);
    Value start, end;
    if (cropping) {
      start = roiOfRun ? elementOf(d, runRoi, at) : number(constantRoi(axis, false));
      end = roiOfRun ? elementOf(d, runRoi, at + listed) : number(constantRoi(axis, true));
    }
    bool constantIdentity =
        constantScale(axis) == 1.0 &&
        (!cropping || (constantRoi(axis, false) == 0.0 && constantRoi(axis, true) == 1.0));
    // (Aspect-keeping sizes may scale a dimension whose size stays: it is resampled.)
    if (in == out && (scaleOfRun || roiOfRun) && !commonScale) {
      // A dimension the declaration keeps maps every index to itself: the run's values must
      // say so.
      if (!constantIdentity && !(scaleOfRun && roiOfRun))
        return ctx.emitError() << "dimension " << axis
                               << " keeps its size but its constant scale or region resizes it, "
                                  "with the other known only at run time; not supported";
      if (scaleOfRun)
        require(d.compare(ComparisonDirection::eq, scale, number(1)));
      if (roiOfRun)
        require(d.op<AndOp>({d.compare(ComparisonDirection::eq, start, number(0)),
                             d.compare(ComparisonDirection::eq, end, number(1))}));
      continue;
    }
    if (in == out && !scaleOfRun && !roiOfRun && constantIdentity)
      continue;
    // The run's values must give the declared size: round(in * scale) for aspect-keeping
    // sizes; floor(in * scale), times the region's extent when cropping, for scales (in f64).
    if (commonScale && at >= 0) {
      Value length = d.mul(commonScale, ctx.scalar(f64, static_cast<double>(in)));
      require(d.compare(ComparisonDirection::eq, d.op<RoundOp>({length}),
                        ctx.scalar(f64, static_cast<double>(out))));
    } else if (request.sizes.empty() && (scaleOfRun || roiOfRun)) {
      Value length = d.mul(d.castTo(scale, f64), ctx.scalar(f64, static_cast<double>(in)));
      if (cropping)
        length = d.mul(length, d.castTo(d.sub(end, start), f64));
      require(d.compare(ComparisonDirection::eq, d.op<FloorOp>({length}),
                        ctx.scalar(f64, static_cast<double>(out))));
    }

    Value x = d.castTo(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, out))), coordinate);
    Value inSize = number(static_cast<double>(in));
    Value half = number(0.5), one = number(1);
    Value halfPixel = d.sub(d.div(d.add(x, half), scale), half);
    Value outLength = d.mul(scale, inSize);
    Value c;
    switch (request.transform) {
    case CoordinateTransform::half_pixel:
      c = halfPixel;
      break;
    case CoordinateTransform::pytorch_half_pixel:
      c = out > 1 ? halfPixel : d.mul(x, number(0));
      break;
    case CoordinateTransform::align_corners: {
      Value span = d.sub(outLength, one);
      Value hasSpan = d.compare(ComparisonDirection::gt, span, number(0));
      Value aligned =
          d.div(d.mul(x, number(static_cast<double>(in - 1))), d.select(hasSpan, span, one));
      c = d.select(hasSpan, aligned, d.mul(x, number(0)));
      break;
    }
    case CoordinateTransform::asymmetric:
      c = d.div(x, scale);
      break;
    case CoordinateTransform::tf_half_pixel_for_nn:
      c = d.div(d.add(x, half), scale);
      break;
    case CoordinateTransform::tf_crop_and_resize: {
      Value extent = number(static_cast<double>(in - 1));
      Value region = d.mul(d.sub(end, start), extent);
      Value span = d.sub(outLength, one);
      Value hasSpan = d.compare(ComparisonDirection::gt, span, number(0));
      Value spread = d.div(d.mul(x, region), d.select(hasSpan, span, one));
      Value placed =
          d.select(hasSpan, spread, d.add(d.mul(x, number(0)), d.div(region, number(2))));
      c = d.add(placed, d.mul(start, extent));
      break;
    }
    case CoordinateTransform::half_pixel_symmetric: {
      Value adjustment = d.div(number(static_cast<double>(out)), outLength);
      Value offset = d.mul(number(static_cast<double>(in) / 2), d.sub(one, adjustment));
      c = d.add(offset, halfPixel);
      break;
    }
    }
    SmallVector<int64_t> along(rank, 1);
    along[axis] = out;
    auto gathered = [&](Value index) {
      return d.op<GatherOp>({result, clampIndex(d, index, in)}, {ctx.namedI64("axis", axis)});
    };
    Value next;
    if (request.mode == ResizeMode::nearest) {
      Value rounded;
      switch (*request.rounding) {
      case NearestRounding::round_prefer_floor:
        rounded = d.op<CeilOp>({d.sub(c, half)});
        break;
      case NearestRounding::round_prefer_ceil:
        rounded = d.op<FloorOp>({d.add(c, half)});
        break;
      case NearestRounding::floor:
        rounded = d.op<FloorOp>({c});
        break;
      case NearestRounding::ceil:
        rounded = d.op<CeilOp>({c});
        break;
      }
      next = gathered(d.castTo(rounded, i64));
    } else {
      bool linear = request.mode == ResizeMode::linear;
      double a = request.cubicCoeffA;
      // Cubic convolution with coefficient a at distance s: zero from 2 on.
      auto cubic = [&](Value s) {
        Value x = d.op<AbsOp>({s});
        Value x2 = d.mul(x, x), x3 = d.mul(x2, x);
        Value near = d.add(d.sub(d.mul(number(a + 2), x3), d.mul(number(a + 3), x2)), one);
        Value far = d.sub(
            d.add(d.sub(d.mul(number(a), x3), d.mul(number(5 * a), x2)), d.mul(number(8 * a), x)),
            number(4 * a));
        return d.select(d.compare(ComparisonDirection::gt, x, one),
                        d.select(d.compare(ComparisonDirection::lt, x, number(2)), far, number(0)),
                        near);
      };
      SmallVector<Value> weights;
      Value baseIndex;
      int64_t first = linear ? 0 : -1;
      if (request.antialias) {
        // The filter stretched by 1 / min(scale, 1) from the element left of the coordinate
        // (fraction in (0, 1]), as ONNX's reference places it. The scale of the run is at least
        // the smallest the declared size allows, so the taps for that one span every support;
        // taps beyond the actual support weigh 0.
        double smallest =
            (commonScale ? static_cast<double>(out) - 0.5 : static_cast<double>(out)) /
            static_cast<double>(in);
        if (cropping || !(smallest > 0))
          return ctx.emitError() << "antialias with a scale known only at run time needs an "
                                    "output of at least one element and no tf_crop_and_resize";
        double bound = std::min(smallest, 1.0);
        first = static_cast<int64_t>(std::floor((linear ? -1.0 : -2.0) / bound)) + 1;
        int64_t count = 2 - 2 * first;
        if (count > 256)
          return ctx.emitError() << "antialias shrinking dimension " << axis << " from " << in
                                 << " to " << out << " takes " << count
                                 << " taps with a scale known only at run time (at most 256)";
        Value base = d.sub(d.op<CeilOp>({c}), one);
        Value t = d.sub(c, base);
        baseIndex = d.castTo(base, i64);
        Value stretch = d.op<MinOp>({scale, one});
        for (int64_t k = 0; k < count; ++k) {
          Value at = d.mul(stretch, d.sub(number(static_cast<double>(first + k)), t));
          weights.push_back(linear ? d.op<MaxOp>({d.sub(one, d.op<AbsOp>({at})), number(0)})
                                   : cubic(at));
        }
      } else {
        Value base = d.op<FloorOp>({c});
        Value t = d.sub(c, base);
        baseIndex = d.castTo(base, i64);
        weights = linear ? SmallVector<Value>{d.sub(one, t), t}
                         : SmallVector<Value>{cubic(d.add(t, one)), cubic(t), cubic(d.sub(one, t)),
                                              cubic(d.sub(number(2), t))};
      }
      bool exclude = !linear && request.excludeOutside;
      SmallVector<Value> indices;
      Value total;
      for (size_t k = 0; k < weights.size(); ++k) {
        Value index = d.add(baseIndex, ctx.scalar(i64, first + static_cast<int64_t>(k)));
        if (exclude) {
          // Taps outside the input weigh nothing; the others are renormalized.
          Value inside =
              d.op<AndOp>({d.compare(ComparisonDirection::ge, index, ctx.scalar(i64, 0)),
                           d.compare(ComparisonDirection::lt, index, ctx.scalar(i64, in))});
          weights[k] = d.select(inside, weights[k], number(0));
        }
        total = total ? d.add(total, weights[k]) : weights[k];
        indices.push_back(index);
      }
      bool normalize = exclude || request.antialias;
      for (auto [k, index] : llvm::enumerate(indices)) {
        Value weight = normalize ? d.div(weights[k], total) : weights[k];
        Value term = d.mul(gathered(index), d.reshape(weight, along));
        next = next ? d.add(next, term) : term;
      }
    }
    if (cropping) {
      // A position outside the input takes the extrapolation value.
      Value outside =
          d.op<OrOp>({d.compare(ComparisonDirection::lt, c, number(0)),
                      d.compare(ComparisonDirection::gt, c, number(static_cast<double>(in - 1)))});
      next = d.select(d.reshape(outside, along), number(request.extrapolationValue), next);
    }
    result = next;
  }
  result = d.castTo(result, element);
  if (!holds)
    return d.finish(result);
  std::string operands = run.scales  ? "scales (input " + std::to_string(run.scalesIndex) + ")"
                         : run.sizes ? "sizes (input " + std::to_string(run.sizesIndex) + ")"
                                     : "roi (input " + std::to_string(run.roiIndex) + ")";
  if (run.scales && run.roi)
    operands += " and roi (input " + std::to_string(run.roiIndex) + ")";
  return finishChecked(d, result, holds,
                       operands + " of the run do not give the output shape " +
                           formatShape(declared.getShape()) + " or change a dimension it keeps");
}

/// Reads `mode`; cubic only when `allowCubic` (Resize from opset 11).
FailureOr<ResizeMode> readResizeMode(NodeContext &ctx, bool allowCubic) {
  std::string mode = ctx.stringAttr("mode", "nearest");
  if (mode == "nearest")
    return ResizeMode::nearest;
  if (mode == "linear")
    return ResizeMode::linear;
  if (allowCubic && mode == "cubic")
    return ResizeMode::cubic;
  ctx.emitError() << "mode '" << mode << "' is not one of 'nearest', 'linear'"
                  << (allowCubic ? ", 'cubic'" : "");
  return failure();
}

/// GridSample: input N x C x D1..Dn and grid N x G1..Gn x n into graph.grid_sample. Opset 16 takes
/// 4-D inputs and names the modes bilinear and bicubic; opset 20 takes 1 to 3 spatial dimensions
/// and names them linear and cubic.
LogicalResult translateGridSample(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireUnusedOutputsFrom(1)))
    return failure();
  bool legacy = ctx.opset() < 20;
  RankedTensorType input = ctx.inputType(0);
  if (legacy && input.getRank() != 4)
    return ctx.emitError() << "takes a 4-D input at opset " << ctx.opset() << ", not " << input;
  std::string modeName = ctx.stringAttr("mode", legacy ? "bilinear" : "linear");
  ResizeMode mode;
  if (modeName == "nearest")
    mode = ResizeMode::nearest;
  else if (modeName == (legacy ? "bilinear" : "linear"))
    mode = ResizeMode::linear;
  else if (modeName == (legacy ? "bicubic" : "cubic"))
    mode = ResizeMode::cubic;
  else
    return ctx.emitError() << "mode '" << modeName << "' is not one of 'nearest', "
                           << (legacy ? "'bilinear', 'bicubic'" : "'linear', 'cubic'");
  if (mode == ResizeMode::cubic && input.getRank() != 4)
    return ctx.emitError() << "cubic sampling takes 2 spatial dimensions; the input is " << input;
  std::string paddingName = ctx.stringAttr("padding_mode", "zeros");
  std::optional<GridSamplePadding> padding = symbolizeGridSamplePadding(paddingName);
  if (!padding)
    return ctx.emitError() << "padding_mode '" << paddingName
                           << "' is not one of 'zeros', 'border', 'reflection'";
  MLIRContext *context = ctx.context();
  Decomposition d(ctx);
  return d.finish(d.op<GridSampleOp>(
      {ctx.input(0), ctx.input(1)},
      {ctx.named("mode", ResizeModeAttr::get(context, mode)),
       ctx.named("padding", GridSamplePaddingAttr::get(context, *padding)),
       ctx.named("align_corners",
                 ctx.builder().getBoolAttr(ctx.intAttr("align_corners", 0) != 0))}));
}

/// Scales (input `scalesIndex`) and roi (input `roiIndex`) of the run over every dimension (-1:
/// that operand is constant).
RunTimeResizeOperands allAxesOfTheRun(NodeContext &ctx, int scalesIndex, int roiIndex) {
  RunTimeResizeOperands run;
  run.scalesIndex = scalesIndex;
  run.roiIndex = roiIndex;
  if (scalesIndex >= 0)
    run.scales = ctx.input(scalesIndex);
  if (roiIndex >= 0)
    run.roi = ctx.input(roiIndex);
  run.axes = llvm::to_vector(llvm::seq<int64_t>(0, ctx.inputType(0).getRank()));
  return run;
}

/// Upsample: scales as an attribute at opset 7, as an input from 9 (a value of the run with a
/// declared output: buildRunTimeResize). Asymmetric coordinates, as Resize at opset 10.
LogicalResult translateUpsample(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.opset() < 9 ? 1 : 2)))
    return failure();
  ResizeRequest request;
  FailureOr<ResizeMode> mode = readResizeMode(ctx, /*allowCubic=*/false);
  if (failed(mode))
    return failure();
  request.mode = *mode;
  request.transform = CoordinateTransform::asymmetric;
  if (ctx.opset() < 9) {
    std::optional<SmallVector<float>> scales = ctx.floatsAttr("scales");
    if (!scales)
      return ctx.emitError() << "attribute 'scales' is required";
    request.scales = *scales;
  } else {
    if (!ctx.constantInput(1))
      return buildRunTimeResize(ctx, std::move(request), allAxesOfTheRun(ctx, 1, -1));
    FailureOr<SmallVector<float>> scales = constantFloats(ctx, 1, "scales");
    if (failed(scales))
      return failure();
    request.scales = *scales;
  }
  return buildResize(ctx, std::move(request));
}

/// Resize from opset 18: scales or sizes list only `axes` (all by default, in that order); the
/// other dimensions keep their size. With keep_aspect_ratio_policy not_larger or not_smaller, sizes
/// give one scale for the listed axes, the smallest or largest size / input, and each listed size
/// becomes round(scale * input). Leaves full-rank scales, sizes or both in `request`, and the
/// listed axes in `listedAxes`.
/// Resize's `axes` from opset 18, normalized (every dimension in order when absent), into
/// `listedAxes`; fails (reported) on a repeated or out-of-range axis.
LogicalResult resizeAxes(NodeContext &ctx, SmallVectorImpl<int64_t> *listedAxes) {
  int64_t rank = ctx.inputType(0).getRank();
  listedAxes->clear();
  std::optional<SmallVector<int64_t>> listed = ctx.intsAttr("axes");
  if (!listed) {
    listedAxes->append(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return success();
  }
  for (int64_t axis : *listed) {
    FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank, "axes");
    if (failed(normalized))
      return failure();
    if (llvm::is_contained(*listedAxes, *normalized))
      return ctx.emitError() << "axes repeat axis " << *normalized;
    listedAxes->push_back(*normalized);
  }
  return success();
}

LogicalResult applyResizeAxes(NodeContext &ctx, ResizeRequest &request,
                              SmallVectorImpl<int64_t> *listedAxes) {
  RankedTensorType input = ctx.inputType(0);
  int64_t rank = input.getRank();
  if (!input.hasStaticShape())
    return ctx.emitError() << "needs a static input shape, but input type is " << input
                           << " (bind it with --shape)";
  if (failed(resizeAxes(ctx, listedAxes)))
    return failure();
  SmallVector<int64_t> axes(listedAxes->begin(), listedAxes->end());
  bool bySizes = !request.sizes.empty();
  size_t given = bySizes ? request.sizes.size() : request.scales.size();
  if (given != axes.size())
    return ctx.emitError() << (bySizes ? "sizes" : "scales") << " has " << given
                           << " entries for " << axes.size() << " axes";
  std::string policy = ctx.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return ctx.emitError() << "keep_aspect_ratio_policy '" << policy
                           << "' is not one of stretch, not_larger, not_smaller";
  SmallVector<float> scales(rank, 1.0f);
  SmallVector<int64_t> sizes(input.getShape());
  if (bySizes && policy != "stretch") {
    bool notLarger = policy == "not_larger";
    double common = notLarger ? std::numeric_limits<double>::infinity() : 0.0;
    for (size_t i = 0; i < axes.size(); ++i) {
      double ratio = static_cast<double>(request.sizes[i]) /
                     static_cast<double>(input.getDimSize(axes[i]));
      common = notLarger ? std::min(common, ratio) : std::max(common, ratio);
    }
    for (int64_t axis : axes) {
      scales[axis] = static_cast<float>(common);
      sizes[axis] = static_cast<int64_t>(std::round(common * input.getDimSize(axis)));
    }
    request.scales = scales;
    request.sizes = sizes;
    return success();
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (bySizes)
      sizes[axes[i]] = request.sizes[i];
    else
      scales[axes[i]] = request.scales[i];
  }
  if (bySizes)
    request.sizes = sizes;
  else
    request.scales = scales;
  return success();
}

/// Resize at opset 10 (X, scales; asymmetric coordinates) and from opset 11 (X, roi, scales,
/// sizes, with coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside).
/// roi only matters for tf_crop_and_resize (the region resized, with extrapolation_value outside
/// the input). Opset 18 adds axes, keep_aspect_ratio_policy and antialias, opset
/// 19 half_pixel_symmetric.
LogicalResult translateResize(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireUnusedOutputsFrom(1)))
    return failure();
  ResizeRequest request;
  bool legacy = ctx.opset() < 11;
  FailureOr<ResizeMode> mode = readResizeMode(ctx, /*allowCubic=*/!legacy);
  if (failed(mode))
    return failure();
  request.mode = *mode;
  if (legacy) {
    if (failed(ctx.requireInputs(2)))
      return failure();
    request.transform = CoordinateTransform::asymmetric;
    if (!ctx.constantInput(1))
      return buildRunTimeResize(ctx, std::move(request), allAxesOfTheRun(ctx, 1, -1));
    FailureOr<SmallVector<float>> scales = constantFloats(ctx, 1, "scales");
    if (failed(scales))
      return failure();
    request.scales = *scales;
    return buildResize(ctx, std::move(request));
  }

  std::string transform = ctx.stringAttr("coordinate_transformation_mode", "half_pixel");
  if (transform == "half_pixel")
    request.transform = CoordinateTransform::half_pixel;
  else if (transform == "pytorch_half_pixel")
    request.transform = CoordinateTransform::pytorch_half_pixel;
  else if (transform == "align_corners")
    request.transform = CoordinateTransform::align_corners;
  else if (transform == "asymmetric")
    request.transform = CoordinateTransform::asymmetric;
  else if (transform == "half_pixel_symmetric" && ctx.opset() >= 19)
    request.transform = CoordinateTransform::half_pixel_symmetric;
  else if (transform == "tf_crop_and_resize")
    request.transform = CoordinateTransform::tf_crop_and_resize;
  else if (transform == "tf_half_pixel_for_nn")
    request.transform = CoordinateTransform::tf_half_pixel_for_nn;
  else
    return ctx.emitError() << "unknown coordinate_transformation_mode '" << transform << "'";

  std::string nearest = ctx.stringAttr("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor")
    request.rounding = NearestRounding::round_prefer_floor;
  else if (nearest == "round_prefer_ceil")
    request.rounding = NearestRounding::round_prefer_ceil;
  else if (nearest == "floor")
    request.rounding = NearestRounding::floor;
  else if (nearest == "ceil")
    request.rounding = NearestRounding::ceil;
  else
    return ctx.emitError() << "unknown nearest_mode '" << nearest << "'";
  request.cubicCoeffA = ctx.floatAttr("cubic_coeff_a", -0.75f);
  request.excludeOutside = ctx.intAttr("exclude_outside", 0) != 0;

  // scales (input 2) and sizes (input 3): exactly one is given; an empty tensor counts as none.
  // Scales of the run (not an empty tensor, which counts as none) go to buildRunTimeResize.
  RunTimeResizeOperands run;
  if (ctx.hasInput(2) && !ctx.constantInput(2) &&
      !(ctx.inputType(2).hasStaticShape() && ctx.inputType(2).getNumElements() == 0)) {
    run.scales = ctx.input(2);
    run.scalesIndex = 2;
  } else if (ctx.hasInput(2) && ctx.constantInput(2)) {
    FailureOr<SmallVector<float>> scales = constantFloats(ctx, 2, "scales");
    if (failed(scales))
      return failure();
    request.scales = *scales;
  }
  std::string policy =
      ctx.opset() >= 18 ? ctx.stringAttr("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (ctx.hasInput(3) && !ctx.knownAtImport(3) && policy != "stretch") {
    // Aspect-keeping sizes of the run: they give the scale, not the output's sizes.
    run.sizes = ctx.input(3);
    run.sizesIndex = 3;
    run.notLarger = policy == "not_larger";
  } else if (ctx.hasInput(3)) {
    // Sizes of the run: the declared output's sizes (along `axes` from opset 18), checked.
    FailureOr<SmallVector<int64_t>> sizes =
        intsKnownOrChecked(ctx, 3, "sizes", 0, [&](RankedTensorType declared) {
          SmallVector<int64_t> derived;
          SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, declared.getRank()));
          if (ctx.opset() >= 18)
            if (std::optional<SmallVector<int64_t>> listed = ctx.intsAttr("axes"))
              axes = *listed;
          for (int64_t axis : axes) {
            if (axis < 0)
              axis += declared.getRank();
            if (axis < 0 || axis >= declared.getRank())
              return FailureOr<SmallVector<int64_t>>(ctx.emitError()
                                                     << "axes has " << axis << ", outside rank "
                                                     << declared.getRank());
            derived.push_back(declared.getDimSize(axis));
          }
          return FailureOr<SmallVector<int64_t>>(derived);
        });
    if (failed(sizes))
      return failure();
    request.sizes = *sizes;
  }
  if ((request.scales.empty() && !run.scales) == (request.sizes.empty() && !run.sizes))
    return ctx.emitError() << "expects exactly one of scales and sizes";
  SmallVector<int64_t> axes;
  if (ctx.opset() >= 18) {
    request.antialias = ctx.intAttr("antialias", 0) != 0 && request.mode != ResizeMode::nearest;
    if (failed(run.scales || run.sizes ? resizeAxes(ctx, &axes)
                                       : applyResizeAxes(ctx, request, &axes)))
      return failure();
  }
  if (request.transform == CoordinateTransform::tf_crop_and_resize) {
    // roi (input 1): starts then ends of the listed axes (every axis by default); the others
    // keep their whole extent, [0, 1].
    int64_t rank = ctx.inputType(0).getRank();
    if (axes.empty())
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    if (!ctx.hasInput(1))
      return ctx.emitError() << "coordinate_transformation_mode 'tf_crop_and_resize' needs roi";
    request.extrapolationValue = ctx.floatAttr("extrapolation_value", 0.0f);
    if (ctx.constantInput(1)) {
      FailureOr<SmallVector<float>> roi = constantFloats(ctx, 1, "roi");
      if (failed(roi))
        return failure();
      size_t count = axes.size();
      if (roi->size() != 2 * count)
        return ctx.emitError() << "roi has " << roi->size() << " entries, expected " << 2 * count;
      request.roi.assign(rank, 0.0f);
      request.roi.append(rank, 1.0f);
      for (size_t i = 0; i < count; ++i) {
        request.roi[axes[i]] = (*roi)[i];
        request.roi[rank + axes[i]] = (*roi)[count + i];
      }
    } else {
      run.roi = ctx.input(1);
      run.roiIndex = 1;
    }
  }
  if (run.scales || run.sizes || run.roi) {
    if (axes.empty())
      for (int64_t d = 0; d < ctx.inputType(0).getRank(); ++d)
        axes.push_back(d);
    run.axes = axes;
    return buildRunTimeResize(ctx, std::move(request), run);
  }
  return buildResize(ctx, std::move(request));
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

} // namespace

void registerResamplingOps(OpTable &table) {
  table.add("", "Resize", {10, 11, 13, 18, 19}, translateResize);
  table.add("", "Upsample", {7, 9}, translateUpsample);
  table.add("", "GridSample", {16, 20, 22}, translateGridSample);
  table.add("", "AffineGrid", 20, translateAffineGrid);
}

} // namespace kiln::onnx_frontend
