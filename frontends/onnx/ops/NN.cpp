//===- NN.cpp - ONNX linear algebra, convolution, pooling, normalization ----===//
//
// MatMul, Gemm, Conv, the pooling operators, BatchNormalization, LayerNormalization, Softmax and
// LogSoftmax, and the reductions. Convolution and pooling attributes are normalized into the
// explicit strides, dilations and low/high padding the graph dialect carries (auto_pad is resolved
// here, which needs static spatial dimensions).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/OpTable.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include <algorithm>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult translateMatMul(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  return ctx.setResult(ctx.build<MatmulOp>({ctx.input(0), ctx.input(1)}));
}

/// Gemm: the addend is required before opset 11 and optional from 11 on.
LogicalResult translateGemm(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.opset() < 11 ? 3 : 2)))
    return failure();
  SmallVector<Value> operands{ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  OpBuilder &b = ctx.builder();
  return ctx.setResult(ctx.build<GemmOp>(
      operands, {ctx.named("trans_a", b.getBoolAttr(ctx.intAttr("transA", 0) != 0)),
                 ctx.named("trans_b", b.getBoolAttr(ctx.intAttr("transB", 0) != 0)),
                 ctx.named("alpha", b.getF32FloatAttr(ctx.floatAttr("alpha", 1.0f))),
                 ctx.named("beta", b.getF32FloatAttr(ctx.floatAttr("beta", 1.0f)))}));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// The window attributes of a convolution or pooling node, normalized for the graph dialect.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh;
};

/// Reads strides, dilations, pads and auto_pad for `spatial` dimensions of `input` with the
/// given kernel sizes, and resolves SAME_UPPER / SAME_LOWER / VALID padding into explicit pads.
FailureOr<Window> readWindow(NodeContext &ctx, RankedTensorType input, ArrayRef<int64_t> kernel,
                             bool hasDilations) {
  size_t spatial = kernel.size();
  Window window;
  window.kernel.assign(kernel.begin(), kernel.end());
  window.strides = ctx.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  window.dilations = hasDilations
                         ? ctx.intsAttr("dilations").value_or(SmallVector<int64_t>(spatial, 1))
                         : SmallVector<int64_t>(spatial, 1);
  if (window.strides.size() != spatial || window.dilations.size() != spatial) {
    ctx.emitError() << "strides and dilations must have " << spatial << " entries";
    return failure();
  }
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    SmallVector<int64_t> pads =
        ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial) {
      ctx.emitError() << "pads has " << pads.size() << " entries, expected " << 2 * spatial;
      return failure();
    }
    window.padLow.assign(pads.begin(), pads.begin() + spatial);
    window.padHigh.assign(pads.begin() + spatial, pads.end());
    return window;
  }
  if (autoPad == "VALID") {
    window.padLow.assign(spatial, 0);
    window.padHigh.assign(spatial, 0);
    return window;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    ctx.emitError() << "auto_pad '" << autoPad << "' is not one of NOTSET, SAME_UPPER, "
                    << "SAME_LOWER, VALID";
    return failure();
  }
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = input.getDimSize(i + 2);
    if (size == ShapedType::kDynamic || kernel[i] == ShapedType::kDynamic) {
      ctx.emitError() << "auto_pad " << autoPad << " needs static spatial dimensions, but input "
                      << "type is " << input << " (bind it with --shape)";
      return failure();
    }
    int64_t stride = window.strides[i];
    int64_t out = (size + stride - 1) / stride;
    int64_t total = std::max<int64_t>(
        0, (out - 1) * stride + (kernel[i] - 1) * window.dilations[i] + 1 - size);
    int64_t smaller = total / 2, larger = total - total / 2;
    window.padLow.push_back(autoPad == "SAME_UPPER" ? smaller : larger);
    window.padHigh.push_back(autoPad == "SAME_UPPER" ? larger : smaller);
  }
  return window;
}

SmallVector<NamedAttribute> windowAttributes(NodeContext &ctx, const Window &window) {
  return {ctx.namedArray("strides", window.strides), ctx.namedArray("dilations", window.dilations),
          ctx.namedArray("pad_low", window.padLow), ctx.namedArray("pad_high", window.padHigh)};
}

