//===- cuda_sim_executor_test.cpp - The simulated CUDA device's block executor -===//
//
// The kernels here are plain C++ written the way the retargeted code is: they take
// cudaLaunchKernel's argument array and reach every GPU instruction through the runtime table,
// asking check_access before each load and store.
//
//===----------------------------------------------------------------------===//

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/src/cuda/sim/sim_executor.h"

namespace kiln::runtime::cuda::sim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const kiln_sim_runtime_t* const rt = simRuntimeTable();

// Loads and stores as the retargeted code makes them.
template <typename T>
T load(const T* p, uint32_t site, uint32_t flags = 0) {
  return *static_cast<T*>(rt->check_access(const_cast<T*>(p), sizeof(T), flags, site));
}
template <typename T>
void store(T* p, T value, uint32_t site, uint32_t flags = 0) {
  *static_cast<T*>(rt->check_access(p, sizeof(T), flags | KILN_SIM_ACCESS_WRITE, site)) = value;
}
template <typename T>
T arg(void** args, int i) {
  return *static_cast<T*>(args[i]);
}
uint32_t sreg(uint32_t which) { return rt->special_register(which); }
uint32_t linearTid() {
  return sreg(KILN_SIM_TID_X) + sreg(KILN_SIM_TID_Y) * sreg(KILN_SIM_NTID_X) +
         sreg(KILN_SIM_TID_Z) * sreg(KILN_SIM_NTID_X) * sreg(KILN_SIM_NTID_Y);
}
template <typename T>
T* shared() {
  return static_cast<T*>(rt->shared_memory());
}
constexpr uint32_t kShared = KILN_SIM_ACCESS_SHARED;
constexpr uint32_t kFullMask = 0xFFFFFFFFu;

Status launch(const char* name, kiln_sim_kernel_fn entry, uint32_t flags, uint32_t shared_bytes,
              std::vector<uint32_t> grid, std::vector<uint32_t> block, std::vector<void*> args,
              const SimMemory& memory, const SimLaunchOptions& options = {}) {
  SimKernel kernel;
  kernel.name = name;
  kernel.entry = entry;
  kernel.info.flags = flags;
  kernel.info.shared_bytes = shared_bytes;
  return launchSimKernel(kernel, grid.data(), block.data(), args.data(), memory, options);
}

/// Host vectors registered as device allocations for as long as the test holds them.
class DeviceMemory {
 public:
  template <typename T>
  void add(std::vector<T>& v) {
    memory.add(v.data(), v.size() * sizeof(T));
  }
  SimMemory memory;
};

// -----

TEST(SimMemoryTest, FindsOnlyWholeAccessesInsideAnAllocation) {
  std::vector<char> bytes(100);
  SimMemory memory;
  memory.add(bytes.data() + 10, 50);
  EXPECT_TRUE(memory.contains(bytes.data() + 10, 50));
  EXPECT_TRUE(memory.contains(bytes.data() + 56, 4));
  EXPECT_FALSE(memory.contains(bytes.data() + 57, 4));
  EXPECT_FALSE(memory.contains(bytes.data() + 9, 1));
  uintptr_t base = 0;
  size_t size = 0;
  ASSERT_TRUE(memory.find(bytes.data() + 30, 8, &base, &size));
  EXPECT_EQ(base, reinterpret_cast<uintptr_t>(bytes.data() + 10));
  EXPECT_EQ(size, 50u);
  EXPECT_TRUE(memory.remove(bytes.data() + 10));
  EXPECT_FALSE(memory.remove(bytes.data() + 10));
  EXPECT_FALSE(memory.contains(bytes.data() + 10, 1));
}

TEST(SimExecutorTest, TableHasTheAbiVersionAndSize) {
  EXPECT_EQ(rt->version, uint32_t{KILN_SIM_ABI_VERSION});
  EXPECT_EQ(rt->size, sizeof(kiln_sim_runtime_t));
}

// Tests that the table does no harm when called outside a launch: an access goes to poisoned
// scratch memory, not to the address asked for.
TEST(SimExecutorTest, TableOutsideALaunchIsHarmless) {
  uint32_t word = 7;
  void* p = rt->check_access(&word, sizeof(word), KILN_SIM_ACCESS_WRITE, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p, &word);
  EXPECT_EQ(*static_cast<uint32_t*>(p), 0xFFFFFFFFu);
  EXPECT_EQ(rt->special_register(KILN_SIM_TID_X), 0u);
  EXPECT_EQ(rt->shared_memory(), nullptr);
  rt->barrier(1);
  EXPECT_EQ(word, 7u);
}

// -----

// y[i] = 2 * x[i] + 1 over a grid-stride loop.
void affineKernel(void** args) {
  const float* x = arg<float*>(args, 0);
  float* y = arg<float*>(args, 1);
  uint32_t n = arg<uint32_t>(args, 2);
  uint32_t stride = sreg(KILN_SIM_NTID_X) * sreg(KILN_SIM_NCTAID_X);
  for (uint32_t i = sreg(KILN_SIM_CTAID_X) * sreg(KILN_SIM_NTID_X) + sreg(KILN_SIM_TID_X); i < n;
       i += stride) {
    store(&y[i], 2.0f * load(&x[i], 1) + 1.0f, 2);
  }
}

