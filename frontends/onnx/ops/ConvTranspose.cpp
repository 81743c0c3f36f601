//===- ConvTranspose.cpp - ONNX transposed convolution and Col2Im ---------===//
//
// ConvTranspose (output_shape and auto_pad resolved into explicit pads and output padding) and
// Col2Im.
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
// ConvTranspose
//===----------------------------------------------------------------------===//

/// ConvTranspose (opsets 1 and 11). Explicit pads are taken as they are. With output_shape, or
/// auto_pad SAME_UPPER / SAME_LOWER (target `input * stride`), the total padding is
/// `stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - target`, split with the
/// larger half at the end for SAME_UPPER and at the start otherwise, as the spec states; a
/// negative total (a target beyond the natural size) becomes extra output padding at the end.
LogicalResult translateConvTranspose(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType input = ctx.inputType(0), filter = ctx.inputType(1);
  int64_t rank = input.getRank();
  if (rank < 3 || filter.getRank() != rank)
    return ctx.emitError() << "expects input and filter of the same rank, at least 3; got "
                           << input << " and " << filter;
  size_t spatial = rank - 2;
  SmallVector<int64_t> kernel(filter.getShape().drop_front(2));
  if (std::optional<SmallVector<int64_t>> declared = ctx.intsAttr("kernel_shape")) {
    bool matches = declared->size() == spatial;
    for (size_t i = 0; matches && i < spatial; ++i)
      matches = kernel[i] == kDynamic || kernel[i] == (*declared)[i];
    if (!matches)
      return ctx.emitError() << "kernel_shape does not match filter type " << filter;
    kernel = *declared;
  }
  SmallVector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  SmallVector<int64_t> strides = ctx.intsAttr("strides").value_or(ones);
  SmallVector<int64_t> dilations = ctx.intsAttr("dilations").value_or(ones);
  SmallVector<int64_t> outputPadding = ctx.intsAttr("output_padding").value_or(zeros);
  if (strides.size() != spatial || dilations.size() != spatial ||
      outputPadding.size() != spatial)
    return ctx.emitError() << "strides, dilations and output_padding must have " << spatial
                           << " entries";

  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER" &&
      autoPad != "VALID")
    return ctx.emitError() << "auto_pad '" << autoPad << "' is not one of NOTSET, SAME_UPPER, "
                           << "SAME_LOWER, VALID";
  std::optional<SmallVector<int64_t>> outputShape = ctx.intsAttr("output_shape");
  if (outputShape && outputShape->size() == static_cast<size_t>(rank))
    outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->size() != spatial)
    return ctx.emitError() << "output_shape has " << outputShape->size() << " entries, expected "
                           << spatial;

  SmallVector<int64_t> padLow, padHigh;
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (outputShape || same) {
    for (size_t i = 0; i < spatial; ++i) {
      int64_t in = input.getDimSize(i + 2);
      if (in == kDynamic || kernel[i] == kDynamic)
        return ctx.emitError() << (outputShape ? "output_shape" : "auto_pad " + autoPad)
                               << " needs static spatial dimensions, but input type is " << input
                               << " (bind it with --shape)";
      int64_t target = outputShape ? (*outputShape)[i] : in * strides[i];
      int64_t total = strides[i] * (in - 1) + outputPadding[i] +
                      (kernel[i] - 1) * dilations[i] + 1 - target;
      if (total < 0) {
        outputPadding[i] -= total;
        total = 0;
      }
      int64_t half = total / 2;
      padLow.push_back(autoPad == "SAME_UPPER" ? half : total - half);
      padHigh.push_back(autoPad == "SAME_UPPER" ? total - half : half);
    }
  } else if (autoPad == "VALID") {
    padLow = zeros;
    padHigh = zeros;
  } else {
    SmallVector<int64_t> pads = ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial));
    if (pads.size() != 2 * spatial)
      return ctx.emitError() << "pads has " << pads.size() << " entries, expected "
                             << 2 * spatial;
    padLow.assign(pads.begin(), pads.begin() + spatial);
    padHigh.assign(pads.begin() + spatial, pads.end());
  }

  SmallVector<Value> operands{ctx.input(0), ctx.input(1)};
  if (ctx.hasInput(2))
    operands.push_back(ctx.input(2));
  Decomposition d(ctx);
  return d.finish(d.op<ConvTransposeOp>(
      operands, {ctx.namedArray("strides", strides), ctx.namedArray("dilations", dilations),
                 ctx.namedArray("pad_low", padLow), ctx.namedArray("pad_high", padHigh),
                 ctx.namedArray("output_padding", outputPadding),
                 ctx.namedI64("groups", ctx.intAttr("group", 1))}));
}

