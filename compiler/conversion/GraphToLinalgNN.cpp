//===- GraphToLinalgNN.cpp - Lower matmul, convolution, pooling and norms ---===//
//
// Contractions and windowed ops become linalg.generic ops with reduction iterators: batched
// matmul with broadcast batch dimensions, gemm with its transposes, grouped N-d convolution
// (input and filter viewed as [N, G, C/G, ...] and [G, M/G, C/G, ...]), and max / average
// pooling over explicitly padded inputs. Batch and layer normalization become their per-channel
// and per-row arithmetic. These are the generated-code forms; library calls (oneDNN, cuBLASLt,
// cuDNN) replace the large contractions in later stages.
//
//===----------------------------------------------------------------------===//

#include "compiler/conversion/LinalgBuilders.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kiln::graph;
using namespace kiln::conversion;

namespace {

/// A linalg.generic with `numParallel` parallel loops followed by reduction loops, accumulating
/// `combiner` of the body's value into `init`. Sums and products of f16 and bf16 accumulate in f32
/// (a new accumulator shaped like `init`) and round to `resultType` once at the end.
Value buildReduction(OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
                     ArrayRef<AffineMap> maps, int64_t numLoops, Value init, Combiner combiner,
                     ScalarFn body, bool isUnsigned = false) {
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(AffineMap::getMultiDimIdentityMap(numLoops, b.getContext())
                        .getMajorSubMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(numLoops, utils::IteratorType::reduction);
  for (int64_t i = 0; i < resultType.getRank(); ++i)
    iterators[i] = utils::IteratorType::parallel;
  Type element = resultType.getElementType();
  Type accumulator = accumulatorType(element, combiner);
  auto accumulatorTensor = RankedTensorType::get(resultType.getShape(), accumulator);
  if (accumulator != element) {
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        dynamicSizes.push_back(tensor::DimOp::create(b, loc, init, d));
    Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(), accumulator, dynamicSizes);
    init = linalg::FillOp::create(b, loc, combinerIdentity(b, loc, accumulator, combiner), empty)
               .getResult(0);
  }
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{accumulatorTensor}, inputs, ValueRange{init}, allMaps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> operands(args.drop_back());
        if (accumulator != element)
          for (Value &operand : operands)
            if (operand.getType() != accumulator && isa<FloatType>(operand.getType()))
              operand = arith::ExtFOp::create(nb, nl, accumulator, operand);
        Value value = body(nb, nl, operands);
        linalg::YieldOp::create(nb, nl,
                                combine(nb, nl, combiner, args.back(), value, isUnsigned));
      });
  return convertFloatTensor(b, loc, generic.getResult(0), resultType);
}

/// An accumulator of `type` filled with the identity of `combiner`; dynamic sizes come from
/// `dynamicSizes`.
Value filledInit(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes,
                 Combiner combiner, bool isUnsigned = false) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                        dynamicSizes);
  Value identity = combinerIdentity(b, loc, type.getElementType(), combiner, isUnsigned);
  return linalg::FillOp::create(b, loc, identity, empty).getResult(0);
}

Value multiply(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  if (isFloat(lhs.getType()))
    return arith::MulFOp::create(b, loc, lhs, rhs);
  return arith::MulIOp::create(b, loc, lhs, rhs);
}

Value productOf(OpBuilder &b, Location loc, ValueRange args) {
  return multiply(b, loc, args[0], args[1]);
}

