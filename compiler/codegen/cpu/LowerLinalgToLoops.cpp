//===- LowerLinalgToLoops.cpp - Linalg to loops that say they are parallel ------===//
//
// Upstream's convert-linalg-to-loops, plus what the loops are: the innermost loop of an op's
// parallel dimension carries no memory dependence from one iteration to the next (linalg's
// semantics), and it says so as LLVM loop metadata, `llvm.loop.parallel_accesses` over an access
// group of its own. Without it the LLVM loop vectorizer proves independence itself, with a
// run-time check per pair of pointers: a kernel that writes over its input in place (the memory
// plan's in-place elementwise steps) fails the check and runs its scalar copy, and a kernel with
// more bindings than the vectorizer's check limit is never vectorized. kiln-attach-access-groups
// puts the group on the loop's loads and stores once they are LLVM operations.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {

#define GEN_PASS_DEF_LOWERLINALGTOLOOPSPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

/// Whether the iterations of `op`'s innermost loop touch disjoint output elements: the loop is
/// a parallel dimension and every output is indexed by it. (Inputs are read only; an input that
/// shares an output's buffer is read at the element being written, which is how bufferization
/// and the memory plan let a kernel work in place.)
bool innermostLoopIsParallel(linalg::LinalgOp op) {
  unsigned loops = op.getNumLoops();
  if (loops == 0 || !linalg::isParallelIterator(op.getIteratorTypesArray().back()))
    return false;
  return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    return op.getMatchingIndexingMap(&init).isFunctionOfDim(loops - 1);
  });
}

struct LowerLinalgToLoopsPass : impl::LowerLinalgToLoopsPassBase<LowerLinalgToLoopsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(context);
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitError("cannot lower to loops before bufferization: an operand is a tensor");
        return signalPassFailure();
      }
      bool parallel = innermostLoopIsParallel(op);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops)) {
        op.emitError("could not be lowered to loops");
        return signalPassFailure();
      }
      auto innermost = loops->empty() ? scf::ForOp() : dyn_cast<scf::ForOp>(loops->back());
      if (parallel && innermost && loops->size() == op.getNumLoops()) {
        auto group = LLVM::AccessGroupAttr::get(context);
        innermost->setAttr(kParallelLoopAttr,
                           LLVM::LoopAnnotationAttr::get(
                               context, /*disableNonforced=*/nullptr, /*vectorize=*/nullptr,
                               /*interleave=*/nullptr, /*unroll=*/nullptr,
                               /*unrollAndJam=*/nullptr, /*licm=*/nullptr,
                               /*distribute=*/nullptr, /*pipeline=*/nullptr,
                               /*peeled=*/nullptr, /*unswitch=*/nullptr,
                               /*mustProgress=*/nullptr, /*isVectorized=*/nullptr,
                               /*startLoc=*/nullptr, /*endLoc=*/nullptr, {group}));
      }
      rewriter.eraseOp(op);
    }
    // The index arithmetic the loops leave folds as upstream's lowering folds it.
    RewritePatternSet patterns(context);
    memref::DimOp::getCanonicalizationPatterns(patterns, context);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
