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

#include "compiler/fusion/CostModel.h"
#include "compiler/program/Liveness.h"
#include "compiler/program/Passes.h"

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

int64_t elementCount(Value buffer) { return cast<MemRefType>(buffer.getType()).getNumElements(); }

/// The work of one step for the cost model: the bytes of its bindings, and for the library
/// calls their multiply-adds.
fusion::KernelWork stepWork(Operation *step) {
  fusion::KernelWork work;
  for (Value operand : step->getOperands())
    work.bytes += double(program::bufferBytes(cast<MemRefType>(operand.getType())));
  auto call = dyn_cast<program::LibraryCallOp>(step);
  if (!call || call.getOutputs().empty() || call.getInputs().size() < 2)
    return work;
  double results = double(elementCount(call.getOutputs().front()));
  StringRef callee = call.getCallee();
  if (callee.ends_with("matmul")) {
    // a is [..., M, K] (or its view [offset, dims..., strides...]).
    int64_t depth = 1;
    if (auto view = call.getParams().getAs<DenseI64ArrayAttr>("a_view"); view && view.size() >= 3)
      depth = view.asArrayRef()[(view.size() - 1) / 2];
    else if (auto a = cast<MemRefType>(call.getInputs()[0].getType()); a.getRank() > 0)
      depth = a.getShape().back();
    work.flops = 2 * results * double(depth);
  } else if (callee.ends_with("convolution")) {
    auto weights = cast<MemRefType>(call.getInputs()[1].getType());
    double perResult = 1;
    for (int64_t d : weights.getShape().drop_front())
      perResult *= double(d);
    work.flops = 2 * results * perResult;
  }
  return work;
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
      : program_(program), limit_(limit), alignment_(alignment),
        device_(*fusion::DeviceDescription::named(
            program.getDevice() == program::Device::cuda ? "a100" : "cpu")) {}

  LogicalResult run();

private:
  /// The bytes live above the limit, summed over the steps, and the highest step.
  std::pair<uint64_t, uint64_t> excessAndPeak(ProgramLiveness &liveness) {
    uint64_t excess = 0, peak = 0;
    for (uint64_t bytes : liveness.liveBytesPerStep(alignment_)) {
      excess += bytes > limit_ ? bytes - limit_ : 0;
      peak = std::max(peak, bytes);
    }
    return {excess, peak};
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
    double seconds = fusion::kernelSeconds(device_, stepWork(writer));
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
  std::vector<uint64_t> live = liveness.liveBytesPerStep(alignment_);
  int64_t peak = std::max_element(live.begin(), live.end()) - live.begin();
  InFlightDiagnostic diagnostic = program_.emitError();
  diagnostic << "the memory limit of " << formatBytes(limit_) << " (" << limit_
             << " bytes) cannot be met: the smallest arena reached is " << formatBytes(best) << " ("
             << best << " bytes; " << formatBytes(unlimited) << " without the limit). At step "
             << peak << " (" << describeStep(liveness.steps[peak]) << ") "
             << formatBytes(live[peak]) << " are live, and recomputing none of these lowers it:";
  SmallVector<std::pair<uint64_t, unsigned>> held;
  for (auto [i, alloc] : llvm::enumerate(liveness.allocs)) {
    const BufferLifetime &slot = liveness.slots[liveness.slotOf[i]];
    if (slot.firstStep <= peak && peak <= slot.lastStep)
      held.push_back({program::bufferBytes(alloc.getType()), i});
  }
  llvm::stable_sort(held, [](auto a, auto b) { return a.first > b.first; });
  for (auto [bytes, i] : held) {
    Operation *writer = nullptr;
    for (Operation *step : liveness.steps)
      for (Value output : cast<program::StepOpInterface>(step).getStepOutputs())
        if (!writer && program::rootBuffer(output).getDefiningOp() == liveness.allocs[i])
          writer = step;
    diagnostic << " " << formatBytes(bytes) << " written by "
               << (writer ? describeStep(writer) : std::string("no step")) << ";";
  }
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
    auto [excess, peakBytes] = excessAndPeak(liveness);
    std::vector<uint64_t> live = liveness.liveBytesPerStep(alignment_);
    // The arena may sit above the live peak (fragmentation); then the peak is still attacked,
    // counting what is live at it as over the limit.
    uint64_t target = std::min<uint64_t>(limit_, peakBytes);
    std::vector<int64_t> peaks;
    for (auto [step, bytes] : llvm::enumerate(live))
      if (bytes >= target)
        peaks.push_back(step);
    llvm::stable_sort(peaks, [&](int64_t a, int64_t b) { return live[a] > live[b]; });
    bool changed = false;
    for (int64_t peak : peaks) {
      for (const Candidate &candidate : candidatesAt(liveness, peak)) {
        Change change = apply(candidate, liveness);
        ProgramLiveness after = computeLiveness(program_, /*inPlace=*/true);
        auto [newExcess, newPeak] = excessAndPeak(after);
        bool better =
            newPeak <= peakBytes && (newExcess < excess || (excess == 0 && newPeak < peakBytes));
        if (!better) {
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
