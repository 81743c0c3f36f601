//===- FoldDataMovement.cpp - Slices, concatenations, transposes into readers ---===//
//
// Elementwise fusion fuses linalg.generic producers into linalg.generic readers; a slice, a
// concatenation or a named transpose between two elementwise ops ends the fusion and becomes a
// kernel of its own. XLA's loop fusion reads through them instead: here each is expressed in the
// indexing maps of its readers (a slice as `offset + stride * index`, a concatenation as a
// generic reading each operand at `(index - start) mod size` and selecting by the index, a
// transpose as a generic), so that the fusion passes after this one take them in.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FOLDDATAMOVEMENTPASS
#include "compiler/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

std::optional<int64_t> contiguousSliceByteOffset(Operation *op) {
  auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
  if (!slice)
    return std::nullopt;
  RankedTensorType source = slice.getSourceType();
  Type element = source.getElementType();
  if (!source.hasStaticShape() || !slice.getResultType().hasStaticShape() ||
      !element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> offsets = getConstantIntValues(slice.getMixedOffsets());
  std::optional<SmallVector<int64_t>> sizes = getConstantIntValues(slice.getMixedSizes());
  std::optional<SmallVector<int64_t>> strides = getConstantIntValues(slice.getMixedStrides());
  if (!offsets || !sizes || !strides)
    return std::nullopt;
  ArrayRef<int64_t> shape = source.getShape();
  // Row-major: the slice is one run of elements when the dims inside the outermost one it
  // cuts are whole and the dims outside it are single.
  int64_t rank = shape.size();
  int64_t cut = 0;
  for (int64_t d = rank - 1; d >= 0; --d)
    if ((*sizes)[d] != shape[d]) {
      cut = d;
      break;
    }
  int64_t linear = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if ((*strides)[d] != 1 && (*sizes)[d] != 1)
      return std::nullopt;
    if (d < cut && (*sizes)[d] != 1)
      return std::nullopt;
    linear = linear * shape[d] + (*offsets)[d];
  }
  int64_t bytes = linear * (element.getIntOrFloatBitWidth() / 8);
  if (bytes % kViewByteAlignment != 0)
    return std::nullopt;
  return bytes;
}

/// Whether `map` reads through a `mod`.
static bool wraps(AffineMap map) {
  bool found = false;
  for (AffineExpr result : map.getResults())
    result.walk([&](AffineExpr expr) { found |= expr.getKind() == AffineExprKind::Mod; });
  return found;
}

bool readWrappedOperandsInBody(RewriterBase &rewriter, linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Block *body = op.getBody();
  bool all = true;
  for (int64_t i = op.getNumDpsInputs() - 1; i >= 0; --i) {
    if (!wraps(maps[i]))
      continue;
    // Every loop takes its extent from an operand that reads along it by a bare index: one
    // that only this operand reads along (a reduction over a concatenated axis) keeps it.
    llvm::SmallBitVector covered(op.getNumLoops());
    for (auto [j, map] : llvm::enumerate(maps))
      if (static_cast<int64_t>(j) != i)
        for (AffineExpr result : map.getResults())
          if (auto dim = dyn_cast<AffineDimExpr>(result))
            covered.set(dim.getPosition());
    if (!covered.all()) {
      all = false;
      continue;
    }
    OpOperand *operand = op.getDpsInputOperand(i);
    Value tensor = operand->get();
    rewriter.setInsertionPointToStart(body);
    Location loc = op.getLoc();
    SmallVector<Value> loops;
    for (unsigned d = 0; d < op.getNumLoops(); ++d)
      loops.push_back(linalg::IndexOp::create(rewriter, loc, d));
    SmallVector<Value> indices;
    for (AffineExpr result : maps[i].getResults())
      indices.push_back(affine::AffineApplyOp::create(
          rewriter, loc, AffineMap::get(op.getNumLoops(), 0, result), loops));
    Value element = tensor::ExtractOp::create(rewriter, loc, tensor, indices);
    rewriter.replaceAllUsesWith(body->getArgument(i), element);
    body->eraseArgument(i);
    op.getInputsMutable().erase(i);
    maps.erase(maps.begin() + i);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  }
  return all;
}

