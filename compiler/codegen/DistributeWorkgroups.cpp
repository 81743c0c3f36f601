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
    if (loops.size() == 1 && !otherWrites)
      counts = staticTripCounts(loops.front());
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
    if (loop.getNumResults() != 0)
      return loop.emitError("the workgroup loop still has tensor results after bufferization");
    Block *loopBody = loop.getBody();
    rewriter.eraseOp(loopBody->getTerminator());
    rewriter.inlineBlockBefore(loopBody, loop, inductionValues);
    rewriter.eraseOp(loop);
    function->setAttr(kWorkgroupCountAttr, rewriter.getI64IntegerAttr(workgroups));
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
