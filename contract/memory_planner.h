//===- memory_planner.h - Arena planning from live ranges --------*- C++ -*-===//
//
// Every intermediate buffer of a program gets an offset in one arena. Buffers whose live ranges
// (the steps from the one that writes them to the last that reads them) overlap never share
// bytes. The compiler plans once (kiln-plan-memory), and a run only needs the arena's size; a
// program with a dimension without an upper bound is planned again by the runtime for each
// shape its runs bring (the same packing, over the run's sizes). Plain C++, shared by both.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONTRACT_MEMORY_PLANNER_H_
#define KILN_CONTRACT_MEMORY_PLANNER_H_

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

/// How many improvement rounds planArena runs by default when no order reaches the live peak.
/// Each round is one packing (quadratic in the buffer count).
constexpr unsigned kDefaultImprovementRounds = 512;

/// The order in which best-fit packing places buffers.
enum class PlacementOrder {
  /// Largest first; ties by first step.
  DecreasingSize,
  /// By first step; ties largest first.
  Temporal,
  /// The steps by the bytes live at them, most first; at each, its buffers largest first
  /// (greedy by breadth: the buffers of the most crowded step are packed first).
  Breadth,
  /// Longest live range first; ties largest first.
  Lifetime,
  /// The best of the orders above, then improved by moving the buffers that reach the arena's
  /// top earlier (planArena's improvement rounds).
  Improved,
};

struct ArenaPlan {
  /// The offset of each buffer, in the order they were given; a multiple of the alignment.
  std::vector<uint64_t> offsets;
  /// The arena's size: the highest end of any placed buffer, rounded up to the alignment.
  uint64_t arenaSize = 0;
  /// The sum of every buffer's aligned size: the arena without reuse.
  uint64_t naiveSize = 0;
  /// The largest sum of aligned sizes of buffers live at one step: no arena is smaller.
  uint64_t peakLiveSize = 0;
  /// The order whose packing this is.
  PlacementOrder order = PlacementOrder::DecreasingSize;
};

/// The bytes a buffer of `size` takes in the arena: rounded up to the alignment, at least one
/// alignment unit (an empty buffer still gets an address of its own).
uint64_t alignedBufferSize(uint64_t size, uint64_t alignment);

/// Places `buffers` in `order`, each at the best-fitting gap among the buffers already placed
/// whose lifetimes overlap its own (the smallest gap that holds it, else above them all).
ArenaPlan placeBuffers(const std::vector<BufferLifetime> &buffers, uint64_t alignment,
                       PlacementOrder order);

/// Packs in every order and keeps the smallest arena (the earliest order on a tie). When that
/// arena is above the live peak, up to `improvementRounds` rounds each move one buffer that
/// reaches the arena's top to an earlier, seeded random place in the sequence and keep the new
/// sequence when its arena is no larger (a hill climb on the placement order, as TVM's USMP
/// does; deterministic). The result is never larger than the best order's.
ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, uint64_t alignment,
                    unsigned improvementRounds = kDefaultImprovementRounds);

/// The largest sum of aligned sizes of the buffers live at one step.
uint64_t peakLiveBytes(const std::vector<BufferLifetime> &buffers, uint64_t alignment);

}  // namespace kiln

#endif  // KILN_CONTRACT_MEMORY_PLANNER_H_
