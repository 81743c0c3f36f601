//===- Liveness.cpp - Where a program's allocations are live ----------------===//

#include "compiler/program/Liveness.h"

#include "compiler/program/StepOrder.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace kiln {

using namespace mlir;

namespace {

/// Whether `value` is the whole of its root buffer, not a slice of a larger one.
bool wholeBuffer(Value value) {
  return program::viewByteOffset(value) == 0 &&
         program::bufferBytes(cast<MemRefType>(value.getType())) ==
             program::bufferBytes(cast<MemRefType>(program::rootBuffer(value).getType()));
}

} // namespace

ProgramLiveness computeLiveness(program::ProgramOp program, bool inPlace) {
  ProgramLiveness liveness;
  // Live ranges, by walking the steps in order. A buffer stays live across every step that may
  // run at the same time as one that uses it (on another stream), so that buffers sharing bytes
  // are never used at once.
  StepOrder order(program);
  liveness.steps.assign(order.steps().begin(), order.steps().end());
  SmallVector<BufferLifetime> ranges;
  SmallVector<bool> bound;
  for (auto alloc : program.getBody().front().getOps<program::AllocOp>()) {
    liveness.allocIndex[alloc] = liveness.allocs.size();
    liveness.allocs.push_back(alloc);
    ranges.push_back({program::bufferBytes(alloc.getType()), 0, 0});
    bound.push_back(false);
  }
  for (auto [at, op] : llvm::enumerate(order.steps())) {
    auto [spanFirst, spanLast] = order.concurrentSpan(at);
    for (Value buffer : op->getOperands()) {
      auto alloc = program::rootBuffer(buffer).getDefiningOp<program::AllocOp>();
      if (!alloc)
        continue;
      unsigned i = liveness.allocIndex.lookup(alloc);
      BufferLifetime &range = ranges[i];
      range.firstStep = bound[i] ? std::min(range.firstStep, spanFirst) : spanFirst;
      range.lastStep = bound[i] ? std::max(range.lastStep, spanLast) : spanLast;
      bound[i] = true;
    }
  }
  // An allocation no step binds is live for the first step only.

  // In place: an in_place output (an elementwise dispatch's, a convolution's accumulated into its
  // addend) takes its input's bytes when the step is the input's last use and no other binding
  // of the step reads the input otherwise.
  llvm::EquivalenceClasses<unsigned> groups;
  for (unsigned i = 0; i < liveness.allocs.size(); ++i)
    groups.insert(i);
  SmallVector<BufferLifetime> groupRanges(ranges);
  if (inPlace) {
    for (auto [position, op] : llvm::enumerate(order.steps())) {
      auto step = cast<program::StepOpInterface>(op);
      int64_t at = position;
      ArrayRef<int64_t> pairs = step.getInPlacePairs();
      if (pairs.empty())
        continue;
      llvm::SmallDenseSet<unsigned> taken;
      for (size_t p = 0; p < pairs.size(); p += 2) {
        auto input =
            program::rootBuffer(step.getStepInputs()[pairs[p]]).getDefiningOp<program::AllocOp>();
        auto output = program::rootBuffer(step.getStepOutputs()[pairs[p + 1]])
                          .getDefiningOp<program::AllocOp>();
        if (!input || !output || input == output || !wholeBuffer(step.getStepInputs()[pairs[p]]) ||
            !wholeBuffer(step.getStepOutputs()[pairs[p + 1]]))
          continue;
        unsigned a = liveness.allocIndex.lookup(input), b = liveness.allocIndex.lookup(output);
        unsigned leaderA = groups.getLeaderValue(a), leaderB = groups.getLeaderValue(b);
        if (leaderA == leaderB || taken.count(leaderA) || taken.count(leaderB) ||
            groupRanges[leaderA].lastStep != at || groupRanges[leaderB].firstStep != at ||
            program::bufferBytes(input.getType()) != program::bufferBytes(output.getType()))
          continue;
        // Every other binding of the input must be an in-place input of the same output.
        bool exclusive = true;
        for (auto [k, operand] : llvm::enumerate(op->getOpOperands())) {
          if (program::rootBuffer(operand.get()).getDefiningOp() != input.getOperation())
            continue;
          bool paired = false;
          for (size_t q = 0; q < pairs.size(); q += 2)
            paired |= k == static_cast<size_t>(pairs[q]) && pairs[q + 1] == pairs[p + 1];
          exclusive &= paired;
        }
        if (!exclusive)
          continue;
        BufferLifetime merged{0, groupRanges[leaderA].firstStep, groupRanges[leaderB].lastStep};
        groups.unionSets(a, b);
        unsigned leader = groups.getLeaderValue(a);
        groupRanges[leader] = merged;
        taken.insert(leader);
      }
    }
  }

  // One slot per group, as large as its largest member.
  DenseMap<unsigned, unsigned> slot;
  for (unsigned i = 0; i < liveness.allocs.size(); ++i) {
    unsigned leader = groups.getLeaderValue(i);
    auto [it, inserted] = slot.try_emplace(leader, liveness.slots.size());
    if (inserted)
      liveness.slots.push_back({0, groupRanges[leader].firstStep, groupRanges[leader].lastStep});
    liveness.slots[it->second].size = std::max(liveness.slots[it->second].size, ranges[i].size);
    liveness.slotOf.push_back(it->second);
  }
  return liveness;
}

