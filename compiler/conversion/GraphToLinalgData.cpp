//===- GraphToLinalgData.cpp - Lower graph data-movement ops ----------------===//
//
// Concat, expand, slice, pad, gather and split become tensor ops (concat, extract_slice, pad)
// where those express them, and otherwise linalg.generic ops that compute each result index and
// read the input with tensor.extract (negative strides, reflect and edge padding, gather).
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/LinalgBuilders.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kiln::graph;
using namespace kiln::conversion;

namespace {

struct ConcatLowering : GraphLowering<ConcatOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    // Operands empty along the axis add nothing; tensor.concat would insert one past the end
    // when it is last, which tensor.insert_slice rejects.
    int64_t axis = static_cast<int64_t>(op.getAxis());
    SmallVector<Value> inputs;
    for (Value input : adaptor.getInputs())
      if (llvm::cast<RankedTensorType>(input.getType()).getDimSize(axis) != 0)
        inputs.push_back(input);
    if (inputs.empty())
      inputs.push_back(adaptor.getInputs().front());
    RankedTensorType resultType = signlessType(op.getResult());
    if (inputs.size() == 1 && inputs.front().getType() == resultType) {
      rewriter.replaceOp(op, inputs.front());
      return success();
    }
    auto concat = tensor::ConcatOp::create(rewriter, op.getLoc(), resultType, axis, inputs);
    rewriter.replaceOp(op, concat.getResult());
    return success();
  }
};

