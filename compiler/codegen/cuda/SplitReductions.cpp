//===- SplitReductions.cpp - Long reductions to few values over many threads ---===//
//
// On CUDA the threads of a kernel take the points of its result: a reduction that computes few
// values (the sum of a whole tensor, the norms of a few long rows) ran on as many threads as it
// has results, one thread summing a million elements. This pass splits such a reduction in two
// (upstream linalg::splitReduction): the first computes one partial value per chunk of each
// result's elements (many rows, which the CUDA kernels spread over the grid), the second folds
// each result's partial values. Reductions over several dimensions are first collapsed into one
// (linalg::collapseOpIterationDims) where the dimensions are contiguous in every operand.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_SPLITREDUCTIONSPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// The most partial values of all results together (threads reading the input at once: a
/// quarter of what a large GPU keeps resident, enough to keep its memory busy), and the fewest
/// elements a chunk keeps.
constexpr int64_t kMaxPartials = 65536;
constexpr int64_t kMinChunk = 256;

/// The most partial values of a result without a dimension (a scalar), which one thread folds
/// (a row kernel needs a row to share).
constexpr int64_t kMaxScalarPartials = 4096;

/// The number of chunks for each of `results` reductions of `length` elements: the largest
/// divisor of `length` up to kMaxPartials / `results` (kMaxScalarPartials for a scalar) that
/// leaves chunks of kMinChunk elements or more; 1 when there is none. The partial values of
/// each result are folded by a block (kiln-tile-dispatches' row tiles).
int64_t chunksFor(int64_t results, int64_t length, bool scalar) {
  int64_t most =
      std::min(scalar ? kMaxScalarPartials : kMaxPartials / std::max<int64_t>(results, 1),
               length / kMinChunk);
  for (int64_t chunks = most; chunks > 1; --chunks)
    if (length % chunks == 0)
      return chunks;
  return 1;
}

struct SplitReductionsPass : impl::SplitReductionsPassBase<SplitReductionsPass> {
  using Base::Base;

  /// How a reduction is split: its reduction loops, collapsed into one first when there are
  /// several, and the number of chunks each result's elements are cut into.
  struct Split {
    ReassociationIndices dims;
    int64_t chunks;
  };

  /// The split of `op` when it is one to split: tensors, one result, static loops, fewer than
  /// `maxResults` result points and at least `minLength` elements reduced into each, the
  /// reduction loops consecutive and contiguous in every operand, and more than one chunk.
  std::optional<Split> splittable(linalg::GenericOp op) {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
      return std::nullopt;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return std::nullopt;
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    int64_t results = 1, length = 1;
    for (auto [d, range] : llvm::enumerate(ranges))
      (llvm::is_contained(reductions, d) ? length : results) *= range;
    if (results >= maxResults || length < minLength)
      return std::nullopt;
    ReassociationIndices dims(reductions.begin(), reductions.end());
    for (size_t k = 1; k < dims.size(); ++k)
      if (dims[k] != dims[k - 1] + 1)
        return std::nullopt;
    if (dims.size() > 1 && !linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {dims}))
      return std::nullopt;
    int64_t chunks = chunksFor(results, length, op.getNumParallelLoops() == 0);
    if (chunks <= 1)
      return std::nullopt;
    return Split{dims, chunks};
  }

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Split>> candidates;
    getOperation().walk([&](func::FuncOp function) {
      if (!function->hasAttr(kDispatchAttr) || function.isExternal())
        return;
      function.walk([&](linalg::GenericOp op) {
        if (std::optional<Split> split = splittable(op))
          candidates.push_back({op, *split});
      });
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, plan] : candidates) {
      linalg::LinalgOp reduction = op;
      rewriter.setInsertionPoint(op);
      if (plan.dims.size() > 1) {
        FailureOr<linalg::CollapseResult> collapsed =
            linalg::collapseOpIterationDims(op, {plan.dims}, rewriter);
        if (failed(collapsed))
          continue;
        rewriter.replaceOp(op, collapsed->results);
        reduction = collapsed->collapsedOp;
      }
      int64_t chunks = plan.chunks;
      // The chunk index is the last dimension of the partial values (each result's chunks side
      // by side) and the inner part of the split loop: chunk c takes the elements c, c + chunks,
      // ..., so neighbouring threads read neighbouring elements (coalesced on a GPU).
      unsigned index = reduction.getRank(reduction.getDpsInitOperand(0));
      auto control = [&](linalg::LinalgOp) {
        return linalg::SplitReductionOptions{chunks, index, /*innerParallel=*/true};
      };
      FailureOr<linalg::SplitReductionResult> split =
          linalg::splitReduction(rewriter, reduction, control);
      // Not splittable (no neutral element of the combining op, say): it stays as it is.
      if (failed(split))
        continue;
      // The chunks' loop outermost, so that they become the kernel's parallel points and each
      // runs its share of the reduction.
      auto partial = dyn_cast<linalg::GenericOp>(split->splitLinalgOp.getOperation());
      if (!partial)
        continue;
      SmallVector<unsigned> order, reduced;
      for (auto [d, type] : llvm::enumerate(partial.getIteratorTypesArray()))
        (type == utils::IteratorType::parallel ? order : reduced).push_back(d);
      order.append(reduced.begin(), reduced.end());
      rewriter.setInsertionPoint(partial);
      (void)linalg::interchangeGenericOp(rewriter, partial, order);
    }
  }
};

} // namespace
} // namespace kiln
