//===- stream_threads.cpp - Threads that run a program's other streams -------===//

#include "runtime/src/cpu/stream_threads.h"

#include <utility>

#include "runtime/src/cpu/denormals.h"

namespace kiln::runtime::cpu {

StreamThreads::~StreamThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  for (const std::unique_ptr<Worker>& worker : workers_) worker->wake.notify_one();
  for (const std::unique_ptr<Worker>& worker : workers_) worker->thread.join();
}

void StreamThreads::start(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!idle_.empty()) {
    Worker* worker = idle_.back();
    idle_.pop_back();
    worker->task = std::move(task);
    lock.unlock();
    worker->wake.notify_one();
    return;
  }
  workers_.push_back(std::make_unique<Worker>());
  Worker* worker = workers_.back().get();
  worker->task = std::move(task);
  worker->thread = std::thread([this, worker] { loop(worker); });
}

void StreamThreads::loop(Worker* worker) {
  flushDenormalsOnThisThread();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    worker->wake.wait(lock, [&] { return worker->task || stopping_; });
    if (!worker->task) return;  // Stopping, with nothing left to run.
    std::function<void()> task = std::move(worker->task);
    worker->task = nullptr;
    lock.unlock();
    task();
    lock.lock();
    idle_.push_back(worker);
  }
}

}  // namespace kiln::runtime::cpu