std::vector<uint64_t> ProgramLiveness::liveBytesPerStep(uint64_t alignment) const {
  std::vector<uint64_t> live(std::max<size_t>(steps.size(), 1), 0);
  for (const BufferLifetime &slot : slots)
    for (int64_t step = slot.firstStep; step <= slot.lastStep; ++step)
      live[step] += alignedBufferSize(slot.size, alignment);
  return live;
}

SmallVector<unsigned> ProgramLiveness::slotsLiveAt(int64_t step) const {
  SmallVector<unsigned> live;
  for (auto [i, slot] : llvm::enumerate(slots))
    if (slot.firstStep <= step && step <= slot.lastStep)
      live.push_back(i);
  return live;
}

std::string describeStep(Operation *step) {
  if (auto dispatch = dyn_cast<program::DispatchOp>(step))
    return dispatch.getDescription()
        .value_or(dispatch.getKernel().getLeafReference().getValue())
        .str();
  if (auto call = dyn_cast<program::LibraryCallOp>(step))
    return call.getDescription().value_or(call.getCallee()).str();
  if (auto copy = dyn_cast<program::CopyOp>(step))
    return copy.getDescription() ? ("copy " + *copy.getDescription()).str() : "copy";
  return step->getName().getStringRef().str();
}

int64_t ProgramLiveness::peakStep(uint64_t alignment) const {
  std::vector<uint64_t> live = liveBytesPerStep(alignment);
  return std::max_element(live.begin(), live.end()) - live.begin();
}

SmallVector<ProgramLiveness::LiveBuffer> ProgramLiveness::buffersLiveAt(int64_t step) {
  SmallVector<LiveBuffer> live;
  DenseMap<unsigned, unsigned> entry;
  for (auto [i, alloc] : llvm::enumerate(allocs)) {
    const BufferLifetime &slot = slots[slotOf[i]];
    if (slot.firstStep > step || step > slot.lastStep)
      continue;
    auto [it, inserted] = entry.try_emplace(slotOf[i], live.size());
    if (inserted)
      live.push_back({slotOf[i], slot.size, {}});
    Operation *writer = nullptr;
    for (Operation *candidate : steps)
      for (Value output : cast<program::StepOpInterface>(candidate).getStepOutputs())
        if (!writer && program::rootBuffer(output).getDefiningOp() == alloc.getOperation())
          writer = candidate;
    if (writer)
      live[it->second].writers.push_back(writer);
  }
  llvm::stable_sort(live,
                    [](const LiveBuffer &a, const LiveBuffer &b) { return a.bytes > b.bytes; });
  return live;
}

std::pair<int64_t, uint64_t> ProgramLiveness::largestStep(uint64_t alignment) const {
  std::pair<int64_t, uint64_t> largest{0, 0};
  for (auto [at, op] : llvm::enumerate(steps)) {
    // An output the step may write over an input (whatever the order makes of it) shares its
    // bytes; every other allocation it binds is live while it runs.
    llvm::SmallPtrSet<Operation *, 8> shared;
    auto step = cast<program::StepOpInterface>(op);
    ArrayRef<int64_t> pairs = step.getInPlacePairs();
    for (size_t p = 0; p + 1 < pairs.size(); p += 2) {
      Value input = step.getStepInputs()[pairs[p]], output = step.getStepOutputs()[pairs[p + 1]];
      if (wholeBuffer(input) && wholeBuffer(output) &&
          program::bufferBytes(cast<MemRefType>(input.getType())) ==
              program::bufferBytes(cast<MemRefType>(output.getType())))
        shared.insert(program::rootBuffer(output).getDefiningOp());
    }
    llvm::SmallPtrSet<Operation *, 8> bound;
    uint64_t bytes = 0;
    for (Value operand : op->getOperands()) {
      auto alloc = program::rootBuffer(operand).getDefiningOp<program::AllocOp>();
      if (!alloc || shared.contains(alloc) || !bound.insert(alloc).second)
        continue;
      bytes += alignedBufferSize(program::bufferBytes(alloc.getType()), alignment);
    }
    if (bytes > largest.second)
      largest = {static_cast<int64_t>(at), bytes};
  }
  return largest;
}

std::string describeWriters(ArrayRef<Operation *> writers) {
  if (writers.empty())
    return "no step";
  std::string text = describeStep(writers.front());
  for (auto [k, writer] : llvm::enumerate(writers.drop_front()))
    text += (k == 0 ? ", then in place by " : ", ") + describeStep(writer);
  return text;
}

void printMemoryPeak(program::ProgramOp program, llvm::raw_ostream &os, uint64_t alignment) {
  ProgramLiveness liveness = computeLiveness(program, /*inPlace=*/true);
  if (liveness.steps.empty() || liveness.allocs.empty())
    return;
  int64_t peak = liveness.peakStep(alignment);
  os << "memory peak: " << liveness.liveBytesPerStep(alignment)[peak] << " bytes live at step "
     << peak << " (" << describeStep(liveness.steps[peak]) << ")\n";
  for (const ProgramLiveness::LiveBuffer &buffer : liveness.buffersLiveAt(peak)) {
    const BufferLifetime &slot = liveness.slots[buffer.slot];
    os << "  " << buffer.bytes << " bytes, steps " << slot.firstStep << "-" << slot.lastStep
       << ", written by " << describeWriters(buffer.writers) << "\n";
  }
  auto [largest, bytes] = liveness.largestStep(alignment);
  os << "memory floor: " << bytes << " bytes bound by step " << largest << " ("
     << describeStep(liveness.steps[largest])
     << ") alone: no order or recomputation of whole values plans less\n";
}

} // namespace kiln
