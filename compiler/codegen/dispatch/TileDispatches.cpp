//===- TileDispatches.cpp - Destination passing and workgroup tiling ---------===//
//
// Prepares each dispatch function for bufferization into Kiln's kernel convention: results
// become output arguments written in place, and the root op is tiled into independent
// workgroups with scf.forall (later mapped to the workgroup id).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"
#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_TILEDISPATCHESPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Whether `value` holds nothing yet: a `tensor.empty`, or a reshape of one.
bool isFreshTensor(Value value) {
  Operation *producer = value.getDefiningOp();
  if (!producer)
    return false;
  if (isa<tensor::EmptyOp>(producer))
    return true;
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(producer))
    return isFreshTensor(producer->getOperand(0));
  return false;
}

/// Returns the destination `value` was initialized from when it is a fresh tensor (see
/// isFreshTensor) or a fill of one, so the kernel may write straight into its output argument
/// instead.
Operation *freshDestination(Value value) {
  Operation *producer = value.getDefiningOp();
  if (!producer)
    return nullptr;
  if (isFreshTensor(value))
    return producer;
  if (auto fill = dyn_cast<linalg::FillOp>(producer))
    if (isFreshTensor(fill.getOutputs()[0]))
      return producer;
  return nullptr;
}

/// Rewrites `function` to take one writable output argument per result and to materialize each
/// result into it. Where a result's producer writes into a fresh tensor, it writes into the
/// output argument directly.
void convertToDestinationPassing(func::FuncOp function) {
  auto returnOp = cast<func::ReturnOp>(function.getBody().front().getTerminator());
  OpBuilder builder(returnOp);
  MLIRContext *context = function.getContext();
  unsigned firstOutput = function.getNumArguments();
  // Inputs are read-only: a root whose destination is an input (a scatter into its data operand)
  // must copy it rather than update the caller's buffer in place.
  for (unsigned i = 0; i < firstOutput; ++i)
    function.setArgAttr(i, "bufferization.writable", BoolAttr::get(context, false));
  SmallVector<Value> materialized;
  for (auto [i, result] : llvm::enumerate(returnOp.getOperands())) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<NamedAttribute> attributes{NamedAttribute(
        StringAttr::get(context, "bufferization.writable"), BoolAttr::get(context, true))};
    if (auto bounds = function.getResultAttr(i, kBoundsAttr))
      attributes.push_back(NamedAttribute(StringAttr::get(context, kBoundsAttr), bounds));
    function.insertArgument(firstOutput + i, type, DictionaryAttr::get(context, attributes),
                            function.getLoc());
    Value output = function.getArgument(firstOutput + i);
    if (auto dps = result.getDefiningOp<DestinationStyleOpInterface>()) {
      OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(result));
      // Slices inserted one after another (a concatenation's operands) start from the tensor
      // the first one is inserted into.
      while (auto insert = init->get().getDefiningOp<tensor::InsertSliceOp>()) {
        if (!insert->hasOneUse())
          break;
        init = &insert.getDestMutable();
      }
      if (Operation *fresh = freshDestination(init->get())) {
        OpBuilder local(dps);
        if (auto fill = dyn_cast<linalg::FillOp>(fresh)) {
          auto newFill = linalg::FillOp::create(local, fill.getLoc(), fill.getInputs()[0], output);
          init->set(newFill.getResult(0));
        } else {
          init->set(output);
        }
      }
    }
    materialized.push_back(bufferization::MaterializeInDestinationOp::create(
                               builder, returnOp.getLoc(), result, output)
                               .getResult());
  }
  returnOp->setOperands(materialized);
}

/// The most operands of a concatenation written as a generic (kiln-fold-data-movement's
/// default `max-concat-operands`).
constexpr size_t kMaxConcatGenericOperands = 4;

struct TileDispatchesPass : impl::TileDispatchesPassBase<TileDispatchesPass> {
  using Base::Base;

