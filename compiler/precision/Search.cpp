//===- Search.cpp - The accuracy-budget search of --precision auto ---------===//

#include "compiler/precision/Search.h"

namespace kiln::precision {

SearchResult
searchLowPrecision(int64_t candidates, const std::vector<bool> &eligible, const Evaluator &evaluate,
                   const std::function<void(int64_t, const Evaluation &)> &onEvaluation) {
  SearchResult result;
  result.low.assign(candidates, false);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < candidates; ++i)
    if (eligible.empty() || eligible[i])
      order.push_back(i);

  auto tryWith = [&](size_t begin, size_t end) {
    std::vector<bool> trial = result.low;
    for (size_t i = begin; i < end; ++i)
      trial[order[i]] = true;
    Evaluation evaluation = evaluate(trial);
    ++result.evaluations;
    if (onEvaluation)
      onEvaluation(result.evaluations, evaluation);
    if (evaluation.withinBudget)
      result.low = std::move(trial);
    return evaluation;
  };

  // Accepts the segment [begin, end) with what is accepted so far when that stays within the
  // budget; otherwise splits it, the first half first, down to single candidates.
  std::function<void(size_t, size_t)> segment = [&](size_t begin, size_t end) {
    if (begin == end)
      return;
    Evaluation evaluation = tryWith(begin, end);
    if (evaluation.withinBudget)
      return;
    if (end - begin == 1) {
      result.blamed.push_back({order[begin], evaluation});
      return;
    }
    size_t middle = begin + (end - begin) / 2;
    segment(begin, middle);
    segment(middle, end);
  };
  segment(0, order.size());
  return result;
}

} // namespace kiln::precision
