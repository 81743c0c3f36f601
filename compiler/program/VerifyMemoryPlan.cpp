//===- VerifyMemoryPlan.cpp - No two live allocations share a byte ------------===//

#include "compiler/program/Passes.h"
#include "compiler/program/StepOrder.h"

namespace kiln {

#define GEN_PASS_DEF_VERIFYMEMORYPLANPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

struct Interval {
  program::AllocOp alloc;
  /// The positions of the steps that bind the allocation or a view of it, in order.
  SmallVector<int64_t> users;
  uint64_t begin, end;
};

/// Whether `step` writes `to` over `from` in place: an in_place pair of the step binds them.
bool writesInPlace(Operation *op, program::AllocOp from, program::AllocOp to) {
  auto step = dyn_cast_or_null<program::StepOpInterface>(op);
  if (!step)
    return false;
  ArrayRef<int64_t> pairs = step.getInPlacePairs();
  for (size_t p = 0; p < pairs.size(); p += 2)
    if (program::rootBuffer(step.getStepInputs()[pairs[p]]).getDefiningOp() == from &&
        program::rootBuffer(step.getStepOutputs()[pairs[p + 1]]).getDefiningOp() == to)
      return true;
  return false;
}

/// Whether every step using `a` completes before any step using `b` starts, but for one step
/// that writes `b` over `a` in place (at the same offset: element i over element i).
bool allBefore(const Interval &a, const Interval &b, const StepOrder &order) {
  for (int64_t x : a.users)
    for (int64_t y : b.users)
      if (!order.before(x, y) &&
          !(x == y && a.begin == b.begin && writesInPlace(order.steps()[x], a.alloc, b.alloc)))
        return false;
  return true;
}

LogicalResult verifyProgram(program::ProgramOp program) {
  if (!program.isPlanned())
    return program.emitOpError("has no memory plan to verify (run kiln-plan-memory)");
  // Each allocation's users: the steps that bind it or a view of it. Two allocations may share
  // bytes only when all the steps of one are ordered before all the steps of the other (on one
  // stream, the program order; across streams, through the buffers they share).
  StepOrder order(program);
  uint64_t arena = static_cast<uint64_t>(*program.getArenaSize());
  SmallVector<Interval> intervals;
  for (auto alloc : program.getBody().front().getOps<program::AllocOp>()) {
    Interval interval{alloc, {}, 0, 0};
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (auto view = dyn_cast<program::ViewOp>(user)) {
          worklist.push_back(view.getResult());
          continue;
        }
        if (std::optional<int64_t> position = order.position(user))
          interval.users.push_back(*position);
      }
    }
    llvm::sort(interval.users);
    interval.users.erase(std::unique(interval.users.begin(), interval.users.end()),
                         interval.users.end());
    interval.begin = static_cast<uint64_t>(*alloc.getOffset());
    interval.end = interval.begin + program::bufferBytes(alloc.getType());
    if (interval.end > arena)
      return alloc.emitOpError() << "ends at byte " << interval.end << ", past the arena's "
                                 << arena;
    intervals.push_back(std::move(interval));
  }
  // A sweep in address order: only neighbours that begin before one ends can overlap.
  llvm::sort(intervals, [](const Interval &a, const Interval &b) { return a.begin < b.begin; });
  auto span = [](const Interval &interval) {
    if (interval.users.empty())
      return std::string("none");
    return std::to_string(interval.users.front()) + "-" +
           std::to_string(interval.users.back());
  };
  for (size_t i = 0; i < intervals.size(); ++i) {
    Interval &a = intervals[i];
    for (size_t j = i + 1; j < intervals.size() && intervals[j].begin < a.end; ++j) {
      Interval &b = intervals[j];
      if (a.begin == a.end || b.begin == b.end || allBefore(a, b, order) ||
          allBefore(b, a, order))
        continue;
      InFlightDiagnostic diagnostic = a.alloc.emitOpError()
                                      << "shares bytes [" << std::max(a.begin, b.begin) << ", "
                                      << std::min(a.end, b.end) << ") with another allocation "
                                      << "while both are live (steps " << span(a) << " and " << span(b)
                                      << ")";
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