// Tests that a kernel without synchronization runs every thread of every block once: a
// skipped or repeated thread, or a wrong special register, leaves a wrong element.
TEST(SimExecutorTest, PlainLoopRunsGridStrideKernel) {
  constexpr uint32_t kN = 1000;
  std::vector<float> x(kN), y(kN, 0.0f);
  for (uint32_t i = 0; i < kN; ++i) x[i] = 0.25f * static_cast<float>(i) - 3.0f;
  DeviceMemory device;
  device.add(x);
  device.add(y);
  float* px = x.data();
  float* py = y.data();
  uint32_t n = kN;
  for (uint64_t seed : {uint64_t{0}, uint64_t{99}}) {
    std::fill(y.begin(), y.end(), 0.0f);
    SimLaunchOptions options;
    options.seed = seed;
    options.host_threads = 2;
    ASSERT_TRUE(launch("affine", affineKernel, 0, 0, {5, 1, 1}, {64, 1, 1}, {&px, &py, &n},
                       device.memory, options)
                    .ok());
    for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(y[i], 2.0f * x[i] + 1.0f) << "i " << i;
  }
}

constexpr int kRegisters = 14;

void specialRegistersKernel(void** args) {
  uint32_t* out = arg<uint32_t*>(args, 0);
  uint32_t block = sreg(KILN_SIM_CTAID_X) + sreg(KILN_SIM_CTAID_Y) * sreg(KILN_SIM_NCTAID_X) +
                   sreg(KILN_SIM_CTAID_Z) * sreg(KILN_SIM_NCTAID_X) * sreg(KILN_SIM_NCTAID_Y);
  uint32_t threads = sreg(KILN_SIM_NTID_X) * sreg(KILN_SIM_NTID_Y) * sreg(KILN_SIM_NTID_Z);
  uint32_t* mine = out + (block * threads + linearTid()) * kRegisters;
  for (uint32_t r = 0; r < kRegisters; ++r) store(&mine[r], sreg(r), r);
}

// Tests the special registers of 3-D blocks in a 3-D grid: every thread of every block finds
// its own ids, the launch's dimensions, its lane (the linear index modulo 32) and the warp size.
TEST(SimExecutorTest, SpecialRegistersIn3DGridAndBlocks) {
  const uint32_t grid[3] = {2, 3, 2};
  const uint32_t block[3] = {8, 4, 2};
  constexpr uint32_t kBlocks = 12, kThreads = 64;
  std::vector<uint32_t> out(kBlocks * kThreads * kRegisters, 0xDEADu);
  DeviceMemory device;
  device.add(out);
  uint32_t* pout = out.data();
  SimLaunchOptions options;
  options.host_threads = 3;
  ASSERT_TRUE(launch("registers", specialRegistersKernel, 0, 0, {2, 3, 2}, {8, 4, 2}, {&pout},
                     device.memory, options)
                  .ok());
  for (uint32_t bz = 0; bz < grid[2]; ++bz)
    for (uint32_t by = 0; by < grid[1]; ++by)
      for (uint32_t bx = 0; bx < grid[0]; ++bx)
        for (uint32_t tz = 0; tz < block[2]; ++tz)
          for (uint32_t ty = 0; ty < block[1]; ++ty)
            for (uint32_t tx = 0; tx < block[0]; ++tx) {
              uint32_t b = bx + by * grid[0] + bz * grid[0] * grid[1];
              uint32_t t = tx + ty * block[0] + tz * block[0] * block[1];
              const uint32_t expected[kRegisters] = {tx,       ty,      tz,      block[0], block[1],
                                                     block[2], bx,      by,      bz,       grid[0],
                                                     grid[1],  grid[2], t % 32u, 32u};
              for (int r = 0; r < kRegisters; ++r)
                ASSERT_EQ(out[(b * kThreads + t) * kRegisters + r], expected[r])
                    << "register " << r << " block " << b << " thread " << t;
            }
}

// -----

// Each block sums its 256 inputs by a tree reduction in shared memory.
void treeReductionKernel(void** args) {
  const float* in = arg<float*>(args, 0);
  float* out = arg<float*>(args, 1);
  float* s = shared<float>();
  uint32_t t = sreg(KILN_SIM_TID_X);
  uint32_t block = sreg(KILN_SIM_CTAID_X);
  store(&s[t], load(&in[block * sreg(KILN_SIM_NTID_X) + t], 1), 2, kShared);
  rt->barrier(1);
  for (uint32_t stride = sreg(KILN_SIM_NTID_X) / 2; stride > 0; stride /= 2) {
    if (t < stride) store(&s[t], load(&s[t], 3, kShared) + load(&s[t + stride], 4, kShared), 5);
    rt->barrier(2);
  }
  if (t == 0) store(&out[block], load(&s[0], 6, kShared), 7);
}

