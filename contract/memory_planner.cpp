//===- memory_planner.cpp - Arena planning from live ranges ------------------===//

#include "contract/memory_planner.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

namespace kiln {
namespace {

uint64_t alignedSize(const BufferLifetime &buffer, uint64_t alignment) {
  return alignedBufferSize(buffer.size, alignment);
}

bool overlapInTime(const BufferLifetime &a, const BufferLifetime &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

}  // namespace

uint64_t alignedBufferSize(uint64_t size, uint64_t alignment) {
  return (std::max<uint64_t>(size, 1) + alignment - 1) / alignment * alignment;
}

namespace {

/// The indices of `buffers` in the order `order` places them.
std::vector<size_t> placementSequence(const std::vector<BufferLifetime> &buffers,
                                      uint64_t alignment, PlacementOrder order) {
  std::vector<size_t> sorted(buffers.size());
  std::iota(sorted.begin(), sorted.end(), 0);
  if (order == PlacementOrder::Breadth) {
    // The bytes live at each step; the steps most crowded first.
    std::map<int64_t, uint64_t> breadth;
    for (const BufferLifetime &buffer : buffers)
      for (int64_t step = buffer.firstStep; step <= buffer.lastStep; ++step)
        breadth[step] += alignedSize(buffer, alignment);
    std::vector<std::pair<int64_t, uint64_t>> steps(breadth.begin(), breadth.end());
    std::stable_sort(steps.begin(), steps.end(),
                     [](const auto &a, const auto &b) { return a.second > b.second; });
    std::vector<size_t> bySize(sorted);
    std::stable_sort(bySize.begin(), bySize.end(),
                     [&](size_t a, size_t b) { return buffers[a].size > buffers[b].size; });
    std::vector<bool> taken(buffers.size(), false);
    sorted.clear();
    for (const auto &[step, bytes] : steps)
      for (size_t index : bySize)
        if (!taken[index] && buffers[index].firstStep <= step && step <= buffers[index].lastStep) {
          taken[index] = true;
          sorted.push_back(index);
        }
    return sorted;
  }
  std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    const BufferLifetime &x = buffers[a], &y = buffers[b];
    switch (order) {
      case PlacementOrder::DecreasingSize:
      case PlacementOrder::Improved:
        if (x.size != y.size) return x.size > y.size;
        return x.firstStep < y.firstStep;
      case PlacementOrder::Temporal:
        if (x.firstStep != y.firstStep) return x.firstStep < y.firstStep;
        return x.size > y.size;
      case PlacementOrder::Lifetime:
      case PlacementOrder::Breadth:
        if (x.lastStep - x.firstStep != y.lastStep - y.firstStep)
          return x.lastStep - x.firstStep > y.lastStep - y.firstStep;
        return x.size > y.size;
    }
    return false;
  });
  return sorted;
}

/// Places the buffers in the sequence given, each at the best-fitting gap (see placeBuffers).
ArenaPlan placeInSequence(const std::vector<BufferLifetime> &buffers, uint64_t alignment,
                          const std::vector<size_t> &sequence) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  struct Placed {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Placed> placed;
  placed.reserve(sequence.size());
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  for (size_t index : sequence) {
    const BufferLifetime &buffer = buffers[index];
    uint64_t size = alignedSize(buffer, alignment);
    plan.naiveSize += size;
    // The address ranges taken by buffers alive at the same time, in address order.
    taken.clear();
    for (const Placed &other : placed)
      if (overlapInTime(buffer, buffers[other.index])) taken.emplace_back(other.begin, other.end);
    std::sort(taken.begin(), taken.end());
    uint64_t bestOffset = 0, bestGap = UINT64_MAX, cursor = 0;
    bool found = false;
    for (const auto &[begin, end] : taken) {
      if (begin > cursor && begin - cursor >= size && begin - cursor < bestGap) {
        bestGap = begin - cursor;
        bestOffset = cursor;
        found = true;
      }
      cursor = std::max(cursor, end);
    }
    if (!found) bestOffset = cursor;
    plan.offsets[index] = bestOffset;
    placed.push_back({bestOffset, bestOffset + size, index});
    plan.arenaSize = std::max(plan.arenaSize, bestOffset + size);
  }
  return plan;
}

}  // namespace

ArenaPlan placeBuffers(const std::vector<BufferLifetime> &buffers, uint64_t alignment,
                       PlacementOrder order) {
  if (alignment == 0) alignment = 1;
  ArenaPlan plan =
      placeInSequence(buffers, alignment, placementSequence(buffers, alignment, order));
  plan.order = order;
  plan.peakLiveSize = peakLiveBytes(buffers, alignment);
  return plan;
}

ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, uint64_t alignment,
                    unsigned improvementRounds) {
  if (alignment == 0) alignment = 1;
  const uint64_t bound = peakLiveBytes(buffers, alignment);
  ArenaPlan best;
  std::vector<size_t> bestSequence;
  bool first = true;
  for (PlacementOrder order : {PlacementOrder::DecreasingSize, PlacementOrder::Temporal,
                               PlacementOrder::Breadth, PlacementOrder::Lifetime}) {
    std::vector<size_t> sequence = placementSequence(buffers, alignment, order);
    ArenaPlan plan = placeInSequence(buffers, alignment, sequence);
    plan.order = order;
    plan.peakLiveSize = bound;
    if (first || plan.arenaSize < best.arenaSize) {
      best = std::move(plan);
      bestSequence = std::move(sequence);
    }
    first = false;
    if (best.arenaSize == bound) break;  // No order can do better than the bound.
  }

  // Improvement: a buffer that reaches the arena's top was placed after the buffers that pushed
  // it up; place it earlier, at a seeded random position before its own, and keep the new
  // sequence when the arena does not grow. Equal arenas are kept too, so that the search moves
  // across plateaus. A fixed seed makes the plan a function of the program alone.
  std::mt19937_64 random(0x6b696c6e);  // "kiln"
  for (unsigned round = 0; round < improvementRounds && best.arenaSize > bound; ++round) {
    std::vector<size_t> atTop;
    for (size_t i = 0; i < buffers.size(); ++i)
      if (best.offsets[i] + alignedSize(buffers[i], alignment) == best.arenaSize)
        atTop.push_back(i);
    size_t moved = atTop[random() % atTop.size()];
    std::vector<size_t> sequence(bestSequence);
    auto from = std::find(sequence.begin(), sequence.end(), moved);
    size_t position = static_cast<size_t>(from - sequence.begin());
    sequence.erase(from);
    sequence.insert(sequence.begin() + static_cast<std::ptrdiff_t>(random() % (position + 1)),
                    moved);
    ArenaPlan plan = placeInSequence(buffers, alignment, sequence);
    if (plan.arenaSize > best.arenaSize) continue;
    plan.order = PlacementOrder::Improved;
    plan.peakLiveSize = bound;
    best = std::move(plan);
    bestSequence = std::move(sequence);
  }
  return best;
}

uint64_t peakLiveBytes(const std::vector<BufferLifetime> &buffers, uint64_t alignment) {
  if (alignment == 0) alignment = 1;
  // A sweep over the steps where some buffer starts or ends.
  std::map<int64_t, int64_t> delta;
  for (const BufferLifetime &buffer : buffers) {
    int64_t size = static_cast<int64_t>(alignedSize(buffer, alignment));
    delta[buffer.firstStep] += size;
    delta[buffer.lastStep + 1] -= size;
  }
  int64_t live = 0, peak = 0;
  for (const auto &[step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

}  // namespace kiln