struct MatmulLowering : GraphLowering<MatmulOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = signlessType(op.getResult());
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lhsType = llvm::cast<RankedTensorType>(lhs.getType());
    auto rhsType = llvm::cast<RankedTensorType>(rhs.getType());
    // Vectors become matrices; the added dimension leaves the result at the end.
    if (lhsType.getRank() == 1) {
      lhsType = RankedTensorType::get({1, lhsType.getDimSize(0)}, lhsType.getElementType());
      lhs = reshapeTo(rewriter, loc, lhs, lhsType);
    }
    if (rhsType.getRank() == 1) {
      rhsType = RankedTensorType::get({rhsType.getDimSize(0), 1}, rhsType.getElementType());
      rhs = reshapeTo(rewriter, loc, rhs, rhsType);
    }
    std::optional<SmallVector<int64_t>> batch =
        broadcastShapes(lhsType.getShape().drop_back(2), rhsType.getShape().drop_back(2));
    if (!batch)
      return rewriter.notifyMatchFailure(op, "batch dimensions do not broadcast");
    int64_t batchRank = batch->size();
    SmallVector<int64_t> fullShape(*batch);
    fullShape.push_back(lhsType.getDimSize(lhsType.getRank() - 2));
    fullShape.push_back(rhsType.getDimSize(rhsType.getRank() - 1));
    auto fullType = RankedTensorType::get(fullShape, resultType.getElementType());

    MLIRContext *context = rewriter.getContext();
    int64_t numLoops = batchRank + 3;
    auto operandMap = [&](RankedTensorType type, int64_t row, int64_t column) {
      SmallVector<AffineExpr> exprs;
      int64_t offset = batchRank - (type.getRank() - 2);
      for (int64_t i = 0; i < type.getRank() - 2; ++i) {
        bool broadcast = type.getDimSize(i) == 1 && (*batch)[i + offset] != 1;
        exprs.push_back(broadcast ? getAffineConstantExpr(0, context)
                                  : getAffineDimExpr(i + offset, context));
      }
      exprs.push_back(getAffineDimExpr(row, context));
      exprs.push_back(getAffineDimExpr(column, context));
      return AffineMap::get(numLoops, 0, exprs, context);
    };
    int64_t m = batchRank, n = batchRank + 1, k = batchRank + 2;
    SmallVector<AffineMap> maps = {operandMap(lhsType, m, k), operandMap(rhsType, k, n)};

    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < fullType.getRank(); ++d) {
      if (!fullType.isDynamicDim(d))
        continue;
      if (d == m)
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, lhs, lhsType.getRank() - 2));
      else if (d == n)
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, rhs, rhsType.getRank() - 1));
      else {
        // A dynamic batch dimension: take it from whichever operand has it dynamic.
        Value source = lhs;
        int64_t index = d - (batchRank - (lhsType.getRank() - 2));
        if (index < 0 || !lhsType.isDynamicDim(index)) {
          source = rhs;
          index = d - (batchRank - (rhsType.getRank() - 2));
        }
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, source, index));
      }
    }
    Value init = filledInit(rewriter, loc, fullType, dynamicSizes, Combiner::Sum);
    Value product = buildReduction(rewriter, loc, fullType, ValueRange{lhs, rhs}, maps, numLoops,
                                   init, Combiner::Sum, productOf);
    if (fullType != resultType)
      product = reshapeTo(rewriter, loc, product, resultType);
    rewriter.replaceOp(op, product);
    return success();
  }
};

struct GemmLowering : GraphLowering<GemmOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = signlessType(op.getResult());
    MLIRContext *context = rewriter.getContext();
    AffineExpr m = getAffineDimExpr(0, context), n = getAffineDimExpr(1, context),
               k = getAffineDimExpr(2, context);
    AffineMap aMap = AffineMap::get(3, 0, op.getTransA() ? ArrayRef<AffineExpr>{k, m}
                                                         : ArrayRef<AffineExpr>{m, k},
                                    context);
    AffineMap bMap = AffineMap::get(3, 0, op.getTransB() ? ArrayRef<AffineExpr>{n, k}
                                                         : ArrayRef<AffineExpr>{k, n},
                                    context);
    SmallVector<Value> dynamicSizes;
    if (resultType.isDynamicDim(0))
      dynamicSizes.push_back(
          tensor::DimOp::create(rewriter, loc, adaptor.getA(), op.getTransA() ? 1 : 0));
    if (resultType.isDynamicDim(1))
      dynamicSizes.push_back(
          tensor::DimOp::create(rewriter, loc, adaptor.getB(), op.getTransB() ? 0 : 1));
    Value init = filledInit(rewriter, loc, resultType, dynamicSizes, Combiner::Sum);
    Value product = buildReduction(rewriter, loc, resultType, ValueRange{adaptor.getA(),
                                   adaptor.getB()}, {aMap, bMap}, 3, init, Combiner::Sum,
                                   productOf);
    double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
    Value c = adaptor.getC();
    if (alpha != 1.0 || (c && beta != 0.0)) {
      Type element = resultType.getElementType();
      SmallVector<Value> operands{product};
      if (c && beta != 0.0)
        operands.push_back(c);
      product = buildElementwise(
          rewriter, loc, resultType, operands, [&](OpBuilder &b, Location l, ValueRange args) {
            Value scaled = alpha == 1.0
                               ? args[0]
                               : multiply(b, l, args[0], scalarConstant(b, l, element, alpha));
            if (args.size() == 1)
              return scaled;
            Value addend = beta == 1.0
                               ? args[1]
                               : multiply(b, l, args[1], scalarConstant(b, l, element, beta));
            return isFloat(element) ? Value(arith::AddFOp::create(b, l, scaled, addend))
                                    : Value(arith::AddIOp::create(b, l, scaled, addend));
          });
    }
    rewriter.replaceOp(op, product);
    return success();
  }
};