LogicalResult translateConv(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType input = ctx.inputType(0), filter = ctx.inputType(1);
  if (input.getRank() < 3 || filter.getRank() != input.getRank())
    return ctx.emitError() << "expects input and filter of the same rank, at least 3; got "
                           << input << " and " << filter;
  ArrayRef<int64_t> kernel = filter.getShape().drop_front(2);
  if (std::optional<SmallVector<int64_t>> declared = ctx.intsAttr("kernel_shape")) {
    bool matches = declared->size() == kernel.size();
    for (size_t i = 0; matches && i < kernel.size(); ++i)
      matches = kernel[i] == ShapedType::kDynamic || kernel[i] == (*declared)[i];
    if (!matches)
      return ctx.emitError() << "kernel_shape does not match filter type " << filter;
  }
  FailureOr<Window> window = readWindow(ctx, input, kernel, /*hasDilations=*/true);
  if (failed(window))
    return failure();
  SmallVector<Value> operands{ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  SmallVector<NamedAttribute> attributes = windowAttributes(ctx, *window);
  attributes.push_back(ctx.namedI64("groups", ctx.intAttr("group", 1)));
  return ctx.setResult(ctx.build<ConvOp>(operands, attributes));
}

/// MaxPool's Indices output (opset 8 on): for every output element, the position of the
/// window's maximum (the first in the window's row-major order among equals) in the input
/// flattened row-major (storage_order 0) or with the spatial dimensions column-major (1). Each
/// window's elements are gathered from the input flattened per channel by a constant table
/// (positions in the padding read the type's lowest value), their arg-max picked, and the
/// table turns it back into a position.
FailureOr<Value> maxPoolIndices(NodeContext &ctx, const Window &window, ArrayRef<int64_t> kernel,
                                RankedTensorType result) {
  RankedTensorType input = ctx.inputType(0);
  if (!input.hasStaticShape() || !result.hasStaticShape())
    return ctx.emitError() << "the Indices output needs static shapes, not " << input;
  int64_t rank = input.getRank(), spatial = rank - 2;
  int64_t batch = input.getDimSize(0), channels = input.getDimSize(1);
  bool columnMajor = ctx.intAttr("storage_order", 0) != 0;
  // The spatial dimensions' strides row-major (the input's layout) and column-major.
  SmallVector<int64_t> rowStrides(spatial, 1), columnStrides(spatial, 1);
  for (int64_t i = spatial - 2; i >= 0; --i)
    rowStrides[i] = rowStrides[i + 1] * input.getDimSize(i + 3);
  for (int64_t i = 1; i < spatial; ++i)
    columnStrides[i] = columnStrides[i - 1] * input.getDimSize(i + 1);
  ArrayRef<int64_t> indexStrides = columnMajor ? columnStrides : rowStrides;
  int64_t area = spatial == 0 ? 1 : rowStrides[0] * input.getDimSize(2);
  int64_t windows = 1, taps = 1;
  for (int64_t i = 0; i < spatial; ++i) {
    windows *= result.getDimSize(i + 2);
    taps *= kernel[i];
  }
  // gatherAt[w, k]: where tap k of window w reads (area: the padding); indexAt[w, k]: its Index.
  SmallVector<int64_t> gatherAt, indexAt;
  gatherAt.reserve(windows * taps);
  SmallVector<int64_t> out(spatial, 0);
  for (int64_t w = 0; w < windows; ++w) {
    for (int64_t k = 0; k < taps; ++k) {
      int64_t rest = k, flat = 0, index = 0;
      bool inside = true;
      for (int64_t i = spatial - 1; i >= 0; --i) {
        int64_t offset = rest % kernel[i];
        rest /= kernel[i];
        int64_t at = out[i] * window.strides[i] - window.padLow[i] + offset * window.dilations[i];
        inside &= at >= 0 && at < input.getDimSize(i + 2);
        flat += at * rowStrides[i];
        index += at * indexStrides[i];
      }
      gatherAt.push_back(inside ? flat : area);
      indexAt.push_back(inside ? index : 0);
    }
    for (int64_t i = spatial - 1; i >= 0; --i) {
      if (++out[i] < result.getDimSize(i + 2))
        break;
      out[i] = 0;
    }
  }
  Type i64 = ctx.builder().getI64Type();
  Type element = input.getElementType();
  double lowest = -std::numeric_limits<double>::infinity();
  if (auto integer = llvm::dyn_cast<IntegerType>(element))
    lowest = integer.isUnsigned() ? 0.0 : -std::ldexp(1.0, integer.getWidth() - 1);
  Decomposition d(ctx);
  auto table = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return ctx.constant(DenseElementsAttr::get(RankedTensorType::get(shape, i64), values));
  };
  Value flat = d.reshape(ctx.input(0), {batch, channels, area});
  Attribute lowestAttr = llvm::isa<FloatType>(element)
                             ? Attribute(FloatAttr::get(element, lowest))
                             : Attribute(IntegerAttr::get(element, static_cast<int64_t>(lowest)));
  Value padding = ctx.constant(
      DenseElementsAttr::get(RankedTensorType::get({batch, channels, 1}, element), lowestAttr));
  Value padded = d.concat({flat, padding}, 2);
  Value gathered =
      d.op<GatherOp>({padded, table({windows, taps}, gatherAt)}, {ctx.namedI64("axis", 2)});
  Value tap = d.op<ArgMaxOp>({gathered}, {ctx.namedI64("axis", 3)});
  // Position w * taps + tap in indexAt, plus the batch's and channel's offsets.
  SmallVector<int64_t> windowStarts;
  for (int64_t w = 0; w < windows; ++w)
    windowStarts.push_back(w * taps);
  SmallVector<int64_t> planeStarts;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      planeStarts.push_back((n * channels + c) * area);
  Value chosen = d.add(tap, table({windows}, windowStarts));
  Value spatialIndex =
      d.op<GatherOp>({table({windows * taps}, indexAt), chosen}, {ctx.namedI64("axis", 0)});
  Value indices = d.add(spatialIndex, table({batch, channels, 1}, planeStarts));
  Value shaped = d.reshape(indices, result.getShape());
  if (d.failed())
    return failure();
  return shaped;
}