// Tests that barriers order the threads of a block: a thread running past a barrier early, or
// a shared memory shared between blocks, gives a wrong sum (or trips the race checker).
TEST(SimExecutorTest, FiberTreeReductionWithBarriers) {
  constexpr uint32_t kBlocks = 16, kThreads = 256;
  std::vector<float> in(kBlocks * kThreads), out(kBlocks, 0.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 97) - 40.0f;
  DeviceMemory device;
  device.add(in);
  device.add(out);
  float* pin = in.data();
  float* pout = out.data();
  for (uint64_t seed : {uint64_t{0}, uint64_t{12345}}) {
    std::fill(out.begin(), out.end(), 0.0f);
    SimLaunchOptions options;
    options.seed = seed;
    options.host_threads = 2;
    Status status = launch("tree_reduction", treeReductionKernel, KILN_SIM_KERNEL_BARRIERS,
                           kThreads * sizeof(float), {kBlocks, 1, 1}, {kThreads, 1, 1},
                           {&pin, &pout}, device.memory, options);
    ASSERT_TRUE(status.ok()) << status.toString();
    for (uint32_t b = 0; b < kBlocks; ++b) {
      float sum = 0.0f;  // Small integers: every order of additions is exact.
      for (uint32_t t = 0; t < kThreads; ++t) sum += in[b * kThreads + t];
      EXPECT_EQ(out[b], sum) << "block " << b << " seed " << seed;
    }
  }
}

// Threads 32 and up leave early; the others meet at a barrier and then read each other's data.
void earlyExitKernel(void** args) {
  uint32_t* out = arg<uint32_t*>(args, 0);
  uint32_t t = sreg(KILN_SIM_TID_X);
  if (t >= 32) return;
  uint32_t* s = shared<uint32_t>();
  store(&s[t], t * 3, 1, kShared);
  rt->barrier(1);
  store(&out[t], load(&s[31 - t], 2, kShared), 3);
}

// Tests that exited threads do not hold up a barrier (Volta and later): otherwise the launch
// would fail as a deadlock.
TEST(SimExecutorTest, ExitedThreadsDoNotBlockBarriers) {
  std::vector<uint32_t> out(32, 0);
  DeviceMemory device;
  device.add(out);
  uint32_t* pout = out.data();
  Status status = launch("early_exit", earlyExitKernel, KILN_SIM_KERNEL_BARRIERS, 128, {1, 1, 1},
                         {128, 1, 1}, {&pout}, device.memory);
  ASSERT_TRUE(status.ok()) << status.toString();
  for (uint32_t t = 0; t < 32; ++t) EXPECT_EQ(out[t], (31 - t) * 3);
}

// -----

struct ShuffleCase {
  uint32_t mode;
  uint32_t width;
};

// out[t] = shfl(mode, value 100 + t, b, c); in_range[t] = the predicate.
void shuffleKernel(void** args) {
  uint32_t mode = arg<uint32_t>(args, 0);
  uint32_t b = arg<uint32_t>(args, 1);
  uint32_t c = arg<uint32_t>(args, 2);
  uint32_t* out = arg<uint32_t*>(args, 3);
  uint32_t* in_range = arg<uint32_t*>(args, 4);
  uint32_t t = linearTid();
  uint32_t p = 7;
  uint32_t value = rt->shfl_sync(mode, kFullMask, 100 + t, b, c, &p);
  store(&out[t], value, 1);
  store(&in_range[t], p, 2);
}

class SimShuffleTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t>> {};

