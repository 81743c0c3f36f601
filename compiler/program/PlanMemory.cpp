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

/// The bytes of `alloc` with the program's symbols at `values` (kiln.dims where its dimensions
/// vary, its static type otherwise).
uint64_t bytesAt(program::AllocOp alloc, ArrayRef<int64_t> values) {
  MemRefType type = alloc.getType();
  SmallVector<AffineExpr> constants;
  for (int64_t value : values)
    constants.push_back(getAffineConstantExpr(value, alloc.getContext()));
  uint64_t bytes = program::bufferBytes(MemRefType::get({1}, type.getElementType()));
  for (AffineExpr expr : bufferDims(alloc, type)) {
    auto size = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(expr.replaceSymbols(constants), 0, constants.size()));
    bytes *= size ? static_cast<uint64_t>(std::max<int64_t>(size.getValue(), 0)) : 0;
  }
  return bytes;
}

void planProgram(program::ProgramOp program, int64_t alignment, bool inPlace,
                 StringRef memoryPlan) {
  ProgramLiveness liveness = computeLiveness(program, inPlace);
  uint64_t naive = 0;
  for (program::AllocOp alloc : liveness.allocs)
    naive += alignedBufferSize(program::bufferBytes(alloc.getType()), alignment);
  ArenaPlan plan = planArena(liveness.slots, alignment);

  Builder builder(program.getContext());
  for (auto [alloc, slot] : llvm::zip_equal(liveness.allocs, liveness.slotOf))
    alloc.setOffsetAttr(builder.getI64IntegerAttr(plan.offsets[slot]));
  program.setArenaSizeAttr(builder.getI64IntegerAttr(plan.arenaSize));
  program.setNaiveSizeAttr(builder.getI64IntegerAttr(naive));
  program.setPeakLiveSizeAttr(builder.getI64IntegerAttr(plan.peakLiveSize));
  program.setAlignmentAttr(builder.getI64IntegerAttr(alignment));

  // A program for a range of shapes: the plan above holds the upper bounds (or, for a dimension
  // without one, the nominal shape). Per run, the runtime packs the slots again for each shape,
  // from their live steps and their allocations' sizes for the run. Where the choice is open,
  // the smallest shape's arena decides: per run where it is under half the upper bounds' (on
  // the CPU, whose arena then grows with the shapes runs bring; a CUDA session's starts at the
  // artifact's size, and a memory limit holds for the planned arena only).
  SmallVector<DimSymbol> symbols = symbolsFromAttr(program->getAttrOfType<ArrayAttr>(kSymbolsAttr));
  if (symbols.empty())
    return;
  SmallVector<int64_t> smallest;
  for (const DimSymbol &symbol : symbols)
    smallest.push_back(symbol.min);
  std::vector<BufferLifetime> slots(liveness.slots);
  for (BufferLifetime &slot : slots)
    slot.size = 0;
  for (auto [alloc, slot] : llvm::zip_equal(liveness.allocs, liveness.slotOf))
    slots[slot].size = std::max(slots[slot].size, bytesAt(alloc, smallest));
  uint64_t smallestArena = planArena(slots, alignment, /*improvementRounds=*/0).arenaSize;
  program->setAttr(kSmallestArenaAttr, builder.getI64IntegerAttr(smallestArena));
  bool perRun = plannedPerRun(symbols) || memoryPlan == "per-run";
  if (memoryPlan == "auto" && !perRun)
    perRun = program.getDevice() == program::Device::cpu && !program.getMemoryLimit() &&
             plan.arenaSize > 2 * smallestArena;
  if (!perRun)
    return;
  for (auto [alloc, slot] : llvm::zip_equal(liveness.allocs, liveness.slotOf))
    alloc->setAttr(kArenaSlotAttr, builder.getI64IntegerAttr(slot));
  SmallVector<int64_t> steps;
  for (const BufferLifetime &slot : liveness.slots)
    steps.append({slot.firstStep, slot.lastStep});
  program->setAttr(kSlotStepsAttr, builder.getDenseI64ArrayAttr(steps));
}

struct PlanMemoryPass : impl::PlanMemoryPassBase<PlanMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    if (memoryPlan != "auto" && memoryPlan != "bounds" && memoryPlan != "per-run") {
      getOperation().emitError() << "unknown memory plan '" << memoryPlan
                                 << "'; use auto, bounds or per-run";
      return signalPassFailure();
    }
    if (alignment < 1 || !llvm::isPowerOf2_64(alignment)) {
      getOperation().emitError() << "the alignment " << alignment << " is not a power of two";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<program::ProgramOp>())
      planProgram(program, alignment, inPlace, memoryPlan);
  }
};

} // namespace
} // namespace kiln