/// MaxPool (dilations and ceil_mode from opset 10, the Indices output from 8) and AveragePool
/// (ceil_mode from 10, dilations from 19).
template <typename OpTy>
LogicalResult translateWindowPool(NodeContext &ctx) {
  constexpr bool isMax = std::is_same_v<OpTy, MaxPoolOp>;
  if (failed(ctx.requireInputs(1)) || failed(ctx.requireUnusedOutputsFrom(isMax ? 2 : 1)))
    return failure();
  RankedTensorType input = ctx.inputType(0);
  std::optional<SmallVector<int64_t>> kernel = ctx.intsAttr("kernel_shape");
  if (!kernel)
    return ctx.emitError() << "attribute 'kernel_shape' is required";
  if (input.getRank() != static_cast<int64_t>(kernel->size()) + 2)
    return ctx.emitError() << "kernel_shape has " << kernel->size() << " entries for input type "
                           << input;
  bool hasDilations = isMax ? ctx.opset() >= 10 : ctx.opset() >= 19;
  FailureOr<Window> window = readWindow(ctx, input, *kernel, hasDilations);
  if (failed(window))
    return failure();
  OpBuilder &b = ctx.builder();
  SmallVector<NamedAttribute> attributes = windowAttributes(ctx, *window);
  attributes.push_back(ctx.namedArray("kernel_shape", *kernel));
  attributes.push_back(
      ctx.named("ceil_mode", b.getBoolAttr(ctx.opset() >= 10 && ctx.intAttr("ceil_mode", 0))));
  if constexpr (!isMax)
    attributes.push_back(ctx.named("count_include_pad",
                                   b.getBoolAttr(ctx.intAttr("count_include_pad", 0) != 0)));
  FailureOr<Value> pooled = ctx.build<OpTy>({ctx.input(0)}, attributes);
  if (failed(pooled))
    return failure();
  if (isMax && ctx.outputUsed(1)) {
    FailureOr<Value> indices =
        maxPoolIndices(ctx, *window, *kernel, llvm::cast<RankedTensorType>(pooled->getType()));
    if (failed(indices))
      return failure();
    ctx.setOutput(1, *indices);
  }
  ctx.setOutput(0, *pooled);
  return success();
}