namespace {

/// Whether `value` is read only as an input of linalg.generic ops.
bool readOnlyByGenerics(Value value) {
  return !value.use_empty() && llvm::all_of(value.getUses(), [](OpOperand &use) {
    auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
    return generic && generic.isDpsInput(&use);
  });
}

/// Makes the generic that reads `use` read `source` instead, through `results` (over the
/// reader's loops) as the operand's indexing map.
void readThrough(OpOperand &use, Value source, ArrayRef<AffineExpr> results) {
  auto reader = cast<linalg::GenericOp>(use.getOwner());
  AffineMap read = reader.getMatchingIndexingMap(&use);
  SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
  maps[use.getOperandNumber()] =
      AffineMap::get(read.getNumDims(), read.getNumSymbols(), results, reader.getContext());
  reader.setIndexingMapsAttr(Builder(reader.getContext()).getAffineMapArrayAttr(maps));
  use.set(source);
}

/// Reads `slice` in each of its generic readers from the slice's source.
void foldSliceIntoReaders(tensor::ExtractSliceOp slice) {
  std::optional<SmallVector<int64_t>> offsets = getConstantIntValues(slice.getMixedOffsets());
  std::optional<SmallVector<int64_t>> strides = getConstantIntValues(slice.getMixedStrides());
  if (!offsets || !strides || !slice.getSourceType().hasStaticShape() ||
      !slice.getResultType().hasStaticShape() || contiguousSliceByteOffset(slice) ||
      !readOnlyByGenerics(slice.getResult()))
    return;
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  for (OpOperand &use : llvm::make_early_inc_range(slice.getResult().getUses())) {
    auto reader = cast<linalg::GenericOp>(use.getOwner());
    AffineMap read = reader.getMatchingIndexingMap(&use);
    MLIRContext *context = reader.getContext();
    SmallVector<AffineExpr> results;
    unsigned kept = 0;
    for (int64_t d = 0; d < slice.getSourceType().getRank(); ++d) {
      AffineExpr offset = getAffineConstantExpr((*offsets)[d], context);
      if (dropped.test(d)) {
        results.push_back(offset);
        continue;
      }
      AffineExpr index = read.getResult(kept++);
      results.push_back(offset + index * (*strides)[d]);
      // A loop read as a bare index takes its extent from the operand: the start of a longer
      // dimension (x[..., :h] read as x[..., i]) would stretch the loop. Read at i mod h, the
      // same element for every i of the loop, it does not.
      int64_t size = slice.getStaticSizes()[d];
      if (isa<AffineDimExpr>(results.back()) && size != slice.getSourceType().getDimSize(d))
        results.back() = index % size;
    }
    readThrough(use, slice.getSource(), results);
  }
}

/// Writes an expansion of a slice (the heads of one of the projections fused side by side, split
/// into [heads, head size]) as a slice of the expanded source, which the slice's readers then read
/// in place; only where each cut dimension splits into an outer one that the cut falls on.
void expandBeforeSlice(IRRewriter &rewriter, tensor::ExpandShapeOp expand) {
  auto slice = expand.getSrc().getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !expand.getResultType().hasStaticShape() ||
      !slice.getSourceType().hasStaticShape() ||
      slice.getSourceType().getRank() != slice.getResultType().getRank())
    return;
  std::optional<SmallVector<int64_t>> offsets = getConstantIntValues(slice.getMixedOffsets());
  std::optional<SmallVector<int64_t>> strides = getConstantIntValues(slice.getMixedStrides());
  if (!offsets || !strides)
    return;
  ArrayRef<int64_t> source = slice.getSourceType().getShape();
  ArrayRef<int64_t> sliced = slice.getResultType().getShape();
  ArrayRef<int64_t> expanded = expand.getResultType().getShape();
  SmallVector<int64_t> wholeShape, newOffsets;
  for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
    int64_t inner = 1;
    for (int64_t k : ArrayRef<int64_t>(group).drop_front())
      inner *= expanded[k];
    bool cut = sliced[d] != source[d];
    if (cut && ((*strides)[d] != 1 || (*offsets)[d] % inner != 0 || source[d] % inner != 0))
      return;
    for (auto [i, k] : llvm::enumerate(group)) {
      wholeShape.push_back(i == 0 ? source[d] / inner : expanded[k]);
      newOffsets.push_back(i == 0 ? (*offsets)[d] / inner : 0);
    }
  }
  rewriter.setInsertionPoint(expand);
  auto wholeType = RankedTensorType::get(wholeShape, expand.getResultType().getElementType());
  Value whole = tensor::ExpandShapeOp::create(rewriter, expand.getLoc(), wholeType,
                                              slice.getSource(), expand.getReassociationIndices());
  SmallVector<int64_t> ones(expanded.size(), 1);
  rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
      expand, expand.getResultType(), whole,
      ArrayRef<OpFoldResult>(getAsIndexOpFoldResult(rewriter.getContext(), newOffsets)),
      ArrayRef<OpFoldResult>(getAsIndexOpFoldResult(rewriter.getContext(), expanded)),
      ArrayRef<OpFoldResult>(getAsIndexOpFoldResult(rewriter.getContext(), ones)));
}

