//===- thread_pool_test.cpp - The CPU device's thread pool ----------------===//

#include "runtime/src/cpu/thread_pool.h"

#include "runtime/src/cpu/denormals.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace kiln::runtime::cpu {
namespace {

/// Expects every index of a parallelFor to run exactly once; a lost or repeated workgroup would
/// change a count.
void expectEveryIterationOnce(ThreadPool &pool) {
  for (size_t count : {0u, 1u, 2u, 7u, 1000u}) {
    std::vector<std::atomic<int>> hits(count);
    pool.parallelFor(count, [&](size_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "count " << count << " i " << i;
  }
}

/// Expects `callers` threads calling parallelFor at once, `rounds` times each, to get all of
/// their own iterations and none of another caller's.
void expectEveryCallerServed(ThreadPool &pool, int callers, int rounds) {
  constexpr size_t kCount = 500;
  std::vector<uint64_t> sums(callers, 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      for (int round = 0; round < rounds; ++round) {
        std::atomic<uint64_t> sum{0};
        pool.parallelFor(kCount, [&](size_t i) { sum.fetch_add(i * (c + 1)); });
        sums[c] += sum.load();
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  for (int c = 0; c < callers; ++c) {
    EXPECT_EQ(sums[c], uint64_t(rounds) * (c + 1) * (kCount * (kCount - 1) / 2)) << "caller " << c;
  }
}

// Tests that every index runs exactly once.
TEST(ThreadPoolTest, RunsEveryIterationOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.threadCount(), 4u);
  expectEveryIterationOnce(pool);
}

// Tests that several threads may call parallelFor at once.
TEST(ThreadPoolTest, ServesSeveralCallersAtOnce) {
  ThreadPool pool(3);
  expectEveryCallerServed(pool, 6, 40);
}

/// Expects every iteration of a parallelFor to run on the calling thread.
void expectRunsOnCaller(ThreadPool &pool) {
  std::thread::id caller = std::this_thread::get_id();
  bool elsewhere = false;
  pool.parallelFor(50, [&](size_t) { elsewhere |= std::this_thread::get_id() != caller; });
  EXPECT_FALSE(elsewhere);
}

// Tests that a pool of one thread runs everything on the caller.
TEST(ThreadPoolTest, SingleThreadRunsOnTheCaller) {
  ThreadPool pool(1);
  expectRunsOnCaller(pool);
}

// Tests that a pool on OpenMP's threads runs every iteration once, serves several callers at
// once, uses the threads it was made with, and runs a pool of one on the caller.
TEST(ThreadPoolTest, OpenMpPoolRunsEveryIterationOnceForEveryCaller) {
  ThreadPool pool(3, /*openmp=*/true);
  EXPECT_EQ(pool.threadCount(), 3u);
  expectEveryIterationOnce(pool);
  expectEveryCallerServed(pool, 4, 20);

  ThreadPool single(1, /*openmp=*/true);
  expectRunsOnCaller(single);
}

/// A product whose exact result, 1e-40, is denormal in f32; volatile keeps it at run time.
float denormalProduct() {
  volatile float a = 1e-20f, b = 1e-20f;
  return a * b;
}

// Tests that the pool's workers compute with denormals flushed to zero, and that a caller's
// thread flushes them only inside a ScopedFlushDenormals, its own mode restored after.
TEST(ThreadPoolTest, WorkersFlushDenormalsAndCallersGetTheirModeBack) {
#if defined(__SSE__) || defined(__x86_64__)
  ThreadPool pool(2);
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> workerProducts{0}, flushed{0};
  pool.parallelFor(200, [&](size_t) {
    if (std::this_thread::get_id() == caller)
      return;
    workerProducts.fetch_add(1);
    if (denormalProduct() == 0.0f)
      flushed.fetch_add(1);
  });
  EXPECT_EQ(flushed.load(), workerProducts.load());
  EXPECT_GT(denormalProduct(), 0.0f) << "the caller's thread flushes outside a run";
  {
    ScopedFlushDenormals flush;
    EXPECT_EQ(denormalProduct(), 0.0f);
  }
  EXPECT_GT(denormalProduct(), 0.0f) << "the caller's mode was not restored";
  // OpenMP's threads flush inside the pool's regions, and get their mode back after.
  ThreadPool openmp(2, /*openmp=*/true);
  std::atomic<int> products{0}, zeros{0};
  openmp.parallelFor(64, [&](size_t) {
    products.fetch_add(1);
    if (denormalProduct() == 0.0f)
      zeros.fetch_add(1);
  });
  EXPECT_EQ(zeros.load(), products.load());
  EXPECT_GT(denormalProduct(), 0.0f);
#else
  GTEST_SKIP() << "no MXCSR on this processor";
#endif
}

}  // namespace
}  // namespace kiln::runtime::cpu