template <typename OpTy>
LogicalResult translateGlobalPool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  return ctx.setResult(ctx.build<OpTy>({ctx.input(0)}));
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

/// BatchNormalization with training_mode = 1 (opsets 14 and 15): Y normalized with the batch's
/// own mean and (population) variance over every axis but the channel axis 1, and the optional
/// outputs running_mean = mean x momentum + batch mean x (1 - momentum), likewise running_var.
LogicalResult translateTrainingBatchNormalization(NodeContext &ctx, NamedAttribute epsilon) {
  Value x = ctx.input(0);
  int64_t rank = ctx.inputType(0).getRank();
  if (rank < 2)
    return ctx.emitError() << "X has rank " << rank << "; training mode needs a channel axis 1";
  SmallVector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  auto reduceMean = [&](Decomposition &d, Value value, bool keep) {
    return d.op<ReduceMeanOp>({value}, {ctx.namedArray("axes", axes),
                                        ctx.named("keepdims", ctx.builder().getBoolAttr(keep))});
  };
  Decomposition d(ctx);
  // One mean: kept as 1 x C x 1 ... for centering, seen as C for the normalization.
  Value keptMean = reduceMean(d, x, /*keep=*/true);
  Value centered = d.sub(x, keptMean);
  Value mean = d.reshape(keptMean, reshapeTarget({ctx.inputType(0).getDimSize(1)}));
  Value variance = reduceMean(d, d.mul(centered, centered), /*keep=*/false);
  Value y = d.op<BatchNormOp>({x, ctx.input(1), ctx.input(2), mean, variance}, {epsilon});
  double momentum = ctx.floatAttr("momentum", 0.9f);
  auto running = [&](Value previous, Value current) {
    return d.add(d.mul(previous, d.scalar(previous, momentum)),
                 d.mul(current, d.scalar(current, 1.0 - momentum)));
  };
  Value runningMean = ctx.outputUsed(1) ? running(ctx.input(3), mean) : Value();
  Value runningVariance = ctx.outputUsed(2) ? running(ctx.input(4), variance) : Value();
  if (d.failed())
    return failure();
  ctx.setOutput(0, y);
  if (runningMean)
    ctx.setOutput(1, runningMean);
  if (runningVariance)
    ctx.setOutput(2, runningVariance);
  return success();
}

LogicalResult translateBatchNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(5)))
    return failure();
  if (ctx.opset() < 9 && ctx.intAttr("spatial", 1) == 0)
    return ctx.emitError() << "spatial = 0 (per-activation statistics) is not supported";
  NamedAttribute epsilon =
      ctx.named("epsilon", ctx.builder().getF32FloatAttr(ctx.floatAttr("epsilon", 1e-5f)));
  if (ctx.intAttr("training_mode", 0) != 0) {
    if (ctx.opset() < 14)
      return ctx.emitError() << "training_mode before opset 14 is not supported";
    if (failed(ctx.requireUnusedOutputsFrom(3)))
      return failure();
    return translateTrainingBatchNormalization(ctx, epsilon);
  }
  if (failed(ctx.requireUnusedOutputsFrom(1)))
    return failure();
  SmallVector<Value> operands;
  for (int i = 0; i < 5; ++i)
    operands.push_back(ctx.input(i));
  return ctx.setResult(ctx.build<BatchNormOp>(operands, {epsilon}));
}

