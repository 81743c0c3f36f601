//===- Rematerialize.cpp - Recomputing values to fit a memory limit ----------===//
//
// Rematerialization on the program: a value live across the memory peak whose writing step can
// run again later is recomputed there instead of kept, by cloning the step (the same compiled
// kernel or library call, on the same inputs) into a new allocation read by the later uses.
// Greedy, one value at a time: the step where the most bytes are live is attacked first, with
// the candidate whose recomputation costs the least modeled time per byte it frees there (the
// fusion planner's device roofline), until the planned arena fits. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/program/Liveness.h"
#include "compiler/program/Passes.h"
#include "compiler/program/StepCost.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>

namespace kiln {

#define GEN_PASS_DEF_REMATERIALIZEPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kRecomputedAttr = "recomputed";

std::string formatBytes(uint64_t bytes) {
  if (bytes >= (1u << 20))
    return llvm::formatv("{0:F2} MiB", double(bytes) / double(1u << 20)).str();
  if (bytes >= (1u << 10))
    return llvm::formatv("{0:F1} KiB", double(bytes) / double(1u << 10)).str();
  return llvm::formatv("{0} B", bytes).str();
}

/// `value` with its root `from` replaced by `to`: the views between them cloned onto `to`.
Value rebase(OpBuilder &builder, Value value, Value from, Value to,
             SmallVectorImpl<Operation *> &created) {
  if (value == from)
    return to;
  auto view = value.getDefiningOp<program::ViewOp>();
  Value source = rebase(builder, view.getSource(), from, to, created);
  Operation *clone = builder.clone(*view);
  clone->setOperand(0, source);
  created.push_back(clone);
  return clone->getResult(0);
}

/// One recomputation, applied to the IR and undoable.
struct Change {
  SmallVector<Operation *> created;
  SmallVector<std::pair<OpOperand *, Value>> replaced;

  void undo() {
    for (auto &[operand, value] : replaced)
      operand->set(value);
    for (Operation *op : llvm::reverse(created))
      op->erase();
  }
};

struct Candidate {
  mutable program::AllocOp value;
  Operation *writer;
  /// The step position the clone runs before: the value's first use after the peak.
  int64_t resumeAt;
  double seconds;
  int64_t estimatedFreed;
};

class Rematerializer {
public:
  Rematerializer(program::ProgramOp program, uint64_t limit, uint64_t alignment)
      : program_(program), limit_(limit), alignment_(alignment), device_(programDevice(program)) {}

  LogicalResult run();

private:
  /// The most bytes live at one step, and at how many steps that many are live.
  std::pair<uint64_t, size_t> peakOf(ProgramLiveness &liveness) {
    std::vector<uint64_t> live = liveness.liveBytesPerStep(alignment_);
    uint64_t peak = *std::max_element(live.begin(), live.end());
    return {peak, size_t(llvm::count(live, peak))};
  }

  SmallVector<Candidate> candidatesAt(ProgramLiveness &liveness, int64_t peak);
  Change apply(const Candidate &candidate, ProgramLiveness &liveness);
  LogicalResult fail(ProgramLiveness &liveness, uint64_t best, uint64_t unlimited);

