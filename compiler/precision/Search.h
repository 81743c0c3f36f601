//===- Search.h - The accuracy-budget search of --precision auto -*- C++ -*-===//
//
// Finds a large set of low-precision candidates whose program stays within an accuracy budget,
// by bisection over segments of candidates in program order: a segment that breaks the budget
// together with what is already accepted is split, until single candidates are blamed and kept
// high. With b bad candidates among N it evaluates about 2·b·log2(N) sets.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PRECISION_SEARCH_H
#define KILN_COMPILER_PRECISION_SEARCH_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln::precision {

/// What evaluating one set of low candidates gave.
struct Evaluation {
  bool withinBudget = false;
  /// How far past (> 1) or within (<= 1) the budget the worst output element is.
  double budgetRatio = 0;
  /// A line naming the output, element and error that decided (the evidence for a blame).
  std::string detail;
};

/// Evaluates the program with exactly the candidates `low[i]` set in the low precision.
using Evaluator = std::function<Evaluation(const std::vector<bool> &low)>;

struct Blame {
  int64_t candidate;
  Evaluation evidence;
};

struct SearchResult {
  std::vector<bool> low;
  /// The candidates kept high, each with the evaluation that blamed it.
  std::vector<Blame> blamed;
  int64_t evaluations = 0;
};

/// Searches `candidates` candidates. `eligible[i]` false keeps candidate i high without search
/// (empty: all eligible). `onEvaluation` (may be empty) hears of each evaluation, for progress.
SearchResult searchLowPrecision(
    int64_t candidates, const std::vector<bool> &eligible, const Evaluator &evaluate,
    const std::function<void(int64_t evaluations, const Evaluation &)> &onEvaluation = {});

} // namespace kiln::precision

#endif // KILN_COMPILER_PRECISION_SEARCH_H