/// The input window index `o * stride + k * dilation` of one spatial dimension.
AffineExpr windowExpr(MLIRContext *context, int64_t outputDim, int64_t kernelDim, int64_t stride,
                      int64_t dilation) {
  return getAffineDimExpr(outputDim, context) * stride +
         getAffineDimExpr(kernelDim, context) * dilation;
}

/// True when every dimension of `type` but the batch (dimension 0) is static.
bool staticButBatch(RankedTensorType type) {
  return llvm::all_of(type.getShape().drop_front(),
                      [](int64_t d) { return d != ShapedType::kDynamic; });
}

/// Grouped N-d convolution of the already padded `padded` (`N x C x P1 ... Pn`, only N may be
/// dynamic) with `filter` (`M x C/groups x K1 ... Kn`), plus `bias` (`M`) when non-null.
Value buildGroupedConv(OpBuilder &b, Location loc, Value padded, Value filter,
                       ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations, int64_t groups,
                       RankedTensorType resultType, Value bias) {
  auto paddedType = llvm::cast<RankedTensorType>(padded.getType());
  auto filterType = llvm::cast<RankedTensorType>(filter.getType());
  MLIRContext *context = b.getContext();
  Type element = resultType.getElementType();
  int64_t spatial = paddedType.getRank() - 2;
  int64_t channelsPerGroup = filterType.getDimSize(1);
  int64_t outPerGroup = filterType.getDimSize(0) / groups;

  // Views with the group as its own dimension.
  SmallVector<Value> batchSize;
  SmallVector<OpFoldResult> groupedInputShape;
  if (paddedType.isDynamicDim(0)) {
    Value n = tensor::DimOp::create(b, loc, padded, 0);
    batchSize.push_back(n);
    groupedInputShape.push_back(n);
  } else {
    groupedInputShape.push_back(b.getIndexAttr(paddedType.getDimSize(0)));
  }
  SmallVector<int64_t> groupedInput{paddedType.getDimSize(0), groups, channelsPerGroup};
  groupedInputShape.push_back(b.getIndexAttr(groups));
  groupedInputShape.push_back(b.getIndexAttr(channelsPerGroup));
  SmallVector<ReassociationIndices> inputGroups{{0}, {1, 2}};
  for (int64_t i = 0; i < spatial; ++i) {
    groupedInput.push_back(paddedType.getDimSize(i + 2));
    groupedInputShape.push_back(b.getIndexAttr(paddedType.getDimSize(i + 2)));
    inputGroups.push_back({i + 3});
  }
  Value viewIn = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(groupedInput, element), padded, inputGroups,
      groupedInputShape);
  SmallVector<int64_t> groupedFilter{groups, outPerGroup, channelsPerGroup};
  SmallVector<ReassociationIndices> filterGroups{{0, 1}, {2}};
  for (int64_t i = 0; i < spatial; ++i) {
    groupedFilter.push_back(filterType.getDimSize(i + 2));
    filterGroups.push_back({i + 3});
  }
  SmallVector<OpFoldResult> groupedFilterShape;
  for (int64_t size : groupedFilter)
    groupedFilterShape.push_back(b.getIndexAttr(size));
  Value viewFilter = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(groupedFilter, element), filter, filterGroups,
      groupedFilterShape);

  // Loops: n, g, m, o1..oS (parallel), c, k1..kS (reduction).
  int64_t numLoops = 3 + 2 * spatial + 1;
  int64_t c = 3 + spatial;
  SmallVector<AffineExpr> inExprs{getAffineDimExpr(0, context), getAffineDimExpr(1, context),
                                  getAffineDimExpr(c, context)};
  SmallVector<AffineExpr> filterExprs{getAffineDimExpr(1, context), getAffineDimExpr(2, context),
                                      getAffineDimExpr(c, context)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(windowExpr(context, 3 + i, c + 1 + i, strides[i], dilations[i]));
    filterExprs.push_back(getAffineDimExpr(c + 1 + i, context));
  }
  SmallVector<int64_t> groupedOut{resultType.getDimSize(0), groups, outPerGroup};
  llvm::append_range(groupedOut, resultType.getShape().drop_front(2));
  auto groupedOutType = RankedTensorType::get(groupedOut, element);
  Value init = filledInit(b, loc, groupedOutType, batchSize, Combiner::Sum);
  Value conv = buildReduction(
      b, loc, groupedOutType, ValueRange{viewIn, viewFilter},
      {AffineMap::get(numLoops, 0, inExprs, context),
       AffineMap::get(numLoops, 0, filterExprs, context)},
      numLoops, init, Combiner::Sum, productOf);
  SmallVector<ReassociationIndices> outGroups{{0}, {1, 2}};
  for (int64_t i = 0; i < spatial; ++i)
    outGroups.push_back({i + 3});
  Value result = tensor::CollapseShapeOp::create(b, loc, resultType, conv, outGroups);
  if (bias) {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(resultType.getRank(), context);
    AffineMap channel = AffineMap::get(resultType.getRank(), 0, getAffineDimExpr(1, context));
    result = buildGeneric(b, loc, resultType, ValueRange{result, bias},
                          {identity, channel}, emptyForResult(b, loc, resultType, {result}),
                          [](OpBuilder &nb, Location l, ValueRange args) {
                            return arith::AddFOp::create(nb, l, args[0], args[1]);
                          });
  }
  return result;
}

