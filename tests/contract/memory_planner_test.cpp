//===- memory_planner_test.cpp - The arena planner's offsets and bounds ----===//

#include "contract/memory_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln {
namespace {

/// Fails when two buffers live at the same step share a byte or an offset breaks the alignment.
void expectSound(const std::vector<BufferLifetime> &buffers, const ArenaPlan &plan,
                 uint64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "buffer " << i;
    EXPECT_LE(plan.offsets[i] + buffers[i].size, plan.arenaSize) << "buffer " << i;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      bool together = buffers[i].firstStep <= buffers[j].lastStep &&
                      buffers[j].firstStep <= buffers[i].lastStep;
      bool apart = plan.offsets[i] + buffers[i].size <= plan.offsets[j] ||
                   plan.offsets[j] + buffers[j].size <= plan.offsets[i];
      EXPECT_TRUE(!together || apart) << "buffers " << i << " and " << j << " overlap";
    }
  }
}

TEST(MemoryPlannerTest, BuffersLiveAtDifferentStepsShareBytes) {
  std::vector<BufferLifetime> buffers{{256, 0, 1}, {256, 1, 2}, {256, 2, 3}};
  ArenaPlan plan = planArena(buffers, 64);
  expectSound(buffers, plan, 64);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.arenaSize, 512u);
  EXPECT_EQ(plan.naiveSize, 768u);
  EXPECT_EQ(plan.peakLiveSize, 512u);
}

TEST(MemoryPlannerTest, SizesRoundUpToTheAlignment) {
  std::vector<BufferLifetime> buffers{{12, 0, 0}, {1, 0, 0}, {0, 0, 0}};
  ArenaPlan plan = planArena(buffers, 64);
  expectSound(buffers, plan, 64);
  EXPECT_EQ(plan.arenaSize, 192u) << "an empty buffer still takes an aligned slot";
  EXPECT_EQ(plan.peakLiveSize, 192u);
}

TEST(MemoryPlannerTest, TiesAreBrokenByFirstStepForAStablePlan) {
  // Equal sizes: the earlier buffer is placed first, at offset 0, in either order.
  std::vector<BufferLifetime> buffers{{64, 5, 6}, {64, 0, 6}};
  for (PlacementOrder order : {PlacementOrder::DecreasingSize, PlacementOrder::Temporal,
                               PlacementOrder::Lifetime}) {
    ArenaPlan plan = placeBuffers(buffers, 64, order);
    EXPECT_EQ(plan.offsets[1], 0u);
    EXPECT_EQ(plan.offsets[0], 64u);
  }
}

TEST(MemoryPlannerTest, BestFitTakesTheSmallestGapThatHolds) {
  // Two holes open up at step 2: 128 bytes at 0 and 64 bytes at 192. A 64-byte buffer goes to
  // the 64-byte hole, leaving the 128-byte one for the 128-byte buffer that follows.
  std::vector<BufferLifetime> buffers{
      {128, 0, 1}, {64, 0, 3}, {64, 0, 1}, {64, 0, 3}, {64, 2, 3}, {128, 2, 3}};
  ArenaPlan plan = placeBuffers(buffers, 64, PlacementOrder::Temporal);
  expectSound(buffers, plan, 64);
  EXPECT_EQ(plan.arenaSize, plan.peakLiveSize);
}

TEST(MemoryPlannerTest, ImprovementReachesTheBoundWhereNoOrderDoes) {
  // The best greedy order packs these into 640 bytes (others need 768); the live peak (step 5)
  // is 576, and moving a buffer that reaches the top earlier in the sequence finds a plan at the
  // peak.
  std::vector<BufferLifetime> buffers{{128, 4, 7}, {256, 2, 3}, {192, 3, 5},
                                      {256, 5, 7}, {64, 2, 4},  {64, 6, 9}};
  for (PlacementOrder order : {PlacementOrder::DecreasingSize, PlacementOrder::Temporal,
                               PlacementOrder::Breadth, PlacementOrder::Lifetime})
    EXPECT_GE(placeBuffers(buffers, 64, order).arenaSize, 640u);
  ArenaPlan plan = planArena(buffers, 64);
  expectSound(buffers, plan, 64);
  EXPECT_EQ(plan.peakLiveSize, 576u);
  EXPECT_EQ(plan.arenaSize, 576u);
  EXPECT_EQ(plan.order, PlacementOrder::Improved);
  // Without improvement rounds the best order's plan is kept.
  EXPECT_EQ(planArena(buffers, 64, /*improvementRounds=*/0).arenaSize, 640u);
  // The search is seeded: the same program gets the same offsets.
  EXPECT_EQ(planArena(buffers, 64).offsets, plan.offsets);
}

TEST(MemoryPlannerTest, NeverWorseThanTheBestOrderOnRandomPrograms) {
  std::mt19937 random(7);
  int otherOrderWins = 0, improvementWins = 0;
  const PlacementOrder orders[] = {PlacementOrder::DecreasingSize, PlacementOrder::Temporal,
                                   PlacementOrder::Breadth, PlacementOrder::Lifetime};
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<BufferLifetime> buffers;
    int count = 2 + random() % 40;
    for (int i = 0; i < count; ++i) {
      int64_t first = random() % 30;
      buffers.push_back({1 + random() % 5000, first, first + int64_t(random() % 8)});
    }
    ArenaPlan plan = planArena(buffers, 64);
    expectSound(buffers, plan, 64);
    uint64_t smallest = UINT64_MAX;
    for (PlacementOrder order : orders) {
      ArenaPlan each = placeBuffers(buffers, 64, order);
      expectSound(buffers, each, 64);
      smallest = std::min(smallest, each.arenaSize);
    }
    EXPECT_LE(plan.arenaSize, smallest);
    EXPECT_EQ(planArena(buffers, 64, 0).arenaSize, smallest);
    EXPECT_GE(plan.arenaSize, plan.peakLiveSize) << "no arena is below the live peak";
    EXPECT_LE(plan.arenaSize, plan.naiveSize);
    otherOrderWins +=
        smallest < placeBuffers(buffers, 64, PlacementOrder::DecreasingSize).arenaSize;
    improvementWins += plan.arenaSize < smallest;
  }
  // The other orders matter: on some of these programs one beats decreasing size; and the
  // improvement rounds beat every order on some.
  EXPECT_GT(otherOrderWins, 0);
  EXPECT_GT(improvementWins, 0);
}

TEST(MemoryPlannerTest, PeakLiveCountsBuffersThatMeetAtOneStep) {
  std::vector<BufferLifetime> buffers{{64, 0, 2}, {64, 2, 4}, {64, 2, 3}, {64, 5, 5}};
  EXPECT_EQ(peakLiveBytes(buffers, 64), 192u) << "step 2 holds buffers 0, 1 and 2";
}

} // namespace
} // namespace kiln
