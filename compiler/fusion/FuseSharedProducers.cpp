//===- FuseSharedProducers.cpp - Cheap elementwise producers into every reader -===//
//
// Upstream elementwise fusion moves a producer into its consumer only when the consumer is its
// one reader. A cheap producer with a few readers (softmax's exp(x - max), read by the sum and
// by the division; layer norm's x - mean, read by the variance and by the normalization) is
// computed again inside each of them instead, so no reader waits on a tensor the producer
// writes: what remains between them is one value per row. Whether the copies pay is the cost
// model's call (CostModel.h): the producer's kernel (its launch, its reads and the tensor it
// writes) against what each reader computes and reads more when it evaluates the producer at
// each of its points. A reader stops taking producers once it would hold more than
// max-fused-ops ops, so that chains of duplications stay bounded.
//
// A producer that reads per-row values (a reduction's result, or one computed from it: layer
// norm's normalization reads the mean and the reciprocal deviation) is computed again only in
// readers of the same row computation, readers that reduce or read per-row values themselves.
// Copied into readers outside it (the half-precision cast before the next product, the next
// residual add), it would make every per-row value read by several kernels, and the reductions
// that compute them kernels of their own, one thread per row.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/CostModel.h"
#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/MapVector.h"

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

  fusion::DeviceDescription device_;

  /// The modeled time computing `producer` again in each of its readers saves: its kernel,
  /// less what each reader then computes and reads more (the producer's body at each of the
  /// reader's points, the producer's inputs it did not read already, instead of its result).
  double duplicationSaving(linalg::GenericOp producer) const {
    // The bytes of each input the producer reads (a slice read through its map: the slice's),
    // which a reader computing the producer reads in its place.
    llvm::SmallMapVector<Value, double, 4> inputs;
    double inputBytes = 0;
    for (OpOperand *input : producer.getDpsInputOperands())
      if (isa<RankedTensorType>(input->get().getType()) && !inputs.count(input->get())) {
        double bytes = touchedBytes(producer, *input);
        inputs[input->get()] = bytes;
        inputBytes += bytes;
      }
    double resultBytes = modeledBytes(producer->getResult(0));
    double bodyFlops = iterationFlops(producer);
    double apart = fusion::kernelSeconds(
        device_, {static_cast<double>(modeledIterations(producer)) * bodyFlops,
                  inputBytes + resultBytes});
    double copies = 0;
    for (Operation *user : producer->getUsers()) {
      auto reader = cast<linalg::GenericOp>(user);
      double moreBytes = -resultBytes;
      for (auto [input, bytes] : inputs)
        if (!llvm::is_contained(reader.getDpsInputs(), input))
          moreBytes += bytes;
      copies += static_cast<double>(modeledIterations(reader)) * bodyFlops /
                    device_.fp32FlopsPerSecond +
                moreBytes / device_.bytesPerSecond;
    }
    return apart - copies;
  }

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
    if ((maxReaders > 0 && readers > maxReaders) || bodyOps > maxOps ||
        readerOps + bodyOps > maxFusedOps)
      return false;
    return duplicationSaving(producer) > 0;
  }

  /// Reads the device description once for every function the pass runs on.
  LogicalResult initialize(MLIRContext *context) override {
    std::string error;
    std::optional<fusion::DeviceDescription> description =
        fusion::DeviceDescription::load(device, error);
    if (!description)
      return emitError(UnknownLoc::get(context)) << "the fusion cost model: " << error;
    device_ = *description;
    return success();
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
