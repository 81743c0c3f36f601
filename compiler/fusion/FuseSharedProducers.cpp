//===- FuseSharedProducers.cpp - Cheap elementwise producers into every reader -===//
//
// Upstream elementwise fusion moves a producer into its consumer only when the consumer is its
// one reader. A cheap producer with a few readers (softmax's exp(x - max), read by the sum and
// by the division; layer norm's x - mean, read by the variance and by the normalization) is
// computed again inside each of them instead, so no reader waits on a tensor the producer
// writes: what remains between them is one value per row. A reader stops taking producers once
// it would hold more than max-fused-ops ops, so that chains of duplications stay bounded.
//
// A producer that reads per-row values (a reduction's result, or one computed from it: layer
// norm's normalization reads the mean and the reciprocal deviation) is computed again only in
// readers of the same row computation, readers that reduce or read per-row values themselves.
// Copied into readers outside it (the half-precision cast before the next product, the next
// residual add), it would make every per-row value read by several kernels, and the reductions
// that compute them kernels of their own, one thread per row.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSESHAREDPRODUCERSPASS
#include "compiler/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// Whether `value` holds per-row values: the result of a reduction written as a generic, or of an
/// elementwise generic over per-row values alone (the mean's division, the deviation's rsqrt).
bool isRowValue(Value value, unsigned depth = 0) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || depth > 4)
    return false;
  if (generic.getNumReductionLoops() != 0)
    return true;
  bool any = false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(input->get().getType()) || matchPattern(input->get(), m_Constant()))
      continue;
    if (!isRowValue(input->get(), depth + 1))
      return false;
    any = true;
  }
  return any;
}

/// Whether `generic` reads per-row values through an operand other than `except`.
bool readsRowValues(linalg::GenericOp generic, Value except) {
  return llvm::any_of(generic.getDpsInputOperands(), [&](OpOperand *input) {
    return input->get() != except && isRowValue(input->get());
  });
}

struct FuseSharedProducersPass : impl::FuseSharedProducersPassBase<FuseSharedProducersPass> {
  using Base::Base;

  /// Whether the producer of `operand` may be computed inside its reader too.
  bool mayDuplicate(OpOperand *operand) const {
    auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer.getNumDpsInits() != 1 || producer.getNumReductionLoops() != 0)
      return false;
    // Costly work is not repeated for every point of a reader that broadcasts it.
    if (isCostlyToRepeat(operand, maxRepeatedEvaluations))
      return false;
    if (producer->hasOneUse())
      return true;
    bool readsRows = readsRowValues(producer, Value());
    int64_t readers = 0;
    for (Operation *user : producer->getUsers()) {
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic)
        return false;
      // Per-row values stay inside one row computation (the file's header).
      if (readsRows && generic.getNumReductionLoops() == 0 &&
          !readsRowValues(generic, operand->get()))
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