// Tests shfl.sync against CUDA's documented __shfl*_sync semantics, written independently of
// PTX's formula: a wrong segment, clamp or predicate shows up as a lane reading the wrong value.
TEST_P(SimShuffleTest, MatchesCudaSemantics) {
  auto [mode, width] = GetParam();
  constexpr uint32_t kThreads = 64;
  std::vector<uint32_t> out(kThreads), in_range(kThreads);
  DeviceMemory device;
  device.add(out);
  device.add(in_range);
  uint32_t* pout = out.data();
  uint32_t* pin_range = in_range.data();
  uint32_t clamp = mode == KILN_SIM_SHFL_UP ? 0 : 0x1f;
  uint32_t c = ((32 - width) << 8) | clamp;
  for (uint32_t b : {0u, 1u, 3u, width / 2, width - 1, width + 3, 16u}) {
    Status status = launch("shuffle", shuffleKernel, KILN_SIM_KERNEL_WARP_SYNC, 0, {1, 1, 1},
                           {kThreads, 1, 1}, {&mode, &b, &c, &pout, &pin_range}, device.memory);
    ASSERT_TRUE(status.ok()) << status.toString();
    for (uint32_t t = 0; t < kThreads; ++t) {
      uint32_t lane = t % 32, warp_base = t - lane;
      uint32_t source = lane;
      bool valid = true;
      switch (mode) {
        case KILN_SIM_SHFL_IDX:  // __shfl_sync: lane srcLane % width of the thread's group.
          source = lane / width * width + b % width;
          break;
        case KILN_SIM_SHFL_UP:  // __shfl_up_sync: unchanged below delta within the group.
          valid = lane % width >= (b & 31);
          if (valid) source = lane - (b & 31);
          break;
        case KILN_SIM_SHFL_DOWN:  // __shfl_down_sync: unchanged past the end of the group.
          valid = lane % width + (b & 31) < width;
          if (valid) source = lane + (b & 31);
          break;
        case KILN_SIM_SHFL_BFLY:  // __shfl_xor_sync: earlier groups may be read, later not.
          valid = ((lane ^ (b & 31)) / width) <= lane / width;
          if (valid) source = lane ^ (b & 31);
          break;
      }
      ASSERT_EQ(out[t], 100 + warp_base + source)
          << "mode " << mode << " width " << width << " b " << b << " thread " << t;
      ASSERT_EQ(in_range[t], valid ? 1u : 0u)
          << "mode " << mode << " width " << width << " b " << b << " thread " << t;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ModesAndWidths, SimShuffleTest,
                         ::testing::Combine(::testing::Values(KILN_SIM_SHFL_IDX, KILN_SIM_SHFL_UP,
                                                              KILN_SIM_SHFL_DOWN,
                                                              KILN_SIM_SHFL_BFLY),
                                            ::testing::Values(32u, 16u, 8u)));

uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}
float bitsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Lane 0 of each warp writes the warp's sum, reduced with shfl.down.
void warpSumKernel(void** args) {
  const float* in = arg<float*>(args, 0);
  float* out = arg<float*>(args, 1);
  uint32_t t = sreg(KILN_SIM_TID_X);
  float v = load(&in[t], 1);
  for (uint32_t offset = 16; offset > 0; offset /= 2) {
    uint32_t ok = 0;
    v += bitsFloat(rt->shfl_sync(KILN_SIM_SHFL_DOWN, kFullMask, floatBits(v), offset, 0x1f, &ok));
  }
  if (sreg(KILN_SIM_LANEID) == 0) store(&out[t / 32], v, 2);
}

// Tests a warp reduction as CUDA code writes it: a wrong shuffle changes a sum.
TEST(SimExecutorTest, WarpReductionWithShflDown) {
  constexpr uint32_t kThreads = 128;
  std::vector<float> in(kThreads), out(kThreads / 32, 0.0f);
  for (uint32_t i = 0; i < kThreads; ++i) in[i] = static_cast<float>(i * 7 % 23);
  DeviceMemory device;
  device.add(in);
  device.add(out);
  float* pin = in.data();
  float* pout = out.data();
  SimLaunchOptions options;
  options.seed = 5;
  Status status = launch("warp_sum", warpSumKernel, KILN_SIM_KERNEL_WARP_SYNC, 0, {1, 1, 1},
                         {kThreads, 1, 1}, {&pin, &pout}, device.memory, options);
  ASSERT_TRUE(status.ok()) << status.toString();
  for (uint32_t w = 0; w < kThreads / 32; ++w) {
    float sum = 0.0f;
    for (uint32_t l = 0; l < 32; ++l) sum += in[w * 32 + l];
    EXPECT_EQ(out[w], sum) << "warp " << w;
  }
}

// -----

// out[4 * t + mode] = vote(mode, mask, predicate) for the lanes of `mask`; the others leave.
void voteKernel(void** args) {
  uint32_t mask = arg<uint32_t>(args, 0);
  uint32_t divisor = arg<uint32_t>(args, 1);
  uint32_t* out = arg<uint32_t*>(args, 2);
  uint32_t t = sreg(KILN_SIM_TID_X);
  uint32_t lane = sreg(KILN_SIM_LANEID);
  if ((mask >> lane & 1) == 0) return;
  for (uint32_t mode = 0; mode < 4; ++mode)
    store(&out[4 * t + mode], rt->vote_sync(mode, mask, lane % divisor == 0), mode);
}

// Tests vote.sync's four modes with a predicate true on some lanes, on all lanes, and over a
// partial mask, in two warps: a vote over the wrong lanes gives another ballot.
TEST(SimExecutorTest, VotesOverPartialAndUniformPredicates) {
  constexpr uint32_t kThreads = 64;
  std::vector<uint32_t> out(4 * kThreads);
  DeviceMemory device;
  device.add(out);
  uint32_t* pout = out.data();
  struct Case {
    uint32_t mask, divisor;
    uint32_t all, any, uni, ballot;
  };
  const Case cases[] = {
      {kFullMask, 3, 0, 1, 0, 0x49249249u},  // Lanes 0, 3, 6, ..., 30.
      {kFullMask, 1, 1, 1, 1, kFullMask},
      {kFullMask, 64, 0, 1, 0, 0x1u},
      {0x0000FFFFu, 3, 0, 1, 0, 0x9249u},
      {0xF0000000u, 4, 0, 1, 0, 0x10000000u},  // Lanes 28-31 vote, lane 28's is true.
  };
  for (const Case& c : cases) {
    std::fill(out.begin(), out.end(), 0xDEADu);
    uint32_t mask = c.mask, divisor = c.divisor;
    Status status = launch("vote", voteKernel, KILN_SIM_KERNEL_WARP_SYNC, 0, {1, 1, 1},
                           {kThreads, 1, 1}, {&mask, &divisor, &pout}, device.memory);
    ASSERT_TRUE(status.ok()) << status.toString();
    for (uint32_t t = 0; t < kThreads; ++t) {
      if ((c.mask >> (t % 32) & 1) == 0) continue;
      EXPECT_EQ(out[4 * t + KILN_SIM_VOTE_ALL], c.all) << "mask " << c.mask << " thread " << t;
      EXPECT_EQ(out[4 * t + KILN_SIM_VOTE_ANY], c.any) << "mask " << c.mask << " thread " << t;
      EXPECT_EQ(out[4 * t + KILN_SIM_VOTE_UNI], c.uni) << "mask " << c.mask << " thread " << t;
      EXPECT_EQ(out[4 * t + KILN_SIM_VOTE_BALLOT], c.ballot)
          << "mask " << c.mask << " thread " << t;
    }
  }
}

// -----

void divergentBarrierKernel(void**) {
  if (sreg(KILN_SIM_TID_X) < 32) {
    rt->barrier(1);
  } else {
    rt->barrier(2);
  }
}

// Tests the barrier checker: threads of a block waiting at two different barriers is a hang or
// undefined behaviour on the GPU and must fail, naming both groups.
TEST(SimExecutorTest, DivergentBarriersFail) {
  SimMemory memory;
  Status status = launch("divergent_barriers", divergentBarrierKernel, KILN_SIM_KERNEL_BARRIERS, 0,
                         {2, 1, 1}, {64, 1, 1}, {}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(),
              AllOf(StartsWith("cuda-sim: kernel 'divergent_barriers' block ("),
                    HasSubstr("different barriers"), HasSubstr("threads 0-31 at barrier 1"),
                    HasSubstr("threads 32-63 at barrier 2")));
}

// Threads 0..127 each store to buf[t]; only the first 64 elements are device memory.
void storeEachKernel(void** args) {
  float* buf = arg<float*>(args, 0);
  uint32_t t = sreg(KILN_SIM_TID_X);
  store(&buf[t], static_cast<float>(t), 8);
}

// Tests the bounds checker on global memory: the store past the allocation fails the launch,
// naming the first thread that made it, and the host memory beyond stays untouched.
TEST(SimExecutorTest, OutOfBoundsGlobalStoreFailsAndWritesNothing) {
  std::vector<float> buf(128, 42.0f);
  SimMemory memory;
  memory.add(buf.data(), 64 * sizeof(float));
  float* pbuf = buf.data();
  Status status =
      launch("store_each", storeEachKernel, 0, 0, {1, 1, 1}, {128, 1, 1}, {&pbuf}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(),
              AllOf(StartsWith("cuda-sim: kernel 'store_each' block (0,0,0) thread (64,0,0): "),
                    HasSubstr("out-of-bounds store of 4 bytes"), HasSubstr("(site 8)")));
  for (uint32_t i = 0; i < 64; ++i) EXPECT_EQ(buf[i], static_cast<float>(i));
  for (uint32_t i = 64; i < 128; ++i) EXPECT_EQ(buf[i], 42.0f) << "unregistered element " << i;
}

void sharedOverrunKernel(void** args) {
  float* out = arg<float*>(args, 0);
  float* s = shared<float>();
  uint32_t t = sreg(KILN_SIM_TID_X);
  store(&s[t], 1.0f, 1, kShared);
  store(&out[t], load(&s[t + 1], 2, kShared), 3);
}

// Tests the bounds checker on shared memory: the last thread reads one float past the 16 floats
// of the block's shared memory.
TEST(SimExecutorTest, OutOfBoundsSharedAccessFails) {
  std::vector<float> out(16);
  DeviceMemory device;
  device.add(out);
  float* pout = out.data();
  SimLaunchOptions options;
  options.check_races = false;
  Status status = launch("shared_overrun", sharedOverrunKernel, 0, 16 * sizeof(float), {1, 1, 1},
                         {16, 1, 1}, {&pout}, device.memory, options);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("thread (15,0,0)"), HasSubstr("out-of-bounds load of 4 bytes"),
                    HasSubstr("64 bytes of shared memory (at offset 64)"), HasSubstr("(site 2)")));
}