struct ConvLowering : GraphLowering<ConvOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), filter = adaptor.getFilter();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    auto filterType = llvm::cast<RankedTensorType>(filter.getType());
    RankedTensorType resultType = op.getType();
    if (!staticButBatch(inputType) || !filterType.hasStaticShape() ||
        !staticButBatch(resultType))
      return rewriter.notifyMatchFailure(op, "only the batch dimension may be dynamic");
    Type element = resultType.getElementType();
    SmallVector<int64_t> low{0, 0}, high{0, 0};
    llvm::append_range(low, op.getPadLow());
    llvm::append_range(high, op.getPadHigh());
    Value padded =
        padWith(rewriter, loc, input, low, high, scalarConstant(rewriter, loc, element, 0));
    rewriter.replaceOp(op, buildGroupedConv(rewriter, loc, padded, filter, op.getStrides(),
                                            op.getDilations(),
                                            static_cast<int64_t>(op.getGroups()), resultType,
                                            adaptor.getBias()));
    return success();
  }
};

/// Transposed convolution as a convolution: the input spread out by the strides (zeros between
/// elements) inside a border of dilation * (K - 1) zeros, cropped by the padding (output_padding
/// extends the high side), correlated at stride 1 with the spatially flipped filter whose
/// input and output channels swap within each group.
struct ConvTransposeLowering : GraphLowering<ConvTransposeOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(ConvTransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), filter = adaptor.getFilter();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    auto filterType = llvm::cast<RankedTensorType>(filter.getType());
    RankedTensorType resultType = op.getType();
    if (!staticButBatch(inputType) || !filterType.hasStaticShape() ||
        !staticButBatch(resultType))
      return rewriter.notifyMatchFailure(op, "only the batch dimension may be dynamic");
    Type element = resultType.getElementType();
    int64_t spatial = inputType.getRank() - 2;
    int64_t groups = static_cast<int64_t>(op.getGroups());
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                      padLow = op.getPadLow(), outputPadding = op.getOutputPadding();
    int64_t channels = inputType.getDimSize(1);
    int64_t inPerGroup = filterType.getDimSize(0) / groups;
    int64_t outPerGroup = filterType.getDimSize(1);

    // The spread input: x[i] lands at border + i * stride of a zero tensor.
    SmallVector<int64_t> spreadShape{inputType.getDimSize(0), channels};
    SmallVector<OpFoldResult> offsets{rewriter.getIndexAttr(0), rewriter.getIndexAttr(0)},
        sizes{dimSize(rewriter, loc, input, 0), rewriter.getIndexAttr(channels)},
        steps{rewriter.getIndexAttr(1), rewriter.getIndexAttr(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t border = dilations[i] * (filterType.getDimSize(i + 2) - 1);
      spreadShape.push_back((inputType.getDimSize(i + 2) - 1) * strides[i] + 1 + 2 * border +
                            outputPadding[i]);
      offsets.push_back(rewriter.getIndexAttr(border));
      sizes.push_back(rewriter.getIndexAttr(inputType.getDimSize(i + 2)));
      steps.push_back(rewriter.getIndexAttr(strides[i]));
    }
    auto spreadType = RankedTensorType::get(spreadShape, element);
    SmallVector<Value> batchSize;
    if (inputType.isDynamicDim(0))
      batchSize.push_back(tensor::DimOp::create(rewriter, loc, input, 0));
    Value zeros = filledInit(rewriter, loc, spreadType, batchSize, Combiner::Sum);
    Value spread =
        tensor::InsertSliceOp::create(rewriter, loc, input, zeros, offsets, sizes, steps);
    // Padding crops the full result: drop pad_low leading positions, keep what the result needs.
    SmallVector<OpFoldResult> cropOffsets{rewriter.getIndexAttr(0), rewriter.getIndexAttr(0)},
        cropSizes{dimSize(rewriter, loc, input, 0), rewriter.getIndexAttr(channels)},
        cropSteps(inputType.getRank(), rewriter.getIndexAttr(1));
    SmallVector<int64_t> croppedShape{inputType.getDimSize(0), channels};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t size = resultType.getDimSize(i + 2) +
                     dilations[i] * (filterType.getDimSize(i + 2) - 1);
      cropOffsets.push_back(rewriter.getIndexAttr(padLow[i]));
      cropSizes.push_back(rewriter.getIndexAttr(size));
      croppedShape.push_back(size);
    }
    Value cropped = tensor::ExtractSliceOp::create(
        rewriter, loc, RankedTensorType::get(croppedShape, element), spread, cropOffsets,
        cropSizes, cropSteps);
    // The filter as a convolution's: [groups * M/groups, C/groups, K...], flipped spatially.
    SmallVector<int64_t> convFilterShape{groups * outPerGroup, inPerGroup};
    llvm::append_range(convFilterShape, filterType.getShape().drop_front(2));
    auto convFilterType = RankedTensorType::get(convFilterShape, element);
    Value convFilter = buildIndexedRead(
        rewriter, loc, convFilterType, filter, {}, {},
        tensor::EmptyOp::create(rewriter, loc, convFilterShape, element),
        [&](OpBuilder &b, Location l, ValueRange at, ValueRange) {
          Value perGroup = arith::ConstantIndexOp::create(b, l, outPerGroup);
          Value group = arith::DivUIOp::create(b, l, at[0], perGroup);
          Value channel = arith::AddIOp::create(
              b, l,
              arith::MulIOp::create(b, l, group,
                                    arith::ConstantIndexOp::create(b, l, inPerGroup)),
              at[1]);
          SmallVector<Value> source{channel, arith::RemUIOp::create(b, l, at[0], perGroup)};
          for (int64_t i = 0; i < spatial; ++i)
            source.push_back(arith::SubIOp::create(
                b, l, arith::ConstantIndexOp::create(b, l, filterType.getDimSize(i + 2) - 1),
                at[i + 2]));
          return source;
        });
    SmallVector<int64_t> ones(spatial, 1);
    rewriter.replaceOp(op, buildGroupedConv(rewriter, loc, cropped, convFilter, ones, dilations,
                                            groups, resultType, adaptor.getBias()));
    return success();
  }
};

