//===- MemoryPlanner.h - Static arena planning from live ranges -*- C++ -*-===//
//
// Every intermediate buffer of a program gets an offset in one arena. Buffers whose live ranges
// (the steps from the one that writes them to the last that reads them) do not overlap may share
// bytes. The plan is computed once at compile time; a run only needs the arena's size.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ARTIFACT_MEMORYPLANNER_H
#define KILN_COMPILER_ARTIFACT_MEMORYPLANNER_H

#include <cstdint>
#include <vector>

namespace kiln {

/// One intermediate buffer: its size in bytes and the first and last step (inclusive) at which
/// it holds a live value.
struct BufferLifetime {
  uint64_t size = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

struct ArenaPlan {
  /// The offset of each buffer, in the order they were given; a multiple of the alignment.
  std::vector<uint64_t> offsets;
  /// The arena's size: the highest end of any placed buffer, rounded up to the alignment.
  uint64_t arenaSize = 0;
  /// The sum of every buffer's aligned size: the arena without reuse.
  uint64_t naiveSize = 0;
};

/// Places `buffers` in one arena: largest first, each at the best-fitting gap among the buffers
/// already placed whose lifetimes overlap its own (the smallest gap that holds it, else above
/// them all). Two buffers live at the same step never overlap in memory.
ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, uint64_t alignment);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_MEMORYPLANNER_H