  /// Chooses tile sizes for the outer parallel loops of `op`, aiming at `targetWorkgroups`
  /// tiles; returns an empty vector when the op should not be split.
  SmallVector<int64_t> chooseTileSizes(TilingInterface op) {
    OpBuilder builder(op);
    SmallVector<Range> domain = op.getIterationDomain(builder);
    SmallVector<utils::IteratorType> iterators = op.getLoopIteratorTypes();
    // A fused group is split only along the loops all its members share (kiln-plan-fusion):
    // a tile then holds whole rows of every reduction inside it.
    std::optional<ArrayRef<int64_t>> shared;
    if (auto dims = op->getAttrOfType<DenseI64ArrayAttr>(kTileDimsAttr))
      shared = dims.asArrayRef();
    SmallVector<int64_t> extents;
    int64_t work = 1;
    for (Range range : domain) {
      std::optional<int64_t> offset = getConstantIntValue(range.offset);
      std::optional<int64_t> size = getConstantIntValue(range.size);
      std::optional<int64_t> stride = getConstantIntValue(range.stride);
      // A dynamic extent (a program for a range of shapes) is sized for its upper bound; the
      // workgroup count then follows the run's extent (kiln-distribute-workgroups).
      if (!size)
        size = upperBound(range.size);
      if (!offset || !size || !stride || *offset != 0 || *stride != 1)
        return {};
      extents.push_back(*size);
      work *= std::max<int64_t>(*size, 1);
    }
    if (work < minElementsPerWorkgroup)
      return {};
    SmallVector<int64_t> sizes(extents.size(), 0);
    int64_t tiles = 1;
    for (auto [dim, iterator] : llvm::enumerate(iterators)) {
      if (tiles >= targetWorkgroups)
        break;
      if (iterator != utils::IteratorType::parallel || extents[dim] <= 1)
        continue;
      if (shared && !llvm::is_contained(*shared, static_cast<int64_t>(dim)))
        continue;
      int64_t wanted = llvm::divideCeil(targetWorkgroups, tiles);
      int64_t chunks = std::min(extents[dim], wanted);
      int64_t size = llvm::divideCeil(extents[dim], chunks);
      // The innermost loop keeps whole vectors of work in each tile.
      if (dim + 1 == extents.size())
        size = std::min<int64_t>(extents[dim], static_cast<int64_t>(llvm::alignTo(size, 64)));
      sizes[dim] = size;
      tiles *= llvm::divideCeil(extents[dim], size);
    }
    if (tiles <= 1)
      return {};
    return sizes;
  }

  /// The upper bound of a loop extent that is a dimension of a dispatch function's argument
  /// with known bounds (kiln.bounds), or nothing.
  static std::optional<int64_t> upperBound(OpFoldResult extent) {
    auto value = dyn_cast<Value>(extent);
    auto dim = value ? value.getDefiningOp<tensor::DimOp>() : tensor::DimOp();
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    auto argument = dim ? dyn_cast<BlockArgument>(dim.getSource()) : BlockArgument();
    if (!index || !argument)
      return std::nullopt;
    auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    auto bounds = function ? function.getArgAttrOfType<DenseI64ArrayAttr>(argument.getArgNumber(),
                                                                          kBoundsAttr)
                           : DenseI64ArrayAttr();
    if (!bounds || *index >= bounds.size())
      return std::nullopt;
    return bounds[*index];
  }

  /// Tile sizes for a CUDA row kernel: one tile per point of a fused group's shared loops
  /// (kiln.tile_dims), or of a lone reduction's parallel loops where it reduces long contiguous
  /// rows (longReductionRows), the rest of the loops whole; empty otherwise.
  SmallVector<int64_t> chooseRowTiles(TilingInterface op) {
    SmallVector<int64_t> sizes(op.getLoopIteratorTypes().size(), 0);
    auto dims = op->getAttrOfType<DenseI64ArrayAttr>(kTileDimsAttr);
    if (!dims) {
      if (!longReductionRows(op))
        return {};
      for (auto [dim, iterator] : llvm::enumerate(op.getLoopIteratorTypes()))
        if (iterator == utils::IteratorType::parallel)
          sizes[dim] = 1;
      return sizes;
    }
    if (dims.empty())
      return {};
    for (int64_t dim : dims.asArrayRef())
      sizes[dim] = 1;
    return sizes;
  }