/// Reads a reshape that only inserts or drops dimensions of one element (an unsqueeze before a
/// broadcast) in each generic reader straight from its source.
template <typename ReshapeOp> void foldUnitReshapeIntoReaders(ReshapeOp reshape) {
  constexpr bool expands = std::is_same_v<ReshapeOp, tensor::ExpandShapeOp>;
  auto source = cast<RankedTensorType>(reshape.getSrc().getType());
  auto result = cast<RankedTensorType>(reshape.getResult().getType());
  if (!source.hasStaticShape() || !result.hasStaticShape() ||
      !readOnlyByGenerics(reshape.getResult()))
    return;
  // Each group of the larger shape holds at most one dimension of more than one element.
  ArrayRef<int64_t> large = expands ? result.getShape() : source.getShape();
  SmallVector<ReassociationIndices> groups = reshape.getReassociationIndices();
  SmallVector<int64_t> kept; // Per group: its dimension of the larger shape that is kept, or -1.
  for (const ReassociationIndices &group : groups) {
    int64_t keep = -1;
    for (int64_t d : group)
      if (large[d] != 1) {
        if (keep >= 0)
          return;
        keep = d;
      }
    kept.push_back(keep);
  }
  for (OpOperand &use : llvm::make_early_inc_range(reshape.getResult().getUses())) {
    auto reader = cast<linalg::GenericOp>(use.getOwner());
    AffineMap read = reader.getMatchingIndexingMap(&use);
    MLIRContext *context = reader.getContext();
    // A loop read only through a dimension that goes away would lose its extent: dropped reads
    // must be constants or loops the reader writes along.
    llvm::SmallBitVector written(reader.getNumLoops());
    for (OpOperand &init : reader.getDpsInitsMutable())
      for (AffineExpr expr : reader.getMatchingIndexingMap(&init).getResults())
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          written.set(dim.getPosition());
    auto droppable = [&](AffineExpr expr) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      return isa<AffineConstantExpr>(expr) || (dim && written.test(dim.getPosition()));
    };
    SmallVector<AffineExpr> results;
    bool valid = true;
    AffineExpr zero = getAffineConstantExpr(0, context);
    if (groups.empty()) {
      // Between a 0-d tensor and dimensions of one element each.
      if (expands)
        valid = llvm::all_of(read.getResults(), droppable);
      else
        results.assign(large.size(), zero);
    }
    for (auto [g, group] : llvm::enumerate(groups)) {
      if (expands) {
        // The reader indexes the larger shape; the source has one dimension per group.
        for (int64_t d : group)
          if (d != kept[g])
            valid &= droppable(read.getResult(d));
        results.push_back(kept[g] >= 0 ? read.getResult(kept[g]) : zero);
      } else {
        // The reader indexes one dimension per group; the source has the group's dimensions.
        if (kept[g] < 0)
          valid &= droppable(read.getResult(g));
        for (int64_t d : group)
          results.push_back(d == kept[g] ? read.getResult(g) : zero);
      }
    }
    if (!valid)
      continue;
    readThrough(use, reshape.getSrc(), results);
  }
}

} // namespace