/// Col2Im (opset 18): the columns `[N, C * K, L]` of K = prod(block_shape) patches summed back
/// into images of `image_shape` (the inverse of im2col, with overlaps added). This is a grouped
/// transposed convolution: the columns, reshaped to `[N, C * K, B1 ... Bn]` (the blocks' grid),
/// with C groups of one output channel whose K filters are one-hot (filter k has a 1 at the
/// kernel position k), the strides, dilations and pads of the patches, and output padding for the
/// rows and columns past the last block. `image_shape` and `block_shape` must be constants.
LogicalResult translateCol2Im(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<SmallVector<int64_t>> image = ctx.constantInts(1, "image_shape");
  FailureOr<SmallVector<int64_t>> block = ctx.constantInts(2, "block_shape");
  if (failed(image) || failed(block))
    return failure();
  size_t spatial = image->size();
  RankedTensorType input = ctx.inputType(0);
  if (spatial == 0 || block->size() != spatial || input.getRank() != 3)
    return ctx.emitError() << "expects input [N, C * prod(block_shape), L] and image_shape and "
                              "block_shape of the same length, got "
                           << input << ", " << spatial << " and " << block->size() << " entries";
  auto element = llvm::dyn_cast<FloatType>(input.getElementType());
  if (!element)
    return ctx.emitError() << "supports floating-point inputs, got " << input;
  SmallVector<int64_t> ones(spatial, 1);
  SmallVector<int64_t> strides = ctx.intsAttr("strides").value_or(ones);
  SmallVector<int64_t> dilations = ctx.intsAttr("dilations").value_or(ones);
  SmallVector<int64_t> pads = ctx.intsAttr("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
    return ctx.emitError() << "strides and dilations need " << spatial << " entries and pads "
                           << 2 * spatial;
  int64_t patch = 1;
  for (int64_t k : *block)
    patch *= k;
  int64_t channels = input.getDimSize(1), length = input.getDimSize(2);
  if (patch < 1 || channels == kDynamic || channels % patch != 0)
    return ctx.emitError() << "the input's " << channels
                           << " channels are not a multiple of prod(block_shape) = " << patch;
  SmallVector<int64_t> grid, outputPadding, padLow(pads.begin(), pads.begin() + spatial),
      padHigh(pads.begin() + spatial, pads.end());
  int64_t blocks = 1;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t span = (*image)[i] + padLow[i] + padHigh[i] - dilations[i] * ((*block)[i] - 1) - 1;
    if ((*image)[i] < 1 || (*block)[i] < 1 || strides[i] < 1 || dilations[i] < 1 || span < 0)
      return ctx.emitError() << "image dimension " << i << " (" << (*image)[i] << " padded by "
                             << padLow[i] << " and " << padHigh[i] << ") holds no block of "
                             << (*block)[i] << " with dilation " << dilations[i];
    grid.push_back(span / strides[i] + 1);
    outputPadding.push_back(span % strides[i]);
    blocks *= grid.back();
  }
  if (length != kDynamic && length != blocks)
    return ctx.emitError() << "the input has " << length
                           << " blocks; image_shape, block_shape, "
                              "pads, dilations and strides give "
                           << blocks;

  // The one-hot filters [C * K, 1, k1 ... kn]: filter c * K + k has its 1 at kernel position k.
  SmallVector<int64_t> filterShape{channels, 1};
  filterShape.append(block->begin(), block->end());
  const llvm::fltSemantics &semantics = element.getFloatSemantics();
  SmallVector<APFloat> values(static_cast<size_t>(channels * patch), APFloat::getZero(semantics));
  for (int64_t filter = 0; filter < channels; ++filter)
    values[filter * patch + filter % patch] = APFloat(semantics, 1);
  Value filters =
      ctx.constant(DenseElementsAttr::get(RankedTensorType::get(filterShape, element), values));

  Decomposition d(ctx);
  SmallVector<int64_t> gridShape{input.getDimSize(0) == kDynamic ? -1 : input.getDimSize(0),
                                 channels};
  gridShape.append(grid);
  Value columns = d.reshape(ctx.input(0), gridShape);
  return d.finish(d.op<ConvTransposeOp>(
      {columns, filters},
      {ctx.namedArray("strides", strides), ctx.namedArray("dilations", dilations),
       ctx.namedArray("pad_low", padLow), ctx.namedArray("pad_high", padHigh),
       ctx.namedArray("output_padding", outputPadding), ctx.namedI64("groups", channels / patch)}));
}

} // namespace

void registerConvTransposeOps(OpTable &table) {
  table.add("", "ConvTranspose", {1, 11}, translateConvTranspose);
  table.add("", "Col2Im", 18, translateCol2Im);
}

} // namespace kiln::onnx_frontend
