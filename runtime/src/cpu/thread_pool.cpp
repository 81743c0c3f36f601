//===- thread_pool.cpp - The CPU device's thread pool ---------------------===//

#include "runtime/src/cpu/thread_pool.h"

#include <algorithm>

#include "runtime/src/cpu/denormals.h"

namespace kiln::runtime::cpu {

ThreadPool::ThreadPool(size_t num_threads, bool openmp)
    : threads_(std::max<size_t>(num_threads, 1)), openmp_(openmp) {
  if (openmp_) return;
  size_t workers = threads_ - 1;
  workers_.reserve(workers);
  for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

size_t ThreadPool::drain(Job& job) {
  size_t ran = 0;
  for (size_t i = job.next.fetch_add(1, std::memory_order_relaxed); i < job.count;
       i = job.next.fetch_add(1, std::memory_order_relaxed)) {
    job.iteration(job.context, i);
    ++ran;
  }
  return ran;
}

void ThreadPool::removeFromQueue(Job* job) {
  auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it != queue_.end()) queue_.erase(it);
}

void ThreadPool::run(size_t count, Iteration iteration, void* context) {
  if (count == 0) return;
  if (openmp_ && count > 1 && threads_ > 1) {
    // Inside another parallel region (a caller's own), OpenMP runs this one on the caller alone.
    std::atomic<size_t> next{0};
    const int threads = static_cast<int>(std::min(threads_, count));
#pragma omp parallel num_threads(threads)
    {
      // OpenMP's threads are oneDNN's too: the mode is theirs again after the region.
      ScopedFlushDenormals flush;
      for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < count;
           i = next.fetch_add(1, std::memory_order_relaxed))
        iteration(context, i);
    }
    return;
  }
  if (count == 1 || workers_.empty()) {
    for (size_t i = 0; i < count; ++i) iteration(context, i);
    return;
  }
  Job job;
  job.iteration = iteration;
  job.context = context;
  job.count = count;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(&job);
  }
  // The caller takes a share itself; wake only as many workers as there is work for.
  size_t helpers = std::min(count - 1, workers_.size());
  if (helpers == workers_.size()) {
    work_available_.notify_all();
  } else {
    for (size_t i = 0; i < helpers; ++i) work_available_.notify_one();
  }
  size_t ran = drain(job);
  std::unique_lock<std::mutex> lock(mutex_);
  // No worker can pick the job up after this, so waiting for the active ones to leave it makes
  // it safe to destroy.
  removeFromQueue(&job);
  job.finished += ran;
  job_finished_.wait(lock, [&] { return job.finished == job.count && job.active_workers == 0; });
}

void ThreadPool::workerLoop() {
  flushDenormalsOnThisThread();
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_available_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // Stopping with nothing left to do.
    Job* job = queue_.front();
    ++job->active_workers;
    lock.unlock();
    size_t ran = drain(*job);
    lock.lock();
    // Every iteration of the job has been claimed: keep other workers from picking it up.
    removeFromQueue(job);
    job->finished += ran;
    --job->active_workers;
    if (job->finished == job->count && job->active_workers == 0) job_finished_.notify_all();
  }
}

}  // namespace kiln::runtime::cpu