// -----

// Threads 0 and 1 store to the same shared word; with `separate`, a barrier is between them.
void sharedWriteKernel(void** args) {
  uint32_t separate = arg<uint32_t>(args, 0);
  uint32_t t = sreg(KILN_SIM_TID_X);
  uint32_t* s = shared<uint32_t>();
  if (t == 0) store(&s[1], 10u, 1, kShared);
  if (separate) rt->barrier(1);
  if (t == 1) store(&s[1], 11u, 2, kShared);
  rt->barrier(2);
}

// Tests the race checker: two stores to one shared word without a barrier between are a race
// (on the GPU the result depends on timing); with a barrier they are not.
TEST(SimExecutorTest, SharedMemoryRaceIsReportedUnlessABarrierSeparates) {
  SimMemory memory;
  uint32_t separate = 0;
  Status status = launch("shared_race", sharedWriteKernel, KILN_SIM_KERNEL_BARRIERS, 64, {1, 1, 1},
                         {32, 1, 1}, {&separate}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("thread (1,0,0)"), HasSubstr("race"),
                                      HasSubstr("byte offset 4"), HasSubstr("thread (0,0,0)")));

  separate = 1;
  for (uint64_t seed : {uint64_t{0}, uint64_t{3}}) {
    SimLaunchOptions options;
    options.seed = seed;
    status = launch("shared_race", sharedWriteKernel, KILN_SIM_KERNEL_BARRIERS, 64, {1, 1, 1},
                    {32, 1, 1}, {&separate}, memory, options);
    EXPECT_TRUE(status.ok()) << status.toString();
  }
}