  /// Whether `op` is a reduction of at least kMinRowReduction points per result that reads each
  /// input along its rows (every input indexed by a reduced loop has one innermost): a warp or a
  /// block then shares each row, neighbouring lanes reading neighbouring elements, where a
  /// thread per result walks a whole row alone. A reduction along columns keeps a thread per
  /// result (neighbouring threads already read neighbouring elements), and a reduction split
  /// over the grid (kiln-split-reductions) reads its chunks that way too.
  static bool longReductionRows(TilingInterface op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op.getOperation());
    if (!linalgOp || linalgOp.getNumReductionLoops() == 0 || linalgOp.getNumParallelLoops() == 0 ||
        linalgOp.hasDynamicShape())
      return false;
    SmallVector<int64_t> extents = linalgOp.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
    int64_t points = 1;
    for (auto [extent, iterator] : llvm::zip(extents, iterators))
      if (iterator == utils::IteratorType::reduction)
        points *= extent;
    if (points < kMinRowReduction)
      return false;
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      AffineMap map = linalgOp.getMatchingIndexingMap(input);
      // An input read once per row (the row's maximum, say) is no matter.
      bool reduced = llvm::any_of(map.getResults(), [&](AffineExpr result) {
        auto dim = dyn_cast<AffineDimExpr>(result);
        return !dim || iterators[dim.getPosition()] == utils::IteratorType::reduction;
      });
      if (!reduced)
        continue;
      auto inner = dyn_cast<AffineDimExpr>(map.getResults().back());
      if (!inner || iterators[inner.getPosition()] != utils::IteratorType::reduction)
        return false;
    }
    return true;
  }
  /// Whether one of `op`'s inputs is computed by a reduction in the same kernel: the partial
  /// values of a split reduction, which `op` folds.
  static bool foldsPartialValues(TilingInterface op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op.getOperation());
    return linalgOp && !op->hasAttr(kTileDimsAttr) &&
           llvm::any_of(linalgOp.getDpsInputOperands(), [](OpOperand *input) {
             auto producer = input->get().getDefiningOp<linalg::LinalgOp>();
             return producer && producer.getNumReductionLoops() > 0;
           });
  }
  /// The linear block dimensions a mapping can name (linear_dim_0 .. linear_dim_9).
  static constexpr size_t kLinearDims = 10;
  /// Rows shorter than this stay a thread's each: its vector loads cover them in a few steps.
  static constexpr int64_t kMinRowReduction = 512;

  LogicalResult tileRoot(func::FuncOp function) {
    // The root computes every result, in order (a kernel of several results computes them
    // in one op: kiln-plan-fusion's multi-output kernels).
    auto returnOp = cast<func::ReturnOp>(function.getBody().front().getTerminator());
    TilingInterface root;
    for (auto [index, operand] : llvm::enumerate(returnOp.getOperands())) {
      auto materialize = operand.getDefiningOp<bufferization::MaterializeInDestinationOp>();
      auto result = materialize ? dyn_cast<OpResult>(materialize.getSource()) : OpResult();
      if (!result || result.getResultNumber() != index ||
          (root && result.getOwner() != root.getOperation()))
        return success();
      root = dyn_cast<TilingInterface>(result.getOwner());
      if (!root)
        return success();
    }
    if (!root || root->getNumResults() != returnOp.getNumOperands())
      return success();
    SmallVector<int64_t> sizes = tile ? chooseTileSizes(root) : chooseRowTiles(root);
    if (sizes.empty())
      return success();

    IRRewriter rewriter(function.getContext());
    rewriter.setInsertionPoint(root);
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setTileSizes(getAsIndexOpFoldResult(function.getContext(), sizes));
    if (!tile) {
      // Row loops mapped to blocks: canonicalization then keeps a loop of one row (a layer norm
      // of one token), which would otherwise fold into a kernel run by one thread.
      SmallVector<Attribute> mapping;
      for (int64_t size : sizes)
        if (size != 0)
          mapping.push_back(gpu::GPUBlockMappingAttr::get(
              function.getContext(),
              static_cast<gpu::MappingId>(static_cast<int64_t>(gpu::MappingId::LinearDim0) +
                                          static_cast<int64_t>(mapping.size()))));
      if (mapping.size() <= kLinearDims)
        tiling.setMapping(mapping);
    }
    // The fold of a reduction split over the grid (kiln-split-reductions) takes its rows alone:
    // fused in, its partial reduction would run on one block per result again.
    if (!tile && foldsPartialValues(root)) {
      FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(rewriter, root, tiling);
      if (failed(tiled))
        return success();
      rewriter.replaceOp(root, tiled->replacements);
      return success();
    }
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
    if (failed(tiled))
      return success(); // Stays one workgroup.
    for (OpResult result : root->getResults())
      if (Value replacement = tiled->replacements.lookup(result))
        rewriter.replaceAllUsesWith(result, replacement);
    return success();
  }

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (!function->hasAttr(kDispatchAttr) || function.isExternal())
        continue;
      IRRewriter rewriter(function.getContext());
      // A concatenation no fusion took in (one read by a library call) is a kernel of its own:
      // as the generic kiln-fold-data-movement writes for one, it is split into workgroups and
      // written straight into the output, where tensor.concat would be one workgroup copying
      // through a buffer of its own. Along the last axis the generic's reads would wrap
      // within the rows the vectorizer walks: that one becomes a copy of each operand into its
      // slice of the output (insert_slice), one workgroup still, but one pass; so does one of
      // more operands than kiln-fold-data-movement writes as a generic (each point of the
      // generic reads every operand).
      SmallVector<tensor::ConcatOp> concats;
      function.walk([&](tensor::ConcatOp concat) { concats.push_back(concat); });
      bool inserted = false;
      for (tensor::ConcatOp concat : concats)
        inserted |= concat.getDim() + 1 == concat.getResultType().getRank() ||
                    concat.getInputs().size() > kMaxConcatGenericOperands ||
                    failed(writeConcatAsGeneric(rewriter, concat));
      if (inserted) {
        RewritePatternSet decompose(function.getContext());
        tensor::populateDecomposeTensorConcatPatterns(decompose);
        if (failed(applyPatternsGreedily(function, std::move(decompose))))
          return signalPassFailure();
      }
      // A slice that is the kernel's result (one no view can be: strided, or not contiguous) is
      // a copy; as a linalg.copy it is split into workgroups like any other root.
      for (Value result : function.getBody().front().getTerminator()->getOperands()) {
        auto slice = result.getDefiningOp<tensor::ExtractSliceOp>();
        if (!slice)
          continue;
        rewriter.setInsertionPointAfter(slice);
        Location loc = slice.getLoc();
        Value init =
            tensor::EmptyOp::create(rewriter, loc, tensor::getMixedSizes(rewriter, loc, slice),
                                    slice.getType().getElementType());
        auto copy = linalg::CopyOp::create(rewriter, loc, slice.getResult(), init);
        rewriter.replaceAllUsesExcept(slice.getResult(), copy.getResult(0), copy);
      }
      bool tileable = true;
      function.walk(
          [&](linalg::GenericOp op) { tileable &= readWrappedOperandsInBody(rewriter, op); });
      convertToDestinationPassing(function);
      if ((tile || rowTiles) && tileable && failed(tileRoot(function)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace kiln
