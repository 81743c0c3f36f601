//===- PlanMemory.cpp - Arena offsets for a program's allocations ------------===//

#include "compiler/program/MemoryPlanner.h"
#include "compiler/program/Passes.h"
#include "compiler/program/StepOrder.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/EquivalenceClasses.h"

namespace kiln {

#define GEN_PASS_DEF_PLANMEMORYPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

/// An allocation's live range in step order.
struct Range {
  int64_t first = -1;
  int64_t last = -1;
};

void planProgram(program::ProgramOp program, int64_t alignment, bool inPlace) {
  // Live ranges, by walking the steps in order. A buffer stays live across every step that may
  // run at the same time as one that uses it (on another stream), so that buffers sharing bytes
  // are never used at once.
  StepOrder order(program);
  SmallVector<program::AllocOp> allocs;
  DenseMap<Operation *, unsigned> index;
  SmallVector<Range> ranges;
  for (auto alloc : program.getBody().front().getOps<program::AllocOp>()) {
    index[alloc] = allocs.size();
    allocs.push_back(alloc);
    ranges.push_back({});
  }
  for (auto [at, op] : llvm::enumerate(order.steps())) {
    auto [spanFirst, spanLast] = order.concurrentSpan(at);
    for (Value buffer : op->getOperands()) {
      auto alloc = program::rootBuffer(buffer).getDefiningOp<program::AllocOp>();
      if (!alloc)
        continue;
      Range &range = ranges[index.lookup(alloc)];
      range.first = range.first < 0 ? spanFirst : std::min(range.first, spanFirst);
      range.last = std::max(range.last, spanLast);
    }
  }
  // An allocation no step binds is live where it is written, for a step only.
  for (Range &range : ranges)
    if (range.first < 0)
      range.first = range.last = 0;

  // In place: an elementwise dispatch's output takes its input's bytes when the dispatch is the
  // input's last use and no other binding of the step reads the input otherwise.
  llvm::EquivalenceClasses<unsigned> groups;
  for (unsigned i = 0; i < allocs.size(); ++i)
    groups.insert(i);
  SmallVector<Range> groupRanges(ranges);
  if (inPlace) {
    for (auto [position, op] : llvm::enumerate(order.steps())) {
      auto dispatch = dyn_cast<program::DispatchOp>(op);
      int64_t at = position;
      if (!dispatch || !dispatch.getInPlace())
        continue;
      ArrayRef<int64_t> pairs = *dispatch.getInPlace();
      llvm::SmallDenseSet<unsigned> taken;
      for (size_t p = 0; p < pairs.size(); p += 2) {
        auto input = program::rootBuffer(dispatch.getInputs()[pairs[p]])
                         .getDefiningOp<program::AllocOp>();
        auto output = program::rootBuffer(dispatch.getOutputs()[pairs[p + 1]])
                          .getDefiningOp<program::AllocOp>();
        // Only a whole buffer is reused in place, never a slice of a larger one.
        auto whole = [](Value value) {
          return program::viewByteOffset(value) == 0 &&
                 program::bufferBytes(cast<MemRefType>(value.getType())) ==
                     program::bufferBytes(cast<MemRefType>(program::rootBuffer(value).getType()));
        };
        if (!input || !output || input == output || !whole(dispatch.getInputs()[pairs[p]]) ||
            !whole(dispatch.getOutputs()[pairs[p + 1]]))
          continue;
        unsigned a = index.lookup(input), b = index.lookup(output);
        unsigned leaderA = groups.getLeaderValue(a), leaderB = groups.getLeaderValue(b);
        if (leaderA == leaderB || taken.count(leaderA) || taken.count(leaderB) ||
            groupRanges[leaderA].last != at || groupRanges[leaderB].first != at ||
            program::bufferBytes(input.getType()) != program::bufferBytes(output.getType()))
          continue;
        // Every other binding of the input must be an in-place input of the same output.
        bool exclusive = true;
        for (auto [k, operand] : llvm::enumerate(dispatch->getOpOperands())) {
          if (program::rootBuffer(operand.get()).getDefiningOp() != input.getOperation())
            continue;
          bool paired = false;
          for (size_t q = 0; q < pairs.size(); q += 2)
            paired |= k == static_cast<size_t>(pairs[q]) && pairs[q + 1] == pairs[p + 1];
          exclusive &= paired;
        }
        if (!exclusive)
          continue;
        Range merged{groupRanges[leaderA].first, groupRanges[leaderB].last};
        groups.unionSets(a, b);
        unsigned leader = groups.getLeaderValue(a);
        groupRanges[leader] = merged;
        taken.insert(leader);
      }
    }
  }

  // One buffer per group, as large as its largest member.
  std::vector<BufferLifetime> lifetimes;
  DenseMap<unsigned, unsigned> slot;
  uint64_t naive = 0;
  for (unsigned i = 0; i < allocs.size(); ++i) {
    uint64_t bytes = program::bufferBytes(allocs[i].getType());
    naive += alignedBufferSize(bytes, alignment);
    unsigned leader = groups.getLeaderValue(i);
    auto [it, inserted] = slot.try_emplace(leader, lifetimes.size());
    if (inserted)
      lifetimes.push_back({0, groupRanges[leader].first, groupRanges[leader].last});
    lifetimes[it->second].size = std::max(lifetimes[it->second].size, bytes);
  }
  ArenaPlan plan = planArena(lifetimes, alignment);

  Builder builder(program.getContext());
  for (unsigned i = 0; i < allocs.size(); ++i)
    allocs[i].setOffsetAttr(
        builder.getI64IntegerAttr(plan.offsets[slot.lookup(groups.getLeaderValue(i))]));
  program.setArenaSizeAttr(builder.getI64IntegerAttr(plan.arenaSize));
  program.setNaiveSizeAttr(builder.getI64IntegerAttr(naive));
  program.setPeakLiveSizeAttr(builder.getI64IntegerAttr(plan.peakLiveSize));
  program.setAlignmentAttr(builder.getI64IntegerAttr(alignment));
}

struct PlanMemoryPass : impl::PlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment < 1 || !llvm::isPowerOf2_64(alignment)) {
      getOperation().emitError() << "the alignment " << alignment << " is not a power of two";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<program::ProgramOp>())
      planProgram(program, alignment, inPlace);
  }
};

} // namespace
} // namespace kiln
