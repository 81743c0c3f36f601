//===- Liveness.h - Where a program's allocations are live -------*- C++ -*-===//
//
// The live ranges the memory planner packs, shared by kiln-plan-memory, the memory report and
// rematerialization (kiln-rematerialize): each program.alloc is live from the first step that
// binds it (directly or through views) to the last, widened across the steps that may run at the
// same time on other streams; allocations an elementwise dispatch writes over in place
// (`in_place`, at the input's last use) form one slot.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PROGRAM_LIVENESS_H
#define KILN_COMPILER_PROGRAM_LIVENESS_H

#include "contract/memory_planner.h"

#include "dialects/program/ProgramOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace kiln {

struct ProgramLiveness {
  /// The program's allocations, in program order.
  llvm::SmallVector<program::AllocOp> allocs;
  /// The slot of each allocation (an index into `slots`): allocations of one slot share bytes.
  llvm::SmallVector<unsigned> slotOf;
  /// One buffer per slot, as large as its largest allocation, live across all of them.
  std::vector<BufferLifetime> slots;
  /// The steps, in program order (positions index this).
  llvm::SmallVector<mlir::Operation *> steps;
  /// The index of each allocation in `allocs`.
  llvm::DenseMap<mlir::Operation *, unsigned> allocIndex;

  /// The bytes live at each step (aligned sizes of the slots live there).
  std::vector<uint64_t> liveBytesPerStep(uint64_t alignment) const;
  /// The slots live at `step`.
  llvm::SmallVector<unsigned> slotsLiveAt(int64_t step) const;
  /// The first step where the most bytes are live.
  int64_t peakStep(uint64_t alignment) const;

  /// A slot live at a step, and the steps that write its allocations (the first writer of each,
  /// in program order: a value, then what is written over it in place).
  struct LiveBuffer {
    unsigned slot;
    uint64_t bytes;
    llvm::SmallVector<mlir::Operation *> writers;
  };
  /// The slots live at `step`, largest first.
  llvm::SmallVector<LiveBuffer> buffersLiveAt(int64_t step);
  /// The step whose own bindings take the most bytes (the slots of its inputs and outputs, an
  /// output written in place over its input counted once), and those bytes: no order of the
  /// steps and no recomputation of whole values plans an arena below them.
  std::pair<int64_t, uint64_t> largestStep(uint64_t alignment) const;
};

/// The live ranges of `program`'s allocations; with `inPlace`, in-place dispatch outputs share
/// their dead inputs' slots.
ProgramLiveness computeLiveness(program::ProgramOp program, bool inPlace);

/// A step's name for messages and reports: its description, or what it runs.
std::string describeStep(mlir::Operation *step);
/// Who wrote a live buffer, for messages: "no step", "A", or "A, then in place by B, C".
std::string describeWriters(llvm::ArrayRef<mlir::Operation *> writers);

/// Prints the step where the most bytes are live and the allocations live there, largest first,
/// each with the step that writes it (the memory plan's peak, for --report).
void printMemoryPeak(program::ProgramOp program, llvm::raw_ostream &os, uint64_t alignment);

} // namespace kiln

#endif // KILN_COMPILER_PROGRAM_LIVENESS_H
