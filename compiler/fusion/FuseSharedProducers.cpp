//===- FuseSharedProducers.cpp - Cheap elementwise producers into every reader -===//
//
// Upstream elementwise fusion moves a producer into its consumer only when the consumer is its
// one reader. A cheap producer with a few readers (softmax's exp(x - max), read by the sum and
// by the division; layer norm's x - mean, read by the variance and by the normalization) is
// computed again inside each of them instead, so no reader waits on a tensor the producer
// writes: what remains between them is one value per row. A reader stops taking producers once
// it would hold more than max-fused-ops ops, so that chains of duplications stay bounded.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSESHAREDPRODUCERSPASS
#include "compiler/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

struct FuseSharedProducersPass : impl::FuseSharedProducersPassBase<FuseSharedProducersPass> {
  using Base::Base;

  /// Whether the producer of `operand` may be computed inside its reader too.
  bool mayDuplicate(OpOperand *operand) const {
    auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer.getNumDpsInits() != 1 || producer.getNumReductionLoops() != 0)
      return false;
    if (producer->hasOneUse())
      return true;
    int64_t readers = 0;
    for (Operation *user : producer->getUsers()) {
      if (!isa<linalg::GenericOp>(user))
        return false;
      ++readers;
    }
    int64_t bodyOps = llvm::range_size(producer.getBody()->without_terminator());
    auto reader = cast<linalg::GenericOp>(operand->getOwner());
    int64_t readerOps = llvm::range_size(reader.getBody()->without_terminator());
    return readers <= maxReaders && bodyOps <= maxOps && readerOps + bodyOps <= maxFusedOps;
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [this](OpOperand *operand) { return mayDuplicate(operand); });
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