FailureOr<linalg::GenericOp> writeConcatAsGeneric(RewriterBase &rewriter, tensor::ConcatOp concat) {
  RankedTensorType type = concat.getResultType();
  int64_t axis = concat.getDim();
  if (!type.hasStaticShape() || concat.getInputs().size() < 2)
    return failure();
  MLIRContext *context = concat.getContext();
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> ends;
  int64_t start = 0;
  for (Value input : concat.getInputs()) {
    int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(axis);
    if (size == 0)
      return failure();
    SmallVector<AffineExpr> results;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr index = getAffineDimExpr(d, context);
      results.push_back(d == axis ? (index - start) % size : index);
    }
    maps.push_back(AffineMap::get(rank, 0, results, context));
    start += size;
    ends.push_back(start);
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, context));
  rewriter.setInsertionPoint(concat);
  Location loc = concat.getLoc();
  Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, concat.getInputs(), ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value index = linalg::IndexOp::create(b, l, axis);
        Value chosen = args[ends.size() - 1];
        for (int64_t k = static_cast<int64_t>(ends.size()) - 2; k >= 0; --k) {
          Value end = arith::ConstantIndexOp::create(b, l, ends[k]);
          Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, index, end);
          chosen = arith::SelectOp::create(b, l, inside, args[k], chosen);
        }
        linalg::YieldOp::create(b, l, chosen);
      });
  rewriter.replaceOp(concat, generic.getResult(0));
  return generic;
}

namespace {

struct FoldDataMovementPass : impl::FoldDataMovementPassBase<FoldDataMovementPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Transposes first: their slices are then folded into generics reading the transpose.
    SmallVector<linalg::TransposeOp> transposes;
    getOperation().walk([&](linalg::TransposeOp op) { transposes.push_back(op); });
    for (linalg::TransposeOp op : transposes) {
      // A size read of the transpose (the lowering's tensor.dim of a LayerNormalization's
      // input) reads the generic's result as well.
      bool fusible = llvm::all_of(op->getUsers(), [](Operation *user) {
        return isa<linalg::GenericOp, tensor::ExtractSliceOp, tensor::ConcatOp,
                   tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::DimOp>(user);
      });
      if (!fusible || op->use_empty())
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op.emitError("cannot write the transpose as a linalg.generic");
        return signalPassFailure();
      }
    }
    // Concatenations before slices: a slice read by a concatenation is then read by a generic.
    SmallVector<tensor::ConcatOp> concats;
    getOperation().walk([&](tensor::ConcatOp op) { concats.push_back(op); });
    for (tensor::ConcatOp op : concats)
      if (static_cast<int64_t>(op.getInputs().size()) <= maxConcatOperands &&
          readOnlyByGenerics(op.getResult()))
        (void)writeConcatAsGeneric(rewriter, op);
    // Reshapes that only insert or drop unit dimensions (an unsqueeze before a broadcast), once
    // a reshape through one dimension (the lowering's collapse then expand) is made one.
    RewritePatternSet patterns(&getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    SmallVector<tensor::ExpandShapeOp> expansions;
    getOperation().walk([&](tensor::ExpandShapeOp op) { expansions.push_back(op); });
    for (tensor::ExpandShapeOp op : expansions)
      expandBeforeSlice(rewriter, op);
    SmallVector<Operation *> reshapes;
    getOperation().walk([&](Operation *op) {
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
        reshapes.push_back(op);
    });
    for (Operation *op : reshapes) {
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
        foldUnitReshapeIntoReaders(expand);
      else
        foldUnitReshapeIntoReaders(cast<tensor::CollapseShapeOp>(op));
      if (op->use_empty())
        rewriter.eraseOp(op);
    }
    SmallVector<tensor::ExtractSliceOp> slices;
    getOperation().walk([&](tensor::ExtractSliceOp op) { slices.push_back(op); });
    for (tensor::ExtractSliceOp op : slices) {
      foldSliceIntoReaders(op);
      if (op->use_empty())
        rewriter.eraseOp(op);
    }
  }
};

} // namespace
} // namespace kiln