struct ExpandLowering : GraphLowering<ExpandOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = signlessType(op.getResult());
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    // A dynamic result dimension is the input's where it is dynamic, else the graph's size of
    // the run for the entry (the input's dimension is 1 there).
    SmallVector<Value> dynamicSizes;
    SmallVector<OpFoldResult> shape =
        getMixedValues(op.getShape(), adaptor.getSizes(), rewriter.getContext());
    int64_t rank = resultType.getRank(), offset = rank - inputType.getRank();
    int64_t shapeOffset = rank - static_cast<int64_t>(shape.size());
    for (int64_t d = 0; d < rank; ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      int64_t aligned = d - offset, entry = d - shapeOffset;
      if (aligned >= 0 && inputType.isDynamicDim(aligned)) {
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, aligned));
        continue;
      }
      Value size = entry >= 0 ? llvm::dyn_cast<Value>(shape[entry]) : Value();
      if (!size)
        return rewriter.notifyMatchFailure(op, "a dynamic result dimension has no size");
      dynamicSizes.push_back(size);
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(), dynamicSizes);
    Value result = buildGeneric(rewriter, loc, resultType, ValueRange{input},
                                {broadcastMap(rewriter.getContext(), inputType, resultType)}, init,
                                [](OpBuilder &, Location, ValueRange args) { return args[0]; });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : GraphLowering<SliceOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = signlessType(op.getResult());
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    ArrayRef<int64_t> starts = op.getStarts(), limits = op.getLimits(),
                      strides = op.getStrides();
    // A dynamic dimension's start and limit may lie past its run-time size (frontends cannot
    // clamp them): clamp here, then count the steps.
    SmallVector<OpFoldResult> offsets, sizes, steps;
    SmallVector<Value> dynamicSizes;
    ValueRange dynamicLimits = adaptor.getDynamicLimits();
    for (int64_t d = 0; d < resultType.getRank(); ++d) {
      steps.push_back(rewriter.getIndexAttr(strides[d]));
      if (limits[d] == ShapedType::kDynamic) {
        // A limit of the run (positive stride), clamped to the dimension as ONNX clamps it;
        // the start lies within the dimension.
        Value dim =
            inputType.isDynamicDim(d)
                ? Value(tensor::DimOp::create(rewriter, loc, input, d))
                : Value(arith::ConstantIndexOp::create(rewriter, loc, inputType.getDimSize(d)));
        Value start = arith::ConstantIndexOp::create(rewriter, loc, starts[d]);
        if (inputType.isDynamicDim(d))
          start = arith::MinSIOp::create(rewriter, loc, start, dim);
        Value limit = arith::MinSIOp::create(rewriter, loc, dynamicLimits.front(), dim);
        dynamicLimits = dynamicLimits.drop_front();
        Value span = arith::MaxSIOp::create(rewriter, loc,
                                            arith::SubIOp::create(rewriter, loc, limit, start),
                                            arith::ConstantIndexOp::create(rewriter, loc, 0));
        Value size = arith::CeilDivSIOp::create(
            rewriter, loc, span, arith::ConstantIndexOp::create(rewriter, loc, strides[d]));
        offsets.push_back(start);
        if (resultType.isDynamicDim(d)) {
          sizes.push_back(size);
          dynamicSizes.push_back(size);
        } else {
          sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(d)));
        }
        continue;
      }
      if (!inputType.isDynamicDim(d) || strides[d] < 0) {
        int64_t span = strides[d] > 0 ? limits[d] - starts[d] : starts[d] - limits[d];
        int64_t step = std::abs(strides[d]);
        int64_t size = (span + step - 1) / step;
        // An empty slice reads nothing and starts at 0: a start at the end of the dimension,
        // which the op allows, is out of bounds for tensor.extract_slice.
        offsets.push_back(rewriter.getIndexAttr(size == 0 ? 0 : starts[d]));
        if (resultType.isDynamicDim(d)) {
          Value value = arith::ConstantIndexOp::create(rewriter, loc, size);
          sizes.push_back(value);
          dynamicSizes.push_back(value);
        } else {
          sizes.push_back(rewriter.getIndexAttr(size));
        }
        continue;
      }
      Value dim = tensor::DimOp::create(rewriter, loc, input, d);
      Value start = arith::MinSIOp::create(
          rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, starts[d]), dim);
      Value limit = arith::MinSIOp::create(
          rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, limits[d]), dim);
      Value span = arith::SubIOp::create(rewriter, loc, limit, start);
      Value size = arith::CeilDivSIOp::create(
          rewriter, loc, span, arith::ConstantIndexOp::create(rewriter, loc, strides[d]));
      offsets.push_back(start);
      if (resultType.isDynamicDim(d)) {
        sizes.push_back(size);
        dynamicSizes.push_back(size);
      } else {
        sizes.push_back(rewriter.getIndexAttr(resultType.getDimSize(d)));
      }
    }
    if (llvm::all_of(strides, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, resultType, input, offsets, sizes,
                                                          steps);
      return success();
    }
    // Negative strides: read input index start + i * stride.
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(), dynamicSizes);
    Value result = buildIndexedRead(
        rewriter, loc, resultType, input, {}, {}, init,
        [&](OpBuilder &b, Location l, ValueRange indices, ValueRange) {
          SmallVector<Value> source;
          for (auto [d, index] : llvm::enumerate(indices)) {
            Value step = arith::ConstantIndexOp::create(b, l, strides[d]);
            Value start = getValueOrCreateConstantIndexOp(b, l, offsets[d]);
            source.push_back(arith::AddIOp::create(
                b, l, start, arith::MulIOp::create(b, l, index, step)));
          }
          return source;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DimLowering : GraphLowering<DimOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(DimOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::DimOp>(op, adaptor.getInput(),
                                               static_cast<int64_t>(op.getDim()));
    return success();
  }
};

struct ShapeOfLowering : GraphLowering<ShapeOfOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ShapeOfOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
    SmallVector<Value> dims;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      dims.push_back(
          arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                     tensor::DimOp::create(rewriter, loc, adaptor.getInput(), d)));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, signlessType(op.getResult()), dims);
    return success();
  }
};