// Every thread adds 1 to a shared counter atomically; with `plain_read`, thread 5 also reads it
// without an atomic before the barrier.
void sharedAtomicKernel(void** args) {
  uint32_t plain_read = arg<uint32_t>(args, 0);
  uint32_t* out = arg<uint32_t*>(args, 1);
  uint32_t t = sreg(KILN_SIM_TID_X);
  uint32_t* counter = shared<uint32_t>();
  if (t == 0) store(counter, 0u, 1, kShared);
  rt->barrier(1);
  uint32_t* p = static_cast<uint32_t*>(
      rt->check_access(counter, 4, kShared | KILN_SIM_ACCESS_WRITE | KILN_SIM_ACCESS_ATOMIC, 2));
  __atomic_fetch_add(p, 1u, __ATOMIC_RELAXED);
  if (plain_read && t == 5) (void)load(counter, 3, kShared);
  rt->barrier(2);
  if (t == 0) store(out, load(counter, 4, kShared), 5);
}

// Tests that atomics never race with each other (the count is right and no error), but a plain
// load of the same word in the same epoch does.
TEST(SimExecutorTest, AtomicsDoNotRaceWithEachOther) {
  std::vector<uint32_t> out(1, 0);
  DeviceMemory device;
  device.add(out);
  uint32_t* pout = out.data();
  uint32_t plain_read = 0;
  Status status = launch("shared_atomic", sharedAtomicKernel, KILN_SIM_KERNEL_BARRIERS, 4,
                         {1, 1, 1}, {96, 1, 1}, {&plain_read, &pout}, device.memory);
  ASSERT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(out[0], 96u);

  plain_read = 1;
  status = launch("shared_atomic", sharedAtomicKernel, KILN_SIM_KERNEL_BARRIERS, 4, {1, 1, 1},
                  {96, 1, 1}, {&plain_read, &pout}, device.memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("race"), HasSubstr("a load of this thread")));
}

// Reads shared memory nobody wrote, then writes it (for the next block to not see).
void uninitializedSharedKernel(void** args) {
  float* out = arg<float*>(args, 0);
  double* out_double = arg<double*>(args, 1);
  uint32_t block = sreg(KILN_SIM_CTAID_X);
  float* s = shared<float>();
  store(&out[block], load(&s[0], 1, kShared), 2);
  store(&out_double[block], load(reinterpret_cast<double*>(s + 2), 3, kShared), 4);
  store(&s[0], 1.0f, 5, kShared);
  store(reinterpret_cast<double*>(s + 2), 1.0, 6, kShared);
}

// Tests that shared memory starts poisoned in every block: a read of it is a NaN, also after
// an earlier block on the same host thread wrote it.
TEST(SimExecutorTest, UninitializedSharedMemoryReadsNaN) {
  constexpr uint32_t kBlocks = 4;
  std::vector<float> out(kBlocks, 0.0f);
  std::vector<double> out_double(kBlocks, 0.0);
  DeviceMemory device;
  device.add(out);
  device.add(out_double);
  float* pout = out.data();
  double* pout_double = out_double.data();
  SimLaunchOptions options;
  options.host_threads = 1;
  Status status = launch("uninitialized_shared", uninitializedSharedKernel, 0, 16, {kBlocks, 1, 1},
                         {1, 1, 1}, {&pout, &pout_double}, device.memory, options);
  ASSERT_TRUE(status.ok()) << status.toString();
  for (uint32_t b = 0; b < kBlocks; ++b) {
    EXPECT_TRUE(std::isnan(out[b])) << "block " << b;
    EXPECT_TRUE(std::isnan(out_double[b])) << "block " << b;
  }
}

// -----

// Thread 5 traps before its store; every thread stores its index.
void trapKernel(void** args) {
  uint32_t* out = arg<uint32_t*>(args, 0);
  uint32_t t = sreg(KILN_SIM_TID_X);
  if (t == 5) rt->trap(9);
  store(&out[t], t, 1);
  if (arg<uint32_t>(args, 1)) rt->barrier(1);
}

// Tests that a trap fails the launch naming the thread, and stops that thread: the store after
// it never happens, in a plain loop as in fibers.
TEST(SimExecutorTest, TrapFailsTheLaunchAndStopsTheThread) {
  for (uint32_t fibers : {0u, 1u}) {
    std::vector<uint32_t> out(32, 0xDEADu);
    DeviceMemory device;
    device.add(out);
    uint32_t* pout = out.data();
    Status status = launch("trapping", trapKernel, fibers ? KILN_SIM_KERNEL_BARRIERS : 0, 0,
                           {1, 1, 1}, {32, 1, 1}, {&pout, &fibers}, device.memory);
    EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
    EXPECT_THAT(
        status.message(),
        StartsWith("cuda-sim: kernel 'trapping' block (0,0,0) thread (5,0,0): trap (site 9)"));
    EXPECT_EQ(out[5], 0xDEADu) << "fibers " << fibers;
    for (uint32_t t = 0; t < 5; ++t) EXPECT_EQ(out[t], t) << "fibers " << fibers;
  }
}

