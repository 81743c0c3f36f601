//===- FuseElementwise.cpp - Elementwise fusion that repeats no costly work ----===//
//
// Upstream `linalg-fuse-elementwise-ops` fuses a producer into its one reader whatever the
// reader does with it. A reader that broadcasts the producer's result (the multiply of a
// squeeze-and-excitation block reads one sigmoid per channel at every pixel) then computes the
// producer's body once per point of its own: EfficientNet-B0's sigmoids ran 3136 times per
// channel, 0.9 ms a kernel where the multiply alone takes a tenth of it. Here, as XLA's fusion
// decides it, a producer whose body holds costly ops (division, exponentials, logarithms, roots,
// powers, trigonometry) is not fused into a reader that reuses its elements (beyond
// max-repeated-evaluations repeated evaluations, about what a kernel of its own costs: a few
// thousand on a CPU, millions on a GPU); the rest is
// fused as upstream fuses it, with the same reshape propagation, canonicalization and constant
// folding around it.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Passes.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "compiler/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// The largest value of the index `value` in a program for a range of shapes: a constant, a
/// dimension of a value (largestDimAt), or their sums and products; nothing where unknown.
std::optional<int64_t> largestIndex(Value value, unsigned depth);

/// largestDim, `depth` steps back from where it was asked.
std::optional<int64_t> largestDimAt(Value value, int64_t dim, unsigned depth) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || dim >= type.getRank())
    return std::nullopt;
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim);
  if (depth > 16)
    return std::nullopt;
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    if (!function)
      return std::nullopt;
    auto bounds =
        function.getArgAttrOfType<DenseI64ArrayAttr>(argument.getArgNumber(), kDimBoundsAttr);
    if (!bounds || bounds.size() != 2 * type.getRank() ||
        ShapedType::isDynamic(bounds[2 * dim + 1]))
      return std::nullopt;
    return bounds[2 * dim + 1];
  }
  Operation *op = value.getDefiningOp();
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(op))
    return largestIndex(empty.getDynamicSize(dim), depth + 1);
  if (auto destination = dyn_cast_or_null<DestinationStyleOpInterface>(op))
    return largestDimAt(destination.getTiedOpOperand(cast<OpResult>(value))->get(), dim, depth + 1);
  return std::nullopt;
}

std::optional<int64_t> largestIndex(Value value, unsigned depth) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return constant;
  if (depth > 16)
    return std::nullopt;
  Operation *op = value.getDefiningOp();
  if (auto dim = dyn_cast_or_null<tensor::DimOp>(op)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    return index ? largestDimAt(dim.getSource(), *index, depth + 1) : std::nullopt;
  }
  if (isa_and_nonnull<arith::AddIOp, arith::MulIOp>(op)) {
    std::optional<int64_t> lhs = largestIndex(op->getOperand(0), depth + 1);
    std::optional<int64_t> rhs = largestIndex(op->getOperand(1), depth + 1);
    if (!lhs || !rhs || *lhs < 0 || *rhs < 0)
      return std::nullopt;
    return isa<arith::AddIOp>(op) ? *lhs + *rhs : *lhs * *rhs;
  }
  return std::nullopt;
}

} // namespace

std::optional<int64_t> largestDim(Value value, int64_t dim) { return largestDimAt(value, dim, 0); }

std::optional<int64_t> largestLoop(linalg::LinalgOp op, unsigned loop) {
  std::optional<int64_t> largest;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [position, result] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(result);
      if (!dim || dim.getPosition() != loop)
        continue;
      if (std::optional<int64_t> size = largestDim(operand.get(), position))
        largest = largest ? std::min(*largest, *size) : *size;
    }
  }
  return largest;
}

bool isCostlyToRepeat(OpOperand *operand, int64_t maxRepeated) {
  auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
  auto reader = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!producer || !reader)
    return false;
  bool costly = false;
  producer.getBody()->walk([&](Operation *op) {
    costly |= op->getDialect() == op->getContext()->getLoadedDialect<math::MathDialect>() ||
              isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp, arith::RemSIOp,
                  arith::RemUIOp>(op);
  });
  if (!costly)
    return false;
  // The reader reuses the producer's elements when some of its loops do not index the operand:
  // every point along them reads the same element.
  AffineMap map = reader.getMatchingIndexingMap(operand);
  // A dynamic loop counts as the largest the program's ranges allow (as a program compiled for
  // the largest shape decides), or as long where that is not known; the products saturate well
  // above any bound.
  constexpr int64_t kLong = int64_t(1) << 24;
  SmallVector<int64_t> extents = reader.getStaticLoopRanges();
  int64_t reuse = 1, evaluations = 1;
  for (unsigned loop = 0; loop < reader.getNumLoops(); ++loop) {
    int64_t extent = extents[loop];
    if (ShapedType::isDynamic(extent))
      extent = std::min(largestLoop(reader, loop).value_or(kLong), kLong);
    int64_t &product = map.isFunctionOfDim(loop) ? evaluations : reuse;
    product = std::min(product * extent, kLong);
  }
  return evaluations * (reuse - 1) > maxRepeated;
}

namespace {

struct FuseElementwisePass : impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::ControlFusionFn oneReader = [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::ControlFusionFn fuse = [this, oneReader](OpOperand *operand) {
      return oneReader(operand) && !isCostlyToRepeat(operand, maxRepeatedEvaluations);
    };
    // What upstream's linalg-fuse-elementwise-ops applies, with `fuse` deciding the fusions.
    linalg::populateElementwiseOpsFusionPatterns(patterns, fuse);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, oneReader);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, oneReader);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