/// iota: each element its position, converted to the element type.
struct IotaLowering : GraphLowering<IotaOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = signlessType(op.getResult());
    Location loc = op.getLoc();
    SmallVector<Value> dynamicSizes;
    if (resultType.isDynamicDim(0))
      dynamicSizes.push_back(adaptor.getLength());
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(), dynamicSizes);
    Type element = resultType.getElementType();
    auto map = AffineMap::getMultiDimIdentityMap(1, rewriter.getContext());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{map}, ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value index = linalg::IndexOp::create(b, l, 0);
          Value wide = arith::IndexCastOp::create(b, l, b.getI64Type(), index);
          Value value;
          if (llvm::isa<FloatType>(element))
            value = arith::SIToFPOp::create(b, l, element, wide);
          else if (element.getIntOrFloatBitWidth() < 64)
            value = arith::TruncIOp::create(b, l, element, wide);
          else
            value = wide;
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct PadLowering : GraphLowering<PadOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(PadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = signlessType(op.getResult());
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    ArrayRef<int64_t> low = op.getPadLow(), high = op.getPadHigh();
    if (op.getMode() == PadMode::constant) {
      // Negative amounts crop first; the rest pads.
      bool crops = llvm::any_of(low, [](int64_t p) { return p < 0; }) ||
                   llvm::any_of(high, [](int64_t p) { return p < 0; });
      if (crops) {
        if (!inputType.hasStaticShape())
          return rewriter.notifyMatchFailure(op, "cropping a dynamic dimension");
        SmallVector<OpFoldResult> offsets, sizes, steps;
        SmallVector<int64_t> shape;
        for (int64_t d = 0; d < inputType.getRank(); ++d) {
          int64_t begin = std::max<int64_t>(0, -low[d]);
          int64_t size = inputType.getDimSize(d) - begin - std::max<int64_t>(0, -high[d]);
          offsets.push_back(rewriter.getIndexAttr(begin));
          sizes.push_back(rewriter.getIndexAttr(size));
          steps.push_back(rewriter.getIndexAttr(1));
          shape.push_back(size);
        }
        input = tensor::ExtractSliceOp::create(rewriter, loc, inputType.clone(shape), input,
                                               offsets, sizes, steps);
      }
      SmallVector<int64_t> padLow, padHigh;
      for (int64_t d = 0; d < resultType.getRank(); ++d) {
        padLow.push_back(std::max<int64_t>(0, low[d]));
        padHigh.push_back(std::max<int64_t>(0, high[d]));
      }
      Value value = adaptor.getValue()
                        ? Value(tensor::ExtractOp::create(rewriter, loc, adaptor.getValue(),
                                                          ValueRange{}))
                        : scalarConstant(rewriter, loc, resultType.getElementType(), 0);
      Value padded = padWith(rewriter, loc, input, padLow, padHigh, value);
      if (padded.getType() != resultType)
        padded = tensor::CastOp::create(rewriter, loc, resultType, padded);
      rewriter.replaceOp(op, padded);
      return success();
    }
    // Reflect and edge: each result index maps to an input index inside the bounds.
    bool reflect = op.getMode() == PadMode::reflect;
    SmallVector<Value> lasts, dynamicSizes;
    for (int64_t d = 0; d < inputType.getRank(); ++d) {
      Value dim = getValueOrCreateConstantIndexOp(rewriter, loc, dimSize(rewriter, loc, input, d));
      lasts.push_back(arith::SubIOp::create(rewriter, loc, dim,
                                            arith::ConstantIndexOp::create(rewriter, loc, 1)));
      if (resultType.isDynamicDim(d))
        dynamicSizes.push_back(arith::AddIOp::create(
            rewriter, loc, dim, arith::ConstantIndexOp::create(rewriter, loc, low[d] + high[d])));
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(), dynamicSizes);
    Value result = buildIndexedRead(
        rewriter, loc, resultType, input, {}, {}, init,
        [&](OpBuilder &b, Location l, ValueRange indices, ValueRange) {
          SmallVector<Value> source;
          for (auto [d, index] : llvm::enumerate(indices)) {
            Value zero = arith::ConstantIndexOp::create(b, l, 0);
            Value last = lasts[d];
            Value shifted = arith::SubIOp::create(
                b, l, index, arith::ConstantIndexOp::create(b, l, low[d]));
            if (reflect) {
              // -j below the start, 2 * last - j past the end.
              Value negated = arith::SubIOp::create(b, l, zero, shifted);
              Value mirrored = arith::SubIOp::create(
                  b, l, arith::AddIOp::create(b, l, last, last), shifted);
              Value below = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, shifted, zero);
              Value above = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, shifted, last);
              Value inner = arith::SelectOp::create(b, l, above, mirrored, shifted);
              source.push_back(arith::SelectOp::create(b, l, below, negated, inner));
            } else {
              Value clamped = arith::MaxSIOp::create(b, l, shifted, zero);
              source.push_back(arith::MinSIOp::create(b, l, clamped, last));
            }
          }
          return source;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct GatherLowering : GraphLowering<GatherOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = signlessType(op.getResult());
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    auto indicesType = llvm::cast<RankedTensorType>(indices.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    int64_t indexRank = indicesType.getRank();
    // Result dims [axis, axis + indexRank) walk the indices tensor.
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < indexRank; ++i)
      exprs.push_back(rewriter.getAffineDimExpr(axis + i));
    AffineMap indexMap = AffineMap::get(resultType.getRank(), 0, exprs, rewriter.getContext());
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      if (d < axis)
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, d));
      else if (d < axis + indexRank)
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, indices, d - axis));
      else
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, d - indexRank + 1));
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType(), dynamicSizes);
    Value result = buildIndexedRead(
        rewriter, loc, resultType, input, ValueRange{indices}, {indexMap}, init,
        [&](OpBuilder &b, Location l, ValueRange resultIndices, ValueRange elements) {
          Value size = tensor::DimOp::create(b, l, input, axis);
          SmallVector<Value> source(resultIndices.take_front(axis));
          source.push_back(wrapIndex(b, l, elements[0], size));
          llvm::append_range(source, resultIndices.drop_front(axis + indexRank));
          return source;
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SplitLowering : GraphLowering<SplitOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    SmallVector<Value> pieces;
    int64_t offset = 0;
    for (auto [result, size] : llvm::zip_equal(op.getResults(), op.getSizes())) {
      SmallVector<OpFoldResult> offsets, sizes, steps;
      for (int64_t d = 0; d < inputType.getRank(); ++d) {
        offsets.push_back(rewriter.getIndexAttr(d == axis ? offset : 0));
        if (d == axis)
          sizes.push_back(rewriter.getIndexAttr(size));
        else if (inputType.isDynamicDim(d))
          sizes.push_back(tensor::DimOp::create(rewriter, loc, input, d).getResult());
        else
          sizes.push_back(rewriter.getIndexAttr(inputType.getDimSize(d)));
        steps.push_back(rewriter.getIndexAttr(1));
      }
      // An empty piece reads nothing: tensor.extract_slice rejects an offset at the end of the
      // axis (an empty last piece, or any piece of an empty input). It is an empty fill, which
      // compiles like any other kernel (and does no work).
      RankedTensorType pieceType = signlessType(result);
      if (size == 0) {
        Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, pieceType.getElementType());
        Value zero = scalarConstant(rewriter, loc, pieceType.getElementType(), 0);
        pieces.push_back(linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0));
      } else
        pieces.push_back(
            tensor::ExtractSliceOp::create(rewriter, loc, pieceType, input, offsets, sizes, steps));
      offset += size;
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};

} // namespace

void kiln::conversion::populateDataMovementLowerings(const TypeConverter &converter,
                                                     RewritePatternSet &patterns) {
  patterns.add<ConcatLowering, DimLowering, IotaLowering, ShapeOfLowering, ExpandLowering,
               SliceLowering, PadLowering, GatherLowering, SplitLowering>(converter,
                                                                          patterns.getContext());
}