// Lanes 0-15 shuffle among themselves with shfl.idx from lane `b`; lanes 16-31 leave.
void halfWarpShuffleKernel(void** args) {
  uint32_t b = arg<uint32_t>(args, 0);
  uint32_t* out = arg<uint32_t*>(args, 1);
  uint32_t t = sreg(KILN_SIM_TID_X);
  if (t >= 16) return;
  uint32_t ok = 0;
  store(&out[t], rt->shfl_sync(KILN_SIM_SHFL_IDX, 0x0000FFFFu, t * 2, b, 0x1f, &ok), 1);
}

// Tests that a shuffle over a partial mask works, and that reading a lane outside the mask
// (undefined in PTX) fails.
TEST(SimExecutorTest, ShuffleFromLaneOutsideMaskFails) {
  std::vector<uint32_t> out(16, 0);
  DeviceMemory device;
  device.add(out);
  uint32_t* pout = out.data();
  uint32_t b = 9;
  Status status = launch("half_warp_shuffle", halfWarpShuffleKernel, KILN_SIM_KERNEL_WARP_SYNC, 0,
                         {1, 1, 1}, {32, 1, 1}, {&b, &pout}, device.memory);
  ASSERT_TRUE(status.ok()) << status.toString();
  for (uint32_t t = 0; t < 16; ++t) EXPECT_EQ(out[t], 18u);

  b = 20;
  status = launch("half_warp_shuffle", halfWarpShuffleKernel, KILN_SIM_KERNEL_WARP_SYNC, 0,
                  {1, 1, 1}, {32, 1, 1}, {&b, &pout}, device.memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("thread (0,0,0)"), HasSubstr("shfl.sync.idx"),
                                      HasSubstr("reads lane 20, which is not in the mask")));
}

// Lane 31 leaves; with `barrier_instead`, lanes 16-31 wait at a barrier instead. The others
// shuffle with a full mask.
void abandonedShuffleKernel(void** args) {
  uint32_t barrier_instead = arg<uint32_t>(args, 0);
  uint32_t t = sreg(KILN_SIM_TID_X);
  if (barrier_instead && t >= 16) {
    rt->barrier(4);
    return;
  }
  if (t == 31) return;
  uint32_t ok = 0;
  (void)rt->shfl_sync(KILN_SIM_SHFL_BFLY, kFullMask, t, 1, 0x1f, &ok);
}

// Tests that a shuffle that can never complete (a lane of its mask exited, or waits at a
// barrier) fails the launch instead of hanging it.
TEST(SimExecutorTest, ShuffleThatCanNeverCompleteFailsWithoutHanging) {
  SimMemory memory;
  uint32_t barrier_instead = 0;
  Status status = launch("abandoned_shuffle", abandonedShuffleKernel,
                         KILN_SIM_KERNEL_WARP_SYNC | KILN_SIM_KERNEL_BARRIERS, 0, {1, 1, 1},
                         {32, 1, 1}, {&barrier_instead}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("deadlock"), HasSubstr("shfl.sync.bfly with member mask 0xffffffff"),
                    HasSubstr("lane 31 (thread (31,0,0)), which has exited")));

  barrier_instead = 1;
  status = launch("abandoned_shuffle", abandonedShuffleKernel,
                  KILN_SIM_KERNEL_WARP_SYNC | KILN_SIM_KERNEL_BARRIERS, 0, {1, 1, 1}, {32, 1, 1},
                  {&barrier_instead}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("deadlock"), HasSubstr("waits at barrier 4")));
}

// Lane 0 shuffles with mask 0x3, lane 1 with the full mask.
void mismatchedMaskKernel(void**) {
  uint32_t t = sreg(KILN_SIM_TID_X);
  uint32_t ok = 0;
  if (t < 2) (void)rt->shfl_sync(KILN_SIM_SHFL_IDX, t == 0 ? 0x3u : kFullMask, t, 0, 0x1f, &ok);
}

// Tests that lanes of one warp waiting in a shuffle with different masks fail the launch.
TEST(SimExecutorTest, ShuffleWithDisagreeingMasksFails) {
  SimMemory memory;
  Status status = launch("mismatched_masks", mismatchedMaskKernel, KILN_SIM_KERNEL_WARP_SYNC, 0,
                         {1, 1, 1}, {32, 1, 1}, {}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), HasSubstr("lanes of a warp disagree"));
}

void barrierInPlainLoopKernel(void**) { rt->barrier(3); }

// Tests that a kernel whose info does not declare barriers cannot synchronize silently out of
// order: its barrier fails the launch.
TEST(SimExecutorTest, BarrierInKernelWithoutTheFlagFails) {
  SimMemory memory;
  Status status =
      launch("undeclared", barrierInPlainLoopKernel, 0, 0, {1, 1, 1}, {8, 1, 1}, {}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), HasSubstr("KILN_SIM_KERNEL_BARRIERS"));
}

// -----