/// Max and average pooling over windows of the spatial dimensions.
template <typename OpTy, Combiner kCombiner>
struct WindowPoolLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    RankedTensorType resultType = signlessType(op.getResult());
    if (!staticButBatch(inputType) || !staticButBatch(resultType))
      return rewriter.notifyMatchFailure(op, "only the batch dimension may be dynamic");
    bool isUnsigned = hasUnsignedElements(op);
    MLIRContext *context = rewriter.getContext();
    Type element = resultType.getElementType();
    int64_t rank = inputType.getRank(), spatial = rank - 2;
    // The layout: N C D1..Dn, or N D1..Dn C with channels_last.
    BoolAttr flag = op.getChannelsLastAttr();
    bool channelsLast = flag && flag.getValue();
    int64_t channelDim = channelsLast ? rank - 1 : 1, firstSpatial = channelsLast ? 1 : 2;
    ArrayRef<int64_t> kernel = op.getKernelShape(), strides = op.getStrides(),
                      dilations = op.getDilations(), padLow = op.getPadLow(),
                      padHigh = op.getPadHigh();
    // Windows may reach past the high padding in ceil mode: pad that far too.
    SmallVector<int64_t> low(rank, 0), high(rank, 0), extra;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t dim = firstSpatial + i;
      int64_t reach =
          (resultType.getDimSize(dim) - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1;
      int64_t available = inputType.getDimSize(dim) + padLow[i] + padHigh[i];
      extra.push_back(std::max<int64_t>(0, reach - available));
      low[dim] = padLow[i];
      high[dim] = padHigh[i] + extra.back();
    }
    Value identity = combinerIdentity(rewriter, loc, element, kCombiner, isUnsigned);
    Value padded = padWith(rewriter, loc, input, low, high, identity);

    // Loops: the result's dims (parallel, n c o1..oS or n o1..oS c), then k1..kS (reduction).
    int64_t numLoops = 2 + 2 * spatial;
    SmallVector<AffineExpr> inExprs;
    for (int64_t dim = 0; dim < rank; ++dim) {
      int64_t i = dim - firstSpatial;
      bool isSpatial = dim != 0 && dim != channelDim;
      inExprs.push_back(isSpatial ? windowExpr(context, dim, rank + i, strides[i], dilations[i])
                                  : getAffineDimExpr(dim, context));
    }
    SmallVector<Value> batchSize;
    if (resultType.isDynamicDim(0))
      batchSize.push_back(tensor::DimOp::create(rewriter, loc, input, 0));
    Value init = filledInit(rewriter, loc, resultType, batchSize, kCombiner, isUnsigned);
    // The window's shape is carried by an empty tensor read through the kernel loops.
    Value window = tensor::EmptyOp::create(rewriter, loc, kernel, element);
    SmallVector<AffineExpr> windowExprs;
    for (int64_t i = 0; i < spatial; ++i)
      windowExprs.push_back(getAffineDimExpr(2 + spatial + i, context));
    Value pooled = buildReduction(
        rewriter, loc, resultType, ValueRange{padded, window},
        {AffineMap::get(numLoops, 0, inExprs, context),
         AffineMap::get(numLoops, 0, windowExprs, context)},
        numLoops, init, kCombiner, [](OpBuilder &, Location, ValueRange args) { return args[0]; },
        isUnsigned);
    if constexpr (std::is_same_v<OpTy, AvgPoolOp>) {
      // Divide by the number of elements each window covers: a sum pool of ones over the
      // spatial shape, with the explicit padding counted only under count_include_pad.
      SmallVector<int64_t> spatialShape(
          inputType.getShape().drop_front(firstSpatial).take_front(spatial));
      Value ones = tensor::SplatOp::create(
          rewriter, loc, RankedTensorType::get(spatialShape, element),
          scalarConstant(rewriter, loc, element, 1));
      Value counted = padWith(rewriter, loc, ones, padLow, padHigh,
                              scalarConstant(rewriter, loc, element,
                                             op.getCountIncludePad() ? 1 : 0));
      SmallVector<int64_t> noPad(spatial, 0);
      counted = padWith(rewriter, loc, counted, noPad, extra,
                        scalarConstant(rewriter, loc, element, 0));
      SmallVector<AffineExpr> countExprs;
      for (int64_t i = 0; i < spatial; ++i)
        countExprs.push_back(windowExpr(context, i, spatial + i, strides[i], dilations[i]));
      SmallVector<AffineExpr> countWindow;
      for (int64_t i = 0; i < spatial; ++i)
        countWindow.push_back(getAffineDimExpr(spatial + i, context));
      auto countType = RankedTensorType::get(
          resultType.getShape().drop_front(firstSpatial).take_front(spatial), element);
      Value countInit = filledInit(rewriter, loc, countType, {}, Combiner::Sum);
      Value counts = buildReduction(
          rewriter, loc, countType, ValueRange{counted, window},
          {AffineMap::get(2 * spatial, 0, countExprs, context),
           AffineMap::get(2 * spatial, 0, countWindow, context)},
          2 * spatial, countInit, Combiner::Sum,
          [](OpBuilder &, Location, ValueRange args) { return args[0]; });
      AffineMap identity = AffineMap::getMultiDimIdentityMap(resultType.getRank(), context);
      pooled = buildGeneric(rewriter, loc, resultType, ValueRange{pooled, counts},
                            {identity, identity.dropResults(ArrayRef<int64_t>{0, channelDim})},
                            emptyForResult(rewriter, loc, resultType, {pooled}),
                            [](OpBuilder &b, Location l, ValueRange args) {
                              return arith::DivFOp::create(b, l, args[0], args[1]);
                            });
    }
    rewriter.replaceOp(op, pooled);
    return success();
  }
};