/// The Mean and InvStdDev outputs of LayerNormalization: statistics over dimensions
/// [axis, rank) with the reduced dimensions kept, computed in the stash type (float by default).
LogicalResult layerNormStatistics(NodeContext &ctx, int64_t axis, float epsilon) {
  Value x = ctx.input(0);
  RankedTensorType type = ctx.inputType(0);
  if (ctx.intAttr("stash_type", 1) != 1)
    return ctx.emitError() << "stash_type " << ctx.intAttr("stash_type", 1)
                           << " is not supported (only 1, float)";
  Type f32 = ctx.builder().getF32Type();
  if (type.getElementType() != f32) {
    FailureOr<Value> cast = ctx.build<CastOp>({x}, {ctx.named("to", TypeAttr::get(f32))});
    if (failed(cast))
      return failure();
    x = *cast;
  }
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < type.getRank(); ++d)
    axes.push_back(d);
  SmallVector<NamedAttribute> reduce{ctx.namedArray("axes", axes),
                                     ctx.named("keepdims", ctx.builder().getBoolAttr(true))};
  FailureOr<Value> mean = ctx.build<ReduceMeanOp>({x}, reduce);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = ctx.build<SubOp>({x, *mean});
  if (failed(centered))
    return failure();
  FailureOr<Value> squared = ctx.build<MulOp>({*centered, *centered});
  if (failed(squared))
    return failure();
  FailureOr<Value> variance = ctx.build<ReduceMeanOp>({*squared}, reduce);
  if (failed(variance))
    return failure();
  FailureOr<Value> shifted = ctx.build<AddOp>({*variance, ctx.scalar(f32, epsilon)});
  if (failed(shifted))
    return failure();
  FailureOr<Value> invStdDev = ctx.build<RsqrtOp>({*shifted});
  if (failed(invStdDev))
    return failure();
  ctx.setOutput(1, *mean);
  ctx.setOutput(2, *invStdDev);
  return success();
}

