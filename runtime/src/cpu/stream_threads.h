//===- stream_threads.h - Threads that run a program's other streams -*- C++ -*-===//
//
// A program compiled with several streams runs stream 0 on the calling thread and each other
// stream on a thread of this set. The threads are kept between runs: starting one per run would
// cost more than a small step, and each keeps its OpenMP team, which oneDNN's calls on it reuse.
// Concurrent runs each take idle threads; the set grows to the most used at once.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_STREAM_THREADS_H_
#define KILN_RUNTIME_SRC_CPU_STREAM_THREADS_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::runtime::cpu {

class StreamThreads {
 public:
  StreamThreads() = default;
  ~StreamThreads();
  StreamThreads(const StreamThreads&) = delete;
  StreamThreads& operator=(const StreamThreads&) = delete;

  /// Runs `task` on an idle thread of the set, starting one when none is idle. Returns at once;
  /// the task signals its own completion. Thread-safe. `task` must not throw.
  void start(std::function<void()> task);

 private:
  struct Worker {
    std::thread thread;
    std::condition_variable wake;
    std::function<void()> task;
  };
  void loop(Worker* worker);

  std::mutex mutex_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;
};

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_STREAM_THREADS_H_