template <typename OpTy, Combiner kCombiner, bool kMean>
struct GlobalPoolLowering : GraphLowering<OpTy> {
  using GraphLowering<OpTy>::GraphLowering;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType resultType = signlessType(op.getResult());
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, resultType.getRank()));
    rewriter.replaceOp(op, reduceInto(rewriter, loc, input, axes, kCombiner, kMean, resultType,
                                      hasUnsignedElements(op)));
    return success();
  }
};

struct BatchNormLowering : GraphLowering<BatchNormOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = op.getType();
    Type element = resultType.getElementType();
    auto channelType = llvm::cast<RankedTensorType>(adaptor.getScale().getType());
    double epsilon = op.getEpsilon().convertToDouble();
    // Per channel: factor = scale / sqrt(variance + epsilon), shift = bias - mean * factor.
    Value factor = buildElementwise(
        rewriter, loc, channelType, ValueRange{adaptor.getScale(), adaptor.getVariance()},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value eps = scalarConstant(b, l, element, epsilon);
          Value root = math::SqrtOp::create(b, l, arith::AddFOp::create(b, l, args[1], eps));
          return arith::DivFOp::create(b, l, args[0], root);
        });
    Value shift = buildElementwise(
        rewriter, loc, channelType, ValueRange{adaptor.getBias(), adaptor.getMean(), factor},
        [](OpBuilder &b, Location l, ValueRange args) {
          return arith::SubFOp::create(b, l, args[0],
                                       arith::MulFOp::create(b, l, args[1], args[2]));
        });
    MLIRContext *context = rewriter.getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(resultType.getRank(), context);
    AffineMap channel = AffineMap::get(resultType.getRank(), 0, getAffineDimExpr(1, context));
    Value result = buildGeneric(
        rewriter, loc, resultType, ValueRange{adaptor.getInput(), factor, shift},
        {identity, channel, channel},
        emptyForResult(rewriter, loc, resultType, ValueRange{adaptor.getInput()}),
        [](OpBuilder &b, Location l, ValueRange args) {
          return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, args[0], args[1]),
                                       args[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LayerNormLowering : GraphLowering<LayerNormOp> {
  using GraphLowering::GraphLowering;

  LogicalResult matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    RankedTensorType type = op.getType();
    Type element = type.getElementType();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, type.getRank()));
    MLIRContext *context = rewriter.getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(type.getRank(), context);
    // getMajorSubMap(0) is the null map; normalizing over every axis reads a rank-0 row.
    AffineMap rows =
        axis == 0 ? AffineMap::get(type.getRank(), 0, context) : identity.getMajorSubMap(axis);
    Value count = countAlong(rewriter, loc, x, axes, element);
    auto divideByCount = [&](OpBuilder &b, Location l, ValueRange args) -> Value {
      return arith::DivFOp::create(b, l, args[0], count);
    };

    Value sum = reduceAlong(rewriter, loc, x, axes, Combiner::Sum);
    auto rowType = llvm::cast<RankedTensorType>(sum.getType());
    Value mean = buildElementwise(rewriter, loc, rowType, ValueRange{sum}, divideByCount);
    Value centered = buildGeneric(rewriter, loc, type, ValueRange{x, mean}, {identity, rows},
                                  emptyForResult(rewriter, loc, type, ValueRange{x}),
                                  [](OpBuilder &b, Location l, ValueRange args) {
                                    return arith::SubFOp::create(b, l, args[0], args[1]);
                                  });
    Value squares = buildElementwise(rewriter, loc, type, ValueRange{centered},
                                     [](OpBuilder &b, Location l, ValueRange args) {
                                       return arith::MulFOp::create(b, l, args[0], args[0]);
                                     });
    Value squareSum = reduceAlong(rewriter, loc, squares, axes, Combiner::Sum);
    double epsilon = op.getEpsilon().convertToDouble();
    Value inverse = buildElementwise(rewriter, loc, rowType, ValueRange{squareSum},
                                     [&](OpBuilder &b, Location l, ValueRange args) {
                                       Value variance = divideByCount(b, l, args);
                                       Value eps = scalarConstant(b, l, element, epsilon);
                                       return math::RsqrtOp::create(
                                           b, l, arith::AddFOp::create(b, l, variance, eps));
                                     });
    SmallVector<Value> operands{centered, inverse, adaptor.getScale()};
    SmallVector<AffineMap> maps{
        identity, rows,
        broadcastMap(context, llvm::cast<RankedTensorType>(adaptor.getScale().getType()), type)};
    if (Value bias = adaptor.getBias()) {
      operands.push_back(bias);
      maps.push_back(broadcastMap(context, llvm::cast<RankedTensorType>(bias.getType()), type));
    }
    Value result = buildGeneric(rewriter, loc, type, operands, maps,
                                emptyForResult(rewriter, loc, type, ValueRange{x}),
                                [](OpBuilder &b, Location l, ValueRange args) {
                                  Value normalized = arith::MulFOp::create(b, l, args[0], args[1]);
                                  Value scaled = arith::MulFOp::create(b, l, normalized, args[2]);
                                  if (args.size() == 3)
                                    return scaled;
                                  return Value(arith::AddFOp::create(b, l, scaled, args[3]));
                                });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kiln::conversion::populateNeuralNetworkLowerings(const TypeConverter &converter,
                                                       RewritePatternSet &patterns) {
  patterns.add<MatmulLowering, GemmLowering, ConvLowering, ConvTransposeLowering,
               WindowPoolLowering<MaxPoolOp, Combiner::Max>,
               WindowPoolLowering<AvgPoolOp, Combiner::Sum>,
               GlobalPoolLowering<GlobalMaxPoolOp, Combiner::Max, false>,
               GlobalPoolLowering<GlobalAvgPoolOp, Combiner::Sum, true>, BatchNormLowering,
               LayerNormLowering>(converter, patterns.getContext());
}