LogicalResult translateLayerNormalization(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireUnusedOutputsFrom(3)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", -1), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  float epsilon = ctx.floatAttr("epsilon", 1e-5f);
  SmallVector<Value> operands{ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  if (failed(ctx.setResult(ctx.build<LayerNormOp>(
          operands, {ctx.namedI64("axis", *axis),
                     ctx.named("epsilon", ctx.builder().getF32FloatAttr(epsilon))}))))
    return failure();
  if (ctx.outputUsed(1) || ctx.outputUsed(2))
    return layerNormStatistics(ctx, *axis, epsilon);
  return success();
}

/// Softmax and LogSoftmax. From opset 13 they work along one axis (default -1). Before 13 the
/// input is coerced to a matrix at `axis` (default 1) and normalized along its second dimension:
/// flatten, normalize along dimension 1, reshape back.
template <typename OpTy>
LogicalResult translateSoftmax(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  bool coerced = ctx.opset() < 13;
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", coerced ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  if (!coerced || *axis == rank - 1)
    return ctx.setResult(ctx.build<OpTy>({ctx.input(0)}, {ctx.namedI64("axis", *axis)}));
  SmallVector<int64_t> shape;
  for (int64_t size : type.getShape())
    shape.push_back(size == ShapedType::kDynamic ? -1 : size);
  if (llvm::count(shape, -1) > 1)
    return ctx.emitError() << "opset " << ctx.opset() << " normalizes over dimensions " << *axis
                           << " and up together; with input type " << type
                           << " the result cannot be reshaped back (bind the shapes with --shape)";
  FailureOr<Value> flat = ctx.build<FlattenOp>({ctx.input(0)}, {ctx.namedI64("axis", *axis)});
  if (failed(flat))
    return failure();
  FailureOr<Value> normalized = ctx.build<OpTy>({*flat}, {ctx.namedI64("axis", 1)});
  if (failed(normalized))
    return failure();
  return ctx.setResult(ctx.build<ReshapeOp>({*normalized}, {ctx.namedArray("shape", shape)}));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Reduces `x` with `OpTy` over axes that are a value of the run (input 1, not empty): every
/// choice of axes that gives the declared shape is reduced, and the run's axes select one (a
/// check fails the run when they name none). Choices that differ only in dimensions of size 1
/// compute the same values and are reduced once.
template <typename OpTy> FailureOr<Value> reduceOverRunTimeAxes(NodeContext &ctx, Value x) {
  RankedTensorType declared = declaredResultType(ctx, 0, 1, "axes");
  if (!declared)
    return failure();
  auto type = llvm::cast<RankedTensorType>(x.getType());
  if (!type.hasStaticShape())
    return ctx.emitError() << "axes (input 1) is known only at run time and input type " << type
                           << " is not static; bind the graph inputs' shapes with --shape";
  bool keepDims = ctx.intAttr("keepdims", 1) != 0;
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  auto candidates =
      masksOf(ctx, "axes (input 1)", rank, runTimeLength(ctx, 1), [&](ArrayRef<int64_t> mask) {
        SmallVector<int64_t> reduced;
        for (int64_t p = 0; p < rank; ++p)
          if (!mask[p] || keepDims)
            reduced.push_back(mask[p] ? 1 : shape[p]);
        return ArrayRef<int64_t>(reduced) == declared.getShape();
      });
  Decomposition d(ctx);
  Value mask = axesMask(d, runTimeVector(d, 1, "axes"), rank);
  if (failed(candidates) || d.failed() ||
      failed(checkMaskIsOneOf(d, mask, *candidates, "axes (input 1)", declared)))
    return failure();
  // One reduction per set of axes of size > 1, reshaped to the declared shape; the last one
  // is what the run gets when no earlier one's axes match (the check then fails the run).
  SmallVector<SmallVector<int64_t>> computed;
  Value result;
  for (const SmallVector<int64_t> &candidate : llvm::reverse(*candidates)) {
    SmallVector<int64_t> axes;
    for (int64_t p = 0; p < rank; ++p)
      if (candidate[p] && shape[p] != 1)
        axes.push_back(p);
    if (llvm::is_contained(computed, axes))
      continue;
    Value reducedValue =
        axes.empty() ? x
                     : d.op<OpTy>({x}, {ctx.namedArray("axes", axes),
                                        ctx.named("keepdims", ctx.builder().getBoolAttr(true))});
    reducedValue = d.reshape(reducedValue, declared.getShape());
    if (!result) {
      result = reducedValue;
    } else {
      // Selected when the run's axes are any of the choices that reduce these dimensions.
      Value chosen;
      for (const SmallVector<int64_t> &other : *candidates) {
        bool same = true;
        for (int64_t p = 0; p < rank; ++p)
          same &= (other[p] && shape[p] != 1) == llvm::is_contained(axes, p);
        if (!same)
          continue;
        Value matches = equalsConstant(d, mask, other);
        chosen = chosen ? d.op<OrOp>({chosen, matches}) : matches;
      }
      result = d.select(chosen, reducedValue, result);
    }
    computed.push_back(axes);
  }
  if (d.failed() || !result)
    return failure();
  return result;
}

/// Reduces `x` with `OpTy` over the node's axes: an attribute before `axesInputSince`, an
/// optional input from then on (with noop_with_empty_axes; a value of the run is handled by
/// reduceOverRunTimeAxes). No axes means every axis.
template <typename OpTy>
FailureOr<Value> reduce(NodeContext &ctx, Value x, int64_t axesInputSince) {
  int64_t rank = llvm::cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<int64_t> axes;
  bool noop = false;
  if (ctx.opset() < axesInputSince) {
    axes = ctx.intsAttr("axes").value_or(SmallVector<int64_t>());
  } else if (ctx.hasInput(1) && !ctx.knownAtImport(1)) {
    return reduceOverRunTimeAxes<OpTy>(ctx, x);
  } else {
    if (ctx.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> input = ctx.constantInts(1, "axes");
      if (failed(input))
        return failure();
      axes = *input;
    }
    noop = ctx.intAttr("noop_with_empty_axes", 0) != 0;
  }
  if (axes.empty()) {
    if (noop)
      return x;
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(ctx, axes, rank);
  if (failed(normalized))
    return failure();
  return ctx.build<OpTy>({x}, {ctx.namedArray("axes", *normalized),
                               ctx.named("keepdims", ctx.builder().getBoolAttr(
                                                         ctx.intAttr("keepdims", 1) != 0))});
}

template <typename OpTy, int64_t AxesInputSince>
LogicalResult translateReduce(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  Type element = llvm::cast<RankedTensorType>(x.getType()).getElementType();
  // Boolean max and min (ReduceMax/ReduceMin from opset 20): any and all, as the maximum and
  // minimum of 0s and 1s in uint8 (an empty reduction gives uint8's 0 and 255, false and true).
  if constexpr (std::is_same_v<OpTy, ReduceMaxOp> || std::is_same_v<OpTy, ReduceMinOp>) {
    if (element.isInteger(1)) {
      Type byte = IntegerType::get(ctx.builder().getContext(), 8, IntegerType::Unsigned);
      FailureOr<Value> widened = ctx.build<CastOp>({x}, {ctx.named("to", TypeAttr::get(byte))});
      if (failed(widened))
        return failure();
      FailureOr<Value> reduced = reduce<OpTy>(ctx, *widened, AxesInputSince);
      if (failed(reduced))
        return failure();
      return ctx.setResult(
          ctx.build<CastOp>({*reduced}, {ctx.named("to", TypeAttr::get(element))}));
    }
  }
  return ctx.setResult(reduce<OpTy>(ctx, x, AxesInputSince));
}

/// The reductions built from a sum: an elementwise step before it and one after.
enum class SumReduction { L1, L2, SumSquare, LogSum, LogSumExp };

template <SumReduction Kind>
LogicalResult translateSumReduction(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  FailureOr<Value> before = x;
  if constexpr (Kind == SumReduction::L1)
    before = ctx.build<AbsOp>({x});
  else if constexpr (Kind == SumReduction::L2 || Kind == SumReduction::SumSquare)
    before = ctx.build<MulOp>({x, x});
  else if constexpr (Kind == SumReduction::LogSumExp)
    before = ctx.build<ExpOp>({x});
  if (failed(before))
    return failure();
  FailureOr<Value> sum = reduce<ReduceSumOp>(ctx, *before, /*axesInputSince=*/18);
  if (failed(sum))
    return failure();
  if constexpr (Kind == SumReduction::L2)
    return ctx.setResult(ctx.build<SqrtOp>({*sum}));
  else if constexpr (Kind == SumReduction::LogSum || Kind == SumReduction::LogSumExp)
    return ctx.setResult(ctx.build<LogOp>({*sum}));
  return ctx.setResult(sum);
}

} // namespace

void registerNNOps(OpTable &table) {
  table.add("", "MatMul", {1, 9, 13}, translateMatMul);
  table.add("", "Gemm", {7, 9, 11, 13}, translateGemm);

  table.add("", "Conv", {1, 11}, translateConv);
  table.add("", "MaxPool", {1, 8, 10, 11, 12}, translateWindowPool<MaxPoolOp>);
  table.add("", "AveragePool", {7, 10, 11, 19}, translateWindowPool<AvgPoolOp>);
  table.add("", "GlobalAveragePool", 1, translateGlobalPool<GlobalAvgPoolOp>);
  table.add("", "GlobalMaxPool", 1, translateGlobalPool<GlobalMaxPoolOp>);

  table.add("", "BatchNormalization", {7, 9, 14, 15}, translateBatchNormalization);
  table.add("", "LayerNormalization", 17, translateLayerNormalization);
  table.add("", "Softmax", {1, 11, 13}, translateSoftmax<SoftmaxOp>);
  table.add("", "LogSoftmax", {1, 11, 13}, translateSoftmax<LogSoftmaxOp>);

  table.add("", "ReduceSum", {1, 11, 13}, translateReduce<ReduceSumOp, 13>);
  table.add("", "ReduceMean", {1, 11, 13, 18}, translateReduce<ReduceMeanOp, 18>);
  table.add("", "ReduceMax", {1, 11, 12, 13, 18, 20}, translateReduce<ReduceMaxOp, 18>);
  table.add("", "ReduceMin", {1, 11, 12, 13, 18, 20}, translateReduce<ReduceMinOp, 18>);
  table.add("", "ReduceProd", {1, 11, 13, 18}, translateReduce<ReduceProdOp, 18>);
  table.add("", "ReduceL1", {1, 11, 13, 18}, translateSumReduction<SumReduction::L1>);
  table.add("", "ReduceL2", {1, 11, 13, 18}, translateSumReduction<SumReduction::L2>);
  table.add("", "ReduceSumSquare", {1, 11, 13, 18},
            translateSumReduction<SumReduction::SumSquare>);
  table.add("", "ReduceLogSum", {1, 11, 13, 18}, translateSumReduction<SumReduction::LogSum>);
  table.add("", "ReduceLogSumExp", {1, 11, 13, 18},
            translateSumReduction<SumReduction::LogSumExp>);
}

} // namespace kiln::onnx_frontend
