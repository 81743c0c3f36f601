//===- StepOrder.cpp - Which steps of a program may run at the same time ------===//

#include "compiler/program/StepOrder.h"

namespace kiln {

using namespace mlir;

StepOrder::StepOrder(program::ProgramOp program) {
  std::optional<int64_t> firstStream;
  bool several = false;
  for (Operation &op : program.getBody().front())
    if (auto step = dyn_cast<program::StepOpInterface>(op)) {
      positions_[&op] = steps_.size();
      steps_.push_back(&op);
      int64_t stream = step.getStreamIndex();
      several |= firstStream && *firstStream != stream;
      firstStream = firstStream.value_or(stream);
    }
  // Each step's data predecessors: the steps it depends on through a root buffer (read after
  // write, write after write, write after read).
  size_t count = steps_.size();
  dataPredecessors_.resize(count);
  struct Accesses {
    std::optional<int64_t> writer;
    SmallVector<int64_t> readers;
  };
  DenseMap<Value, Accesses> accesses;
  for (size_t j = 0; j < count; ++j) {
    auto step = cast<program::StepOpInterface>(steps_[j]);
    SmallVector<int64_t> &mine = dataPredecessors_[j];
    auto dependOn = [&](int64_t i) {
      if (i != static_cast<int64_t>(j) && !llvm::is_contained(mine, i))
        mine.push_back(i);
    };
    for (Value input : step.getStepInputs()) {
      Accesses &access = accesses[program::rootBuffer(input)];
      if (access.writer)
        dependOn(*access.writer);
    }
    for (Value output : step.getStepOutputs()) {
      Accesses &access = accesses[program::rootBuffer(output)];
      if (access.writer)
        dependOn(*access.writer);
      for (int64_t reader : access.readers)
        dependOn(reader);
    }
    for (Value output : step.getStepOutputs()) {
      Accesses &access = accesses[program::rootBuffer(output)];
      access.writer = j;
      access.readers.clear();
    }
    for (Value input : step.getStepInputs())
      accesses[program::rootBuffer(input)].readers.push_back(j);
    llvm::sort(mine);
  }
  if (!several)
    return;

  // The closure of the data predecessors and the previous step of each stream, in program
  // order, which is a topological order of these edges.
  before_.assign(count, llvm::BitVector(count));
  DenseMap<int64_t, int64_t> lastOfStream;
  for (size_t j = 0; j < count; ++j) {
    auto step = cast<program::StepOpInterface>(steps_[j]);
    llvm::BitVector &mine = before_[j];
    auto dependOn = [&](int64_t i) {
      if (mine.test(i))
        return;
      mine |= before_[i];
      mine.set(i);
    };
    auto [last, first] = lastOfStream.try_emplace(step.getStreamIndex(), j);
    if (!first) {
      dependOn(last->second);
      last->second = j;
    }
    for (int64_t i : dataPredecessors_[j])
      dependOn(i);
  }

  spans_.resize(count);
  for (size_t a = 0; a < count; ++a) {
    spans_[a] = {a, a};
    for (size_t b = 0; b < count; ++b)
      if (concurrent(a, b)) {
        spans_[a].first = std::min<int64_t>(spans_[a].first, b);
        spans_[a].second = std::max<int64_t>(spans_[a].second, b);
      }
  }
}

std::optional<int64_t> StepOrder::position(Operation *op) const {
  auto it = positions_.find(op);
  if (it == positions_.end())
    return std::nullopt;
  return it->second;
}

bool StepOrder::before(int64_t a, int64_t b) const {
  if (before_.empty())
    return a < b;
  return before_[b].test(a);
}

std::pair<int64_t, int64_t> StepOrder::concurrentSpan(int64_t step) const {
  if (spans_.empty())
    return {step, step};
  return spans_[step];
}

} // namespace kiln
