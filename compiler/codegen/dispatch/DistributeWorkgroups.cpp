//===- DistributeWorkgroups.cpp - Map workgroup loops to the workgroup id ----===//
//
// After bufferization, a split dispatch function holds one scf.forall over its tiles. The loop
// disappears: the function takes the workgroup id as its last argument and runs the one tile
// that id names. The runtime (or the CUDA grid) runs all ids.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
#define GEN_PASS_DEF_DISTRIBUTEWORKGROUPSPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

bool mayWriteMemory(Operation *op) {
  if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
    return false;
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    if (effects.hasEffect<MemoryEffects::Write>())
      return true;
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return true;
  }
  if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    WalkResult nested = op->walk([&](Operation *inner) {
      if (inner != op && mayWriteMemory(inner))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return nested.wasInterrupted();
  }
  return false;
}

namespace {

/// The trip counts of a forall with static bounds, or nothing.
std::optional<SmallVector<int64_t>> staticTripCounts(scf::ForallOp loop) {
  std::optional<SmallVector<int64_t>> lower = getConstantIntValues(loop.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> upper = getConstantIntValues(loop.getMixedUpperBound());
  std::optional<SmallVector<int64_t>> steps = getConstantIntValues(loop.getMixedStep());
  if (!lower || !upper || !steps)
    return std::nullopt;
  SmallVector<int64_t> counts;
  for (auto [lb, ub, step] : llvm::zip(*lower, *upper, *steps)) {
    if (step <= 0)
      return std::nullopt;
    counts.push_back(ub > lb ? llvm::divideCeil(ub - lb, step) : 0);
  }
  return counts;
}

/// For a forall whose extents are known only at run time (a program for a range of shapes):
/// per loop, (binding, dimension, step) as kiln.workgroup_dims describes it, where each upper
/// bound is a constant or a dimension of one of the function's bindings and each lower bound 0;
/// nothing otherwise.
std::optional<SmallVector<int64_t>> dynamicTripCounts(scf::ForallOp loop, func::FuncOp function) {
  std::optional<SmallVector<int64_t>> lower = getConstantIntValues(loop.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> steps = getConstantIntValues(loop.getMixedStep());
  if (!lower || !steps || llvm::any_of(*lower, [](int64_t lb) { return lb != 0; }))
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (auto [upper, step] : llvm::zip(loop.getMixedUpperBound(), *steps)) {
    if (step <= 0)
      return std::nullopt;
    if (std::optional<int64_t> extent = getConstantIntValue(upper)) {
      dims.append({-1, *extent, step});
      continue;
    }
    auto dim = cast<Value>(upper).getDefiningOp<memref::DimOp>();
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    auto argument = dim ? dyn_cast<BlockArgument>(dim.getSource()) : BlockArgument();
    if (!index || !argument || argument.getOwner() != &function.getBody().front())
      return std::nullopt;
    dims.append({static_cast<int64_t>(argument.getArgNumber()), *index, step});
  }
  return dims;
}

/// Replaces `loop` by its body at `inductionValues`: the one tile a workgroup runs.
LogicalResult runOneTile(IRRewriter &rewriter, scf::ForallOp loop, ValueRange inductionValues) {
  if (loop.getNumResults() != 0)
    return loop.emitError("the workgroup loop still has tensor results after bufferization");
  Block *loopBody = loop.getBody();
  rewriter.eraseOp(loopBody->getTerminator());
  rewriter.inlineBlockBefore(loopBody, loop, inductionValues);
  rewriter.eraseOp(loop);
  return success();
}

struct DistributeWorkgroupsPass
    : impl::DistributeWorkgroupsPassBase<DistributeWorkgroupsPass> {
  LogicalResult distribute(func::FuncOp function) {
    MLIRContext *context = function.getContext();
    IRRewriter rewriter(context);
    unsigned idIndex = function.getNumArguments();
    if (failed(function.insertArgument(idIndex, IndexType::get(context), {}, function.getLoc())))
      return function.emitError("cannot add the workgroup id argument");
    Value workgroupId = function.getArgument(idIndex);
    Block &body = function.getBody().front();

    SmallVector<scf::ForallOp> loops;
    bool otherWrites = false;
    for (Operation &op : body) {
      if (auto loop = dyn_cast<scf::ForallOp>(op))
        loops.push_back(loop);
      else if (mayWriteMemory(&op))
        otherWrites = true;
    }
    std::optional<SmallVector<int64_t>> counts;
    std::optional<SmallVector<int64_t>> dynamicCounts;
    if (loops.size() == 1 && !otherWrites) {
      counts = staticTripCounts(loops.front());
      if (!counts)
        dynamicCounts = dynamicTripCounts(loops.front(), function);
    }
    if (dynamicCounts)
      return distributeDynamic(function, loops.front(), workgroupId, *dynamicCounts);
    int64_t workgroups = 1;
    if (counts) {
      for (int64_t count : *counts)
        workgroups *= count;
    }
    if (!counts || workgroups < 1) {
      // Not safely splittable: every loop runs in the single workgroup.
      for (scf::ForallOp loop : loops) {
        rewriter.setInsertionPoint(loop);
        if (failed(scf::forallToForLoop(rewriter, loop)))
          return loop.emitError("cannot turn the workgroup loop into a sequential loop");
      }
      function->setAttr(kWorkgroupCountAttr, rewriter.getI64IntegerAttr(1));
      return success();
    }

    scf::ForallOp loop = loops.front();
    rewriter.setInsertionPoint(loop);
    Location loc = loop.getLoc();
    SmallVector<Value> indices;
    if (counts->size() == 1) {
      indices.push_back(workgroupId);
    } else {
      SmallVector<int64_t> basis(counts->begin(), counts->end());
      auto delinearized =
          affine::AffineDelinearizeIndexOp::create(rewriter, loc, workgroupId, basis);
      llvm::append_range(indices, delinearized.getResults());
    }
    SmallVector<Value> inductionValues;
    for (auto [index, lb, step] :
         llvm::zip(indices, loop.getMixedLowerBound(), loop.getMixedStep())) {
      Value lower = getValueOrCreateConstantIndexOp(rewriter, loc, lb);
      Value stride = getValueOrCreateConstantIndexOp(rewriter, loc, step);
      Value scaled = arith::MulIOp::create(rewriter, loc, index, stride);
      inductionValues.push_back(arith::AddIOp::create(rewriter, loc, lower, scaled));
    }
    if (failed(runOneTile(rewriter, loop, inductionValues)))
      return failure();
    function->setAttr(kWorkgroupCountAttr, rewriter.getI64IntegerAttr(workgroups));
    return success();
  }

  /// Maps a forall with run-time extents to the workgroup id: the trip counts are computed in
  /// the kernel from its bindings' dimensions, as the runtime computes the workgroup count from
  /// kiln.workgroup_dims.
  LogicalResult distributeDynamic(func::FuncOp function, scf::ForallOp loop, Value workgroupId,
                                  ArrayRef<int64_t> dims) {
    IRRewriter rewriter(function.getContext());
    rewriter.setInsertionPoint(loop);
    Location loc = loop.getLoc();
    SmallVector<OpFoldResult> basis;
    for (auto [upper, step] : llvm::zip(loop.getMixedUpperBound(), loop.getMixedStep())) {
      AffineExpr extent = rewriter.getAffineSymbolExpr(0);
      int64_t stride = *getConstantIntValue(step);
      basis.push_back(affine::makeComposedFoldedAffineApply(rewriter, loc, extent.ceilDiv(stride),
                                                            ArrayRef<OpFoldResult>{upper}));
    }
    SmallVector<Value> indices;
    if (basis.size() == 1) {
      indices.push_back(workgroupId);
    } else {
      auto delinearized = affine::AffineDelinearizeIndexOp::create(rewriter, loc, workgroupId,
                                                                   basis, /*hasOuterBound=*/true);
      llvm::append_range(indices, delinearized.getResults());
    }
    SmallVector<Value> inductionValues;
    for (auto [index, step] : llvm::zip(indices, loop.getMixedStep())) {
      Value stride = getValueOrCreateConstantIndexOp(rewriter, loc, step);
      inductionValues.push_back(arith::MulIOp::create(rewriter, loc, index, stride));
    }
    if (failed(runOneTile(rewriter, loop, inductionValues)))
      return failure();
    function->setAttr(kWorkgroupCountAttr, rewriter.getI64IntegerAttr(1));
    function->setAttr(kWorkgroupDimsAttr, rewriter.getDenseI64ArrayAttr(dims));
    return success();
  }

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (!function->hasAttr(kDispatchAttr) || function.isExternal())
        continue;
      if (failed(distribute(function)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace kiln
