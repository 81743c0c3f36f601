//===- MemoryPlanner.cpp - Static arena planning from live ranges -------------===//

#include "compiler/program/MemoryPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln {
namespace {

uint64_t alignedSize(const BufferLifetime &buffer, uint64_t alignment) {
  return alignedBufferSize(buffer.size, alignment);
}

bool overlapInTime(const BufferLifetime &a, const BufferLifetime &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

} // namespace

uint64_t alignedBufferSize(uint64_t size, uint64_t alignment) {
  return (std::max<uint64_t>(size, 1) + alignment - 1) / alignment * alignment;
}

ArenaPlan placeBuffers(const std::vector<BufferLifetime> &buffers, uint64_t alignment,
                       PlacementOrder order) {
  if (alignment == 0)
    alignment = 1;
  ArenaPlan plan;
  plan.order = order;
  plan.offsets.assign(buffers.size(), 0);
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
  } else {
    std::stable_sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
      const BufferLifetime &x = buffers[a], &y = buffers[b];
      switch (order) {
      case PlacementOrder::DecreasingSize:
        if (x.size != y.size)
          return x.size > y.size;
        return x.firstStep < y.firstStep;
      case PlacementOrder::Temporal:
        if (x.firstStep != y.firstStep)
          return x.firstStep < y.firstStep;
        return x.size > y.size;
      case PlacementOrder::Lifetime:
      case PlacementOrder::Breadth:
        if (x.lastStep - x.firstStep != y.lastStep - y.firstStep)
          return x.lastStep - x.firstStep > y.lastStep - y.firstStep;
        return x.size > y.size;
      }
      return false;
    });
  }

  struct Placed {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Placed> placed;
  for (size_t index : sorted) {
    const BufferLifetime &buffer = buffers[index];
    uint64_t size = alignedSize(buffer, alignment);
    plan.naiveSize += size;
    // The address ranges taken by buffers alive at the same time, in address order.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (const Placed &other : placed)
      if (overlapInTime(buffer, buffers[other.index]))
        taken.emplace_back(other.begin, other.end);
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
    if (!found)
      bestOffset = cursor;
    plan.offsets[index] = bestOffset;
    placed.push_back({bestOffset, bestOffset + size, index});
    plan.arenaSize = std::max(plan.arenaSize, bestOffset + size);
  }
  plan.peakLiveSize = peakLiveBytes(buffers, alignment);
  return plan;
}

ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, uint64_t alignment) {
  ArenaPlan best;
  bool first = true;
  for (PlacementOrder order : {PlacementOrder::DecreasingSize, PlacementOrder::Temporal,
                               PlacementOrder::Breadth, PlacementOrder::Lifetime}) {
    ArenaPlan plan = placeBuffers(buffers, alignment, order);
    if (first || plan.arenaSize < best.arenaSize)
      best = std::move(plan);
    first = false;
    if (best.arenaSize == best.peakLiveSize)
      break; // No order can do better than the bound.
  }
  return best;
}

uint64_t peakLiveBytes(const std::vector<BufferLifetime> &buffers, uint64_t alignment) {
  if (alignment == 0)
    alignment = 1;
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

} // namespace kiln
