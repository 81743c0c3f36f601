//===- Pooling.cpp - ONNX pooling operators without a graph op ------------===//
//
// LpPool and GlobalLpPool, decomposed into powers and sums over windows, and MaxUnpool as a
// scatter (MaxPool, AveragePool and the global pools, which have graph ops, are in NN.cpp).
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
// Lp pooling
//===----------------------------------------------------------------------===//

/// LpPool (opsets 2, 11 and 18): (sum of |x|^p over each window)^(1/p), p = 2 by default. The
/// window sum is an average pool that counts the zero padding, times the window size. Opset 18
/// adds dilations and ceil_mode; ceil_mode = 1 is refused, as the partial windows it adds would
/// be averaged over fewer elements.
LogicalResult translateLpPool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType input = ctx.inputType(0);
  std::optional<SmallVector<int64_t>> kernel = ctx.intsAttr("kernel_shape");
  if (!kernel)
    return ctx.emitError() << "attribute 'kernel_shape' is required";
  size_t spatial = kernel->size();
  if (input.getRank() != static_cast<int64_t>(spatial) + 2)
    return ctx.emitError() << "kernel_shape has " << spatial << " entries for input type "
                           << input;
  SmallVector<int64_t> strides = ctx.intsAttr("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations(spatial, 1);
  if (ctx.opset() >= 18) {
    dilations = ctx.intsAttr("dilations").value_or(dilations);
    if (ctx.intAttr("ceil_mode", 0) != 0)
      return ctx.emitError() << "ceil_mode = 1 is not supported";
  }
  if (strides.size() != spatial || dilations.size() != spatial)
    return ctx.emitError() << "strides and dilations must have " << spatial << " entries";
  SmallVector<int64_t> padLow, padHigh;
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    SmallVector<int64_t> pads = ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial));
    if (pads.size() != 2 * spatial)
      return ctx.emitError() << "pads has " << pads.size() << " entries, expected "
                             << 2 * spatial;
    padLow.assign(pads.begin(), pads.begin() + spatial);
    padHigh.assign(pads.begin() + spatial, pads.end());
  } else if (autoPad == "VALID") {
    padLow.assign(spatial, 0);
    padHigh.assign(spatial, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      int64_t size = input.getDimSize(i + 2);
      if (size == kDynamic)
        return ctx.emitError() << "auto_pad " << autoPad << " needs static spatial dimensions, "
                               << "but input type is " << input << " (bind it with --shape)";
      int64_t out = (size + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[i] + ((*kernel)[i] - 1) * dilations[i] + 1 - size);
      int64_t smaller = total / 2, larger = total - smaller;
      padLow.push_back(autoPad == "SAME_UPPER" ? smaller : larger);
      padHigh.push_back(autoPad == "SAME_UPPER" ? larger : smaller);
    }
  } else {
    return ctx.emitError() << "auto_pad '" << autoPad << "' is not one of NOTSET, SAME_UPPER, "
                           << "SAME_LOWER, VALID";
  }
  int64_t p = ctx.intAttr("p", 2);
  if (p < 1)
    return ctx.emitError() << "p must be positive, got " << p;
  int64_t windowSize = 1;
  for (int64_t size : *kernel)
    windowSize *= size;
  OpBuilder &b = ctx.builder();
  Decomposition d(ctx);
  Value x = ctx.input(0);
  Value average = d.op<AvgPoolOp>(
      {absolutePower(d, x, p)},
      {ctx.namedArray("kernel_shape", *kernel), ctx.namedArray("strides", strides),
       ctx.namedArray("dilations", dilations),
       ctx.namedArray("pad_low", padLow), ctx.namedArray("pad_high", padHigh),
       ctx.named("ceil_mode", b.getBoolAttr(false)),
       ctx.named("count_include_pad", b.getBoolAttr(true))});
  Value sum = d.mul(average, d.scalar(x, static_cast<double>(windowSize)));
  return d.finish(rootOfOrder(d, sum, p));
}

/// GlobalLpPool (opset 2): (sum of |x|^p over the spatial dimensions)^(1/p), p = 2 by default.
LogicalResult translateGlobalLpPool(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  if (rank < 3)
    return ctx.emitError() << "expects an input of rank 3 or more, got " << ctx.inputType(0);
  int64_t p = ctx.intAttr("p", 2);
  if (p < 1)
    return ctx.emitError() << "p must be positive, got " << p;
  Decomposition d(ctx);
  Value sum =
      reduceKeepingDims<ReduceSumOp>(d, absolutePower(d, ctx.input(0), p), spatialAxes(rank));
  return d.finish(rootOfOrder(d, sum, p));
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

} // namespace

void registerPoolingOps(OpTable &table) {
  table.add("", "LpPool", {2, 11, 18}, translateLpPool);
  table.add("", "GlobalLpPool", 2, translateGlobalLpPool);
  table.add("", "MaxUnpool", {9, 11}, translateMaxUnpool);
}

} // namespace kiln::onnx_frontend
