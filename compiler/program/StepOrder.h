//===- StepOrder.h - Which steps of a program may run at the same time --*- C++ -*-===//
//
// A program's steps run in order on each stream; steps on different streams are ordered only by
// what they share: a step that reads or writes a buffer another earlier step writes, or writes
// one an earlier step reads, runs after it (the runtime orders them with events). The memory plan
// may let two buffers share bytes only when every step using one is ordered before every step
// using the other, so it needs this relation, not just the steps' positions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PROGRAM_STEPORDER_H
#define KILN_COMPILER_PROGRAM_STEPORDER_H

#include "dialects/program/ProgramOps.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <utility>
#include <vector>

namespace kiln {

class StepOrder {
public:
  explicit StepOrder(program::ProgramOp program);

  /// The steps in program order.
  llvm::ArrayRef<mlir::Operation *> steps() const { return steps_; }
  /// The position of `op` among the steps, or nullopt for an op that is not a step.
  std::optional<int64_t> position(mlir::Operation *op) const;

  /// Whether step `a` completes before step `b` starts (positions; false for a == b).
  bool before(int64_t a, int64_t b) const;
  /// Whether steps `a` and `b` may run at the same time.
  bool concurrent(int64_t a, int64_t b) const { return a != b && !before(a, b) && !before(b, a); }
  /// The first and the last position of the steps that may run at the same time as `step`, or
  /// `step` itself: a buffer used by `step` must stay live across this span.
  std::pair<int64_t, int64_t> concurrentSpan(int64_t step) const;
  /// The earlier steps `step` depends on through the buffers they share (it reads what one
  /// writes, or writes what one reads or writes), in order; whatever the streams.
  llvm::ArrayRef<int64_t> dataPredecessors(int64_t step) const { return dataPredecessors_[step]; }
  /// Whether some steps run on different streams (otherwise the order is the program order).
  bool severalStreams() const { return !before_.empty(); }

private:
  llvm::SmallVector<mlir::Operation *> steps_;
  llvm::DenseMap<mlir::Operation *, int64_t> positions_;
  std::vector<llvm::SmallVector<int64_t>> dataPredecessors_;
  /// before_[b][a]: step a completes before step b starts. Empty with one stream.
  std::vector<llvm::BitVector> before_;
  std::vector<std::pair<int64_t, int64_t>> spans_;
};

} // namespace kiln

#endif // KILN_COMPILER_PROGRAM_STEPORDER_H