  program::ProgramOp program_;
  uint64_t limit_, alignment_;
  fusion::DeviceDescription device_;
};

SmallVector<Candidate> Rematerializer::candidatesAt(ProgramLiveness &liveness, int64_t peak) {
  // Each allocation's binding steps and writing steps, by position.
  size_t count = liveness.allocs.size();
  SmallVector<SmallVector<int64_t>> uses(count), writers(count);
  SmallVector<bool> wholeWrite(count, true);
  for (auto [at, step] : llvm::enumerate(liveness.steps)) {
    auto stepOp = cast<program::StepOpInterface>(step);
    for (Value operand : step->getOperands()) {
      auto alloc = program::rootBuffer(operand).getDefiningOp<program::AllocOp>();
      if (!alloc)
        continue;
      unsigned i = liveness.allocIndex.lookup(alloc);
      if (uses[i].empty() || uses[i].back() != int64_t(at))
        uses[i].push_back(at);
    }
    for (Value output : stepOp.getStepOutputs()) {
      auto alloc = program::rootBuffer(output).getDefiningOp<program::AllocOp>();
      if (!alloc)
        continue;
      unsigned i = liveness.allocIndex.lookup(alloc);
      writers[i].push_back(at);
      wholeWrite[i] = wholeWrite[i] && program::viewByteOffset(output) == 0 &&
                      program::bufferBytes(cast<MemRefType>(output.getType())) ==
                          program::bufferBytes(alloc.getType());
    }
  }
  auto writtenBetween = [&](unsigned i, int64_t after, int64_t before) {
    return llvm::any_of(writers[i], [&](int64_t w) { return w > after && w < before; });
  };
  auto liveAt = [&](unsigned i, int64_t step) {
    const BufferLifetime &slot = liveness.slots[liveness.slotOf[i]];
    return slot.firstStep <= step && step <= slot.lastStep;
  };

  SmallVector<Candidate> candidates;
  for (unsigned i = 0; i < count; ++i) {
    if (uses[i].empty() || !liveAt(i, peak) || llvm::is_contained(uses[i], peak) ||
        writers[i].size() != 1 || !wholeWrite[i])
      continue;
    int64_t written = writers[i].front();
    auto later = llvm::upper_bound(uses[i], peak);
    if (written >= peak || later == uses[i].end())
      continue;
    int64_t resumeAt = *later;
    Operation *writer = liveness.steps[written];
    // The writer must be a function of its inputs: every output a whole allocation only it
    // writes, every input unchanged until the clone runs, none both read and written.
    bool cloneable = true;
    int64_t freed =
        int64_t(alignedBufferSize(program::bufferBytes(liveness.allocs[i].getType()), alignment_));
    auto stepOp = cast<program::StepOpInterface>(writer);
    SmallVector<Operation *> outputRoots;
    for (Value output : stepOp.getStepOutputs()) {
      auto alloc = program::rootBuffer(output).getDefiningOp<program::AllocOp>();
      unsigned o = alloc ? liveness.allocIndex.lookup(alloc) : 0;
      if (!alloc || writers[o].size() != 1 || !wholeWrite[o]) {
        cloneable = false;
        break;
      }
      outputRoots.push_back(alloc);
      if (alloc != liveness.allocs[i])
        freed -= int64_t(alignedBufferSize(program::bufferBytes(alloc.getType()), alignment_));
    }
    for (Value input : stepOp.getStepInputs()) {
      if (!cloneable)
        break;
      Operation *root = program::rootBuffer(input).getDefiningOp();
      if (isa_and_nonnull<program::InputOp, program::ConstantOp>(root))
        continue;
      auto alloc = dyn_cast_or_null<program::AllocOp>(root);
      if (!alloc || llvm::is_contained(outputRoots, root)) {
        cloneable = false;
        break;
      }
      unsigned w = liveness.allocIndex.lookup(alloc);
      if (writtenBetween(w, written, resumeAt)) {
        cloneable = false;
        break;
      }
      // An input not live at the peak now stays live until the clone runs.
      if (!liveAt(w, peak))
        freed -= int64_t(alignedBufferSize(program::bufferBytes(alloc.getType()), alignment_));
    }
    if (!cloneable || freed <= 0)
      continue;
    double seconds = stepSeconds(writer, device_);
    candidates.push_back({liveness.allocs[i], writer, resumeAt, seconds, freed});
  }
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.seconds / double(a.estimatedFreed) < b.seconds / double(b.estimatedFreed);
  });
  return candidates;
}

Change Rematerializer::apply(const Candidate &candidate, ProgramLiveness &liveness) {
  Change change;
  Operation *resume = liveness.steps[candidate.resumeAt];
  OpBuilder builder(resume);
  // New allocations for the clone's outputs, then the clone.
  auto stepOp = cast<program::StepOpInterface>(candidate.writer);
  IRMapping mapping;
  for (Value output : stepOp.getStepOutputs()) {
    Value root = program::rootBuffer(output);
    if (mapping.contains(root))
      continue;
    Operation *alloc = builder.clone(*root.getDefiningOp());
    alloc->removeAttr("offset");
    change.created.push_back(alloc);
    mapping.map(root, alloc->getResult(0));
  }
  SmallVector<Value> operands;
  unsigned inputs = stepOp.getStepInputs().size();
  for (auto [k, operand] : llvm::enumerate(candidate.writer->getOperands())) {
    if (k < inputs || !mapping.contains(program::rootBuffer(operand))) {
      operands.push_back(operand);
      continue;
    }
    Value root = program::rootBuffer(operand);
    operands.push_back(rebase(builder, operand, root, mapping.lookup(root), change.created));
  }
  Operation *clone = builder.clone(*candidate.writer);
  clone->setOperands(operands);
  clone->setAttr(kRecomputedAttr, builder.getUnitAttr());
  std::string description = describeStep(candidate.writer);
  if (!StringRef(description).starts_with("recomputed: "))
    description = "recomputed: " + description;
  clone->setAttr("description", builder.getStringAttr(description));
  change.created.push_back(clone);

  // The later uses read the recomputed value.
  Value from = candidate.value.getResult();
  Value to = mapping.lookup(from);
  for (Operation *step : ArrayRef<Operation *>(liveness.steps).drop_front(candidate.resumeAt)) {
    for (OpOperand &operand : step->getOpOperands()) {
      if (program::rootBuffer(operand.get()) != from)
        continue;
      OpBuilder before(step);
      Value rebased = rebase(before, operand.get(), from, to, change.created);
      change.replaced.push_back({&operand, operand.get()});
      operand.set(rebased);
    }
  }
  return change;
}

