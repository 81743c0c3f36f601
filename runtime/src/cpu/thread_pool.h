//===- thread_pool.h - The CPU device's thread pool -------------*- C++ -*-===//
//
// A fixed set of worker threads that run the iterations of `parallelFor` calls. Several threads
// may call `parallelFor` at once (one per concurrent run of a session): each call is a job in a
// shared queue, the workers take iterations from the oldest job first, and the calling thread
// works on its own job too, so a call always makes progress even when every worker is busy.
//
// Or, made with `openmp`, no threads of its own: each call is an OpenMP parallel region of the
// pool's thread count (the calling thread and OpenMP's), the threads oneDNN's calls run on. A
// program's kernels and its library calls then share one set of threads instead of two sets
// taking turns on the same cores (OpenMP's threads spin for a while after each oneDNN call).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_THREAD_POOL_H_
#define KILN_RUNTIME_SRC_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kiln::runtime::cpu {

class ThreadPool {
 public:
  /// Makes a pool in which `num_threads` threads run each `parallelFor`: the caller and
  /// `num_threads - 1` workers (0 is read as 1).
  explicit ThreadPool(size_t num_threads, bool openmp = false);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The threads that run a `parallelFor`, counting the caller.
  size_t threadCount() const { return threads_; }

  /// Calls `fn(i)` once for every i in [0, count), on the caller's thread and the workers, in
  /// any order, and returns when all calls have returned. Thread-safe. `fn` must not throw.
  template <typename Fn>
  void parallelFor(size_t count, Fn&& fn) {
    using Callable = std::remove_reference_t<Fn>;
    run(
        count, [](void* context, size_t i) { (*static_cast<Callable*>(context))(i); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using Iteration = void (*)(void* context, size_t i);

  /// One `parallelFor` call; lives on the caller's stack until every iteration has finished and
  /// no worker holds it.
  struct Job {
    Iteration iteration;
    void* context;
    size_t count;
    std::atomic<size_t> next{0};
    // Guarded by the pool's mutex.
    size_t finished = 0;
    size_t active_workers = 0;
  };

  void run(size_t count, Iteration iteration, void* context);
  void workerLoop();
  /// Runs iterations of `job` until none is left to claim; returns how many it ran.
  static size_t drain(Job& job);
  /// Takes `job` out of the queue if it is still there. Requires `mutex_`.
  void removeFromQueue(Job* job);

  std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable job_finished_;
  std::deque<Job*> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  size_t threads_ = 1;
  bool openmp_ = false;
};

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_THREAD_POOL_H_