// Thread 0 raises a flag in shared memory that the other threads read without a barrier: a
// kernel that relies on thread 0 running first. `fence` ends the kernel with a barrier, which
// runs the threads as fibers.
void orderDependentKernel(void** args) {
  uint32_t* out = arg<uint32_t*>(args, 0);
  uint32_t t = sreg(KILN_SIM_TID_X);
  uint32_t* flag = shared<uint32_t>();
  if (t == 0) {
    store(flag, 1u, 1, kShared);
  } else {
    store(&out[t], load(flag, 2, kShared), 3);
  }
  if (arg<uint32_t>(args, 1)) rt->barrier(1);
}

// Tests the two ways an order dependence is exposed: in order (seed 0, no race check) the kernel
// "works"; the race checker reports it; and some seeds run a reader before thread 0.
TEST(SimExecutorTest, OrderDependenceIsExposedBySeedOrRaceChecker) {
  constexpr uint32_t kThreads = 64;
  std::vector<uint32_t> out(kThreads, 0);
  DeviceMemory device;
  device.add(out);
  uint32_t* pout = out.data();
  for (uint32_t fence : {0u, 1u}) {
    uint32_t flags = fence ? KILN_SIM_KERNEL_BARRIERS : 0;
    auto run = [&](uint64_t seed, bool check_races) {
      std::fill(out.begin(), out.end(), 0u);
      SimLaunchOptions options;
      options.seed = seed;
      options.check_races = check_races;
      return launch("order_dependent", orderDependentKernel, flags, 4, {1, 1, 1}, {kThreads, 1, 1},
                    {&pout, &fence}, device.memory, options);
    };
    Status status = run(0, false);
    ASSERT_TRUE(status.ok()) << status.toString();
    for (uint32_t t = 1; t < kThreads; ++t) EXPECT_EQ(out[t], 1u) << "fence " << fence;

    status = run(0, true);
    EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
    EXPECT_THAT(status.message(), AllOf(HasSubstr("race"), HasSubstr("thread (0,0,0)")));

    int exposed = 0;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      ASSERT_TRUE(run(seed, false).ok());
      std::vector<uint32_t> first = out;
      ASSERT_TRUE(run(seed, false).ok());
      EXPECT_EQ(out, first) << "seed " << seed << " gives another order on a second run";
      // A reader that ran before thread 0 saw the poison.
      if (std::count(out.begin() + 1, out.end(), 0xFFFFFFFFu) > 0) ++exposed;
    }
    EXPECT_GT(exposed, 0) << "fence " << fence;
  }
}

// -----

void nothingKernel(void**) {}

// Tests the launch checks CUDA makes: empty grids and blocks, and blocks over 1024 threads.
TEST(SimExecutorTest, InvalidLaunchDimensionsAreRejected) {
  SimMemory memory;
  const std::vector<std::vector<uint32_t>> bad_blocks = {{0, 1, 1},    {1, 0, 1},   {1, 1, 0},
                                                         {1025, 1, 1}, {32, 32, 2}, {1, 1, 65}};
  for (const auto& block : bad_blocks) {
    Status status = launch("nothing", nothingKernel, 0, 0, {1, 1, 1}, block, {}, memory);
    EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT) << block[0] << "," << block[1];
  }
  Status status = launch("nothing", nothingKernel, 0, 0, {1, 0, 1}, {1, 1, 1}, {}, memory);
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(), HasSubstr("kernel 'nothing'"));
  EXPECT_TRUE(launch("nothing", nothingKernel, 0, 0, {1, 1, 1}, {32, 32, 1}, {}, memory).ok());
}

// Recurses `depth` frames of 1 KiB each.
__attribute__((noinline)) uint32_t deepRecursion(uint32_t depth) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return deepRecursion(depth - 1) + frame[0];
}

// Threads 1-3 leave at once; thread 0 recurses after they have (the barrier waits for them).
void stackHungryKernel(void** args) {
  uint32_t depth = arg<uint32_t>(args, 0);
  if (sreg(KILN_SIM_TID_X) != 0) return;
  rt->barrier(1);
  (void)deepRecursion(depth);
}

// Tests the guard page below each fiber stack: a thread that overflows its stack by a little
// crashes instead of silently writing over the stack below it (which belongs to a thread that
// has exited, so nothing else would notice).
TEST(SimExecutorDeathTest, StackOverflowHitsTheGuardPage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SimMemory memory;
  SimLaunchOptions options;
  options.fiber_stack_bytes = 64 * 1024;
  uint32_t shallow = 16;
  ASSERT_TRUE(launch("stack_hungry", stackHungryKernel, KILN_SIM_KERNEL_BARRIERS, 0, {1, 1, 1},
                     {4, 1, 1}, {&shallow}, memory, options)
                  .ok());
  uint32_t deep = 80;
  // A SIGSEGV, or AddressSanitizer's report of a stack overflow.
  EXPECT_DEATH((void)launch("stack_hungry", stackHungryKernel, KILN_SIM_KERNEL_BARRIERS, 0,
                            {1, 1, 1}, {4, 1, 1}, {&deep}, memory, options),
               "");
}

}  // namespace
}  // namespace kiln::runtime::cuda::sim