LogicalResult Rematerializer::fail(ProgramLiveness &liveness, uint64_t best, uint64_t unlimited) {
  int64_t peak = liveness.peakStep(alignment_);
  InFlightDiagnostic diagnostic = program_.emitError();
  diagnostic << "the memory limit of " << formatBytes(limit_) << " (" << limit_
             << " bytes) cannot be met: the smallest arena reached is " << formatBytes(best) << " ("
             << best << " bytes; " << formatBytes(unlimited) << " without the limit). At step "
             << peak << " (" << describeStep(liveness.steps[peak]) << ") "
             << formatBytes(liveness.liveBytesPerStep(alignment_)[peak])
             << " are live, and recomputing none of these lowers it:";
  for (const ProgramLiveness::LiveBuffer &buffer : liveness.buffersLiveAt(peak))
    diagnostic << " " << formatBytes(buffer.bytes) << " written by "
               << describeWriters(buffer.writers) << ";";
  auto [largest, floor] = liveness.largestStep(alignment_);
  if (floor > limit_)
    diagnostic << " No plan fits: step " << largest << " (" << describeStep(liveness.steps[largest])
               << ") alone binds " << formatBytes(floor) << " (" << floor
               << " bytes) of inputs and outputs at once.";
  return failure();
}

LogicalResult Rematerializer::run() {
  Builder builder(program_.getContext());
  ProgramLiveness liveness = computeLiveness(program_, /*inPlace=*/true);
  uint64_t unlimited = planArena(liveness.slots, alignment_).arenaSize;
  program_.setMemoryLimitAttr(builder.getI64IntegerAttr(int64_t(limit_)));
  program_.setUnlimitedArenaSizeAttr(builder.getI64IntegerAttr(int64_t(unlimited)));
  uint64_t arena = unlimited;
  while (arena > limit_) {
    // The steps where the most bytes are live are attacked in order. A change is kept when it
    // lowers that peak, or the number of steps at it (the twelve layers of BERT peak alike),
    // so every kept change makes progress and the search ends.
    auto [peakBytes, peakSteps] = peakOf(liveness);
    std::vector<uint64_t> live = liveness.liveBytesPerStep(alignment_);
    bool changed = false;
    for (auto [peak, bytes] : llvm::enumerate(live)) {
      if (bytes != peakBytes)
        continue;
      for (const Candidate &candidate : candidatesAt(liveness, peak)) {
        Change change = apply(candidate, liveness);
        ProgramLiveness after = computeLiveness(program_, /*inPlace=*/true);
        auto [newBytes, newSteps] = peakOf(after);
        if (newBytes > peakBytes || (newBytes == peakBytes && newSteps >= peakSteps)) {
          change.undo();
          continue;
        }
        liveness = std::move(after);
        changed = true;
        break;
      }
      if (changed)
        break;
    }
    if (!changed)
      return fail(liveness, arena, unlimited);
    arena = planArena(liveness.slots, alignment_).arenaSize;
  }
  return success();
}

struct RematerializePass : impl::RematerializePassBase<RematerializePass> {
  using Base::Base;

  void runOnOperation() override {
    if (memoryLimit < 0) {
      getOperation().emitError() << "the memory limit " << memoryLimit << " is negative";
      return signalPassFailure();
    }
    if (memoryLimit == 0)
      return;
    if (alignment < 1 || !llvm::isPowerOf2_64(alignment)) {
      getOperation().emitError() << "the alignment " << alignment << " is not a power of two";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<program::ProgramOp>())
      if (failed(Rematerializer(program, uint64_t(memoryLimit), uint64_t(alignment)).run()))
        return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
