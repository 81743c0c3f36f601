//===- VerifyMemoryPlan.cpp - No two live allocations share a byte ------------===//

#include "compiler/program/Passes.h"

namespace kiln {

#define GEN_PASS_DEF_VERIFYMEMORYPLANPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

struct Interval {
  program::AllocOp alloc;
  int64_t first, last;
  uint64_t begin, end;
};

/// Whether `step` writes `to` over `from` in place: an in_place pair of a dispatch binds them.
bool writesInPlace(Operation *step, program::AllocOp from, program::AllocOp to) {
  auto dispatch = dyn_cast_or_null<program::DispatchOp>(step);
  if (!dispatch || !dispatch.getInPlace())
    return false;
  ArrayRef<int64_t> pairs = *dispatch.getInPlace();
  for (size_t p = 0; p < pairs.size(); p += 2)
    if (program::rootBuffer(dispatch.getInputs()[pairs[p]]).getDefiningOp() == from &&
        program::rootBuffer(dispatch.getOutputs()[pairs[p + 1]]).getDefiningOp() == to)
      return true;
  return false;
}

LogicalResult verifyProgram(program::ProgramOp program) {
  if (!program.isPlanned())
    return program.emitOpError("has no memory plan to verify (run kiln-plan-memory)");
  // Step numbers, then each allocation's range from the users of it and of its views.
  DenseMap<Operation *, int64_t> stepNumber;
  SmallVector<Operation *> steps;
  for (Operation &op : program.getBody().front())
    if (isa<program::StepOpInterface>(op)) {
      stepNumber[&op] = steps.size();
      steps.push_back(&op);
    }
  uint64_t arena = static_cast<uint64_t>(*program.getArenaSize());
  SmallVector<Interval> intervals;
  for (auto alloc : program.getBody().front().getOps<program::AllocOp>()) {
    int64_t first = INT64_MAX, last = -1;
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (auto view = dyn_cast<program::ViewOp>(user)) {
          worklist.push_back(view.getResult());
          continue;
        }
        auto it = stepNumber.find(user);
        if (it == stepNumber.end())
          continue;
        first = std::min(first, it->second);
        last = std::max(last, it->second);
      }
    }
    if (last < 0)
      first = last = 0;
    uint64_t begin = static_cast<uint64_t>(*alloc.getOffset());
    uint64_t end = begin + program::bufferBytes(alloc.getType());
    if (end > arena)
      return alloc.emitOpError() << "ends at byte " << end << ", past the arena's " << arena;
    intervals.push_back({alloc, first, last, begin, end});
  }
  // A sweep in address order: only neighbours that begin before one ends can overlap.
  llvm::sort(intervals, [](const Interval &a, const Interval &b) { return a.begin < b.begin; });
  for (size_t i = 0; i < intervals.size(); ++i) {
    Interval &a = intervals[i];
    for (size_t j = i + 1; j < intervals.size() && intervals[j].begin < a.end; ++j) {
      Interval &b = intervals[j];
      if (a.begin == a.end || b.begin == b.end || a.last < b.first || b.last < a.first)
        continue;
      // Meeting at one step where one is written over the other in place is the plan's intent.
      if (a.last == b.first && a.begin == b.begin && writesInPlace(steps[a.last], a.alloc, b.alloc))
        continue;
      if (b.last == a.first && a.begin == b.begin && writesInPlace(steps[b.last], b.alloc, a.alloc))
        continue;
      InFlightDiagnostic diagnostic = a.alloc.emitOpError()
                                      << "shares bytes [" << std::max(a.begin, b.begin) << ", "
                                      << std::min(a.end, b.end) << ") with another allocation "
                                      << "while both are live (steps " << a.first << "-" << a.last
                                      << " and " << b.first << "-" << b.last << ")";
      diagnostic.attachNote(b.alloc.getLoc()) << "the other allocation";
      return failure();
    }
  }
  return success();
}

struct VerifyMemoryPlanPass : impl::VerifyMemoryPlanPassBase<VerifyMemoryPlanPass> {
  void runOnOperation() override {
    for (auto program : getOperation().getOps<program::ProgramOp>())
      if (failed(verifyProgram(program)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
