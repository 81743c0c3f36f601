//===- PlanMemory.cpp - Arena offsets for a program's allocations ------------===//

#include "compiler/program/Liveness.h"
#include "compiler/program/Passes.h"
#include "compiler/program/SymbolicShapes.h"

#include "mlir/IR/Builders.h"

namespace kiln {

#define GEN_PASS_DEF_PLANMEMORYPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

void planProgram(program::ProgramOp program, int64_t alignment, bool inPlace) {
  ProgramLiveness liveness = computeLiveness(program, inPlace);
  uint64_t naive = 0;
  for (program::AllocOp alloc : liveness.allocs)
    naive += alignedBufferSize(program::bufferBytes(alloc.getType()), alignment);
  ArenaPlan plan = planArena(liveness.slots, alignment);

  Builder builder(program.getContext());
  for (auto [alloc, slot] : llvm::zip_equal(liveness.allocs, liveness.slotOf))
    alloc.setOffsetAttr(builder.getI64IntegerAttr(plan.offsets[slot]));
  // A dimension without an upper bound: the plan above is the nominal shape's; the runtime
  // packs the slots again for each shape, from their live steps and their allocations' sizes.
  if (plannedPerRun(symbolsFromAttr(program->getAttrOfType<ArrayAttr>(kSymbolsAttr)))) {
    for (auto [alloc, slot] : llvm::zip_equal(liveness.allocs, liveness.slotOf))
      alloc->setAttr(kArenaSlotAttr, builder.getI64IntegerAttr(slot));
    SmallVector<int64_t> steps;
    for (const BufferLifetime &slot : liveness.slots)
      steps.append({slot.firstStep, slot.lastStep});
    program->setAttr(kSlotStepsAttr, builder.getDenseI64ArrayAttr(steps));
  }
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
