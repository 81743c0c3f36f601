//===- MemoryPlanner.cpp - Static arena planning from live ranges -------------===//

#include "compiler/artifact/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

namespace kiln {
namespace {

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

bool overlapInTime(const BufferLifetime &a, const BufferLifetime &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

} // namespace

ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, uint64_t alignment) {
  if (alignment == 0)
    alignment = 1;
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].firstStep < buffers[b].firstStep;
  });

  struct Placed {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Placed> placed;
  for (size_t index : order) {
    const BufferLifetime &buffer = buffers[index];
    uint64_t size = alignUp(std::max<uint64_t>(buffer.size, 1), alignment);
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
  return plan;
}

} // namespace kiln
