//===- sim_executor.cpp - Running retargeted CUDA kernels on the CPU ------===//
//
// Each host thread that runs blocks owns a BlockRunner (thread_local, reused from block to block
// and launch to launch): the block's shared memory and its race shadow, the fiber stacks, and
// the simulated threads. A block runs on fibers made with Boost.Context's fcontext API on those
// stacks: one fiber looping over the threads for kernels that never synchronize, one per thread
// otherwise, switched by a round-robin scheduler at barriers and warp operations. The functions
// of the runtime table find the calling simulated thread through `t_current`.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/sim/sim_executor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/context/detail/fcontext.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/src/cpu/thread_pool.h"

#if defined(__SANITIZE_ADDRESS__)
#define KILN_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_SIM_ASAN 1
#endif
#endif
#ifdef KILN_SIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kiln::runtime::cuda::sim {

//===----------------------------------------------------------------------===//
// SimMemory
//===----------------------------------------------------------------------===//

void SimMemory::add(const void* base, size_t size) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  allocations_[reinterpret_cast<uintptr_t>(base)] = size;
}

bool SimMemory::remove(const void* base) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  return allocations_.erase(reinterpret_cast<uintptr_t>(base)) != 0;
}

std::vector<const void*> SimMemory::bases() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  std::vector<const void*> result;
  for (const auto& [base, size] : allocations_)
    result.push_back(reinterpret_cast<const void*>(base));
  return result;
}

bool SimMemory::contains(const void* address, size_t size) const {
  uintptr_t base;
  size_t bytes;
  return find(address, size, &base, &bytes);
}

bool SimMemory::find(const void* address, size_t size, uintptr_t* base, size_t* bytes) const {
  uintptr_t begin = reinterpret_cast<uintptr_t>(address);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = allocations_.upper_bound(begin);
  if (it == allocations_.begin()) return false;
  --it;
  // [begin, begin + size) within [it->first, it->first + it->second), without overflow.
  uintptr_t offset = begin - it->first;
  if (offset > it->second || size > it->second - offset) return false;
  *base = it->first;
  *bytes = it->second;
  return true;
}

namespace {

namespace fctx = boost::context::detail;

constexpr uint32_t kWarpSize = 32;
constexpr uint32_t kMaxBlockThreads = 1024;
/// A shadow's thread when several threads accessed the byte in its epoch.
constexpr uint16_t kSeveralThreads = 0xFFFF;
constexpr size_t kMinFiberStackBytes = 16 * 1024;
constexpr size_t kSharedAlignment = 256;
/// Global allocations each host thread remembers during a launch.
constexpr size_t kKnownAllocations = 4;
/// Ranges of threads listed in a "different barriers" message before it is cut short.
constexpr size_t kMaxListedRanges = 8;

//===----------------------------------------------------------------------===//
// AddressSanitizer's view of stack switches (no-ops without it)
//===----------------------------------------------------------------------===//

inline void sanitizerStartSwitch(void** fake_stack, const void* bottom, size_t size) {
#ifdef KILN_SIM_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
  (void)fake_stack, (void)bottom, (void)size;
#endif
}

inline void sanitizerFinishSwitch(void* fake_stack, const void** bottom, size_t* size) {
#ifdef KILN_SIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, bottom, size);
#else
  (void)fake_stack, (void)bottom, (void)size;
#endif
}

/// Forgets the redzones of frames that were dropped without returning, before a stack is reused.
inline void sanitizerForgetStack(void* bottom, size_t size) {
#ifdef KILN_SIM_ASAN
  ASAN_UNPOISON_MEMORY_REGION(bottom, size);
#else
  (void)bottom, (void)size;
#endif
}

//===----------------------------------------------------------------------===//
// Fiber stacks
//===----------------------------------------------------------------------===//

size_t pageSize() {
  static const size_t page = [] {
    long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<size_t>(size) : size_t{4096};
  }();
  return page;
}

/// Fiber stacks of one size, mapped with an inaccessible guard page below each so that an
/// overflow faults instead of writing over the neighbour; kept for reuse until the owning host
/// thread exits or another size is asked for.
class StackCache {
 public:
  StackCache() = default;
  StackCache(const StackCache&) = delete;
  StackCache& operator=(const StackCache&) = delete;
  ~StackCache() { release(); }

  /// Makes at least `count` stacks of `bytes` usable bytes (rounded up to pages) available;
  /// false when the system refuses a mapping.
  bool reserve(size_t count, size_t bytes) {
    size_t page = pageSize();
    bytes = (std::max(bytes, kMinFiberStackBytes) + page - 1) / page * page;
    if (bytes != usable_bytes_) {
      release();
      usable_bytes_ = bytes;
    }
    while (bottoms_.size() < count) {
      void* mapping = mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
      if (mapping == MAP_FAILED) return false;
      if (mprotect(mapping, page, PROT_NONE) != 0) {
        munmap(mapping, bytes + page);
        return false;
      }
      bottoms_.push_back(static_cast<char*>(mapping) + page);
    }
    return true;
  }

  /// The lowest usable address of stack `i`.
  char* bottom(size_t i) const { return bottoms_[i]; }
  size_t usableBytes() const { return usable_bytes_; }

 private:
  void release() {
    for (char* bottom : bottoms_) munmap(bottom - pageSize(), usable_bytes_ + pageSize());
    bottoms_.clear();
  }

  std::vector<char*> bottoms_;
  size_t usable_bytes_ = 0;
};

//===----------------------------------------------------------------------===//
// Launches, blocks and threads
//===----------------------------------------------------------------------===//

std::string dims(const uint32_t v[3]) {
  return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

/// What all host threads of one launch share.
struct Launch {
  const SimKernel* kernel = nullptr;
  uint32_t grid[3] = {};
  uint32_t block[3] = {};
  uint32_t block_threads = 0;
  uint64_t block_count = 0;
  void** arguments = nullptr;
  const SimMemory* memory = nullptr;
  const SimLaunchOptions* options = nullptr;
  /// Whether the threads of a block run as fibers (the kernel synchronizes).
  bool fibers = false;
  /// Tells the launches apart for the allocations each host thread remembers.
  uint64_t id = 0;
  /// Blocks start in the order i -> (order_multiplier * i + order_offset) % block_count.
  uint64_t order_multiplier = 1;
  uint64_t order_offset = 0;

  std::atomic<uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  Status error;

  /// Set when a failure could not even be described for want of memory.
  std::atomic<bool> out_of_memory{false};

  void fail(Status status) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (error.ok()) error = std::move(status);
    failed.store(true, std::memory_order_relaxed);
  }
  void failOutOfMemory() noexcept {
    out_of_memory.store(true, std::memory_order_relaxed);
    failed.store(true, std::memory_order_relaxed);
  }
};

std::atomic<uint64_t> g_next_launch_id{1};

enum class ThreadState : uint8_t { kRunnable, kAtBarrier, kInWarpOp, kExited, kStopped };
enum class WarpOpKind : uint8_t { kShuffle, kVote };

class BlockRunner;

/// One simulated thread of the running block.
struct SimThread {
  BlockRunner* runner = nullptr;
  uint32_t tid[3] = {};
  uint32_t linear = 0;
  // The rest is used in fiber mode only.
  fctx::fcontext_t context = nullptr;
  void* fake_stack = nullptr;
  ThreadState state = ThreadState::kRunnable;
  uint32_t barrier_site = 0;
  // The warp operation the thread waits in (kInWarpOp), then its outcome.
  WarpOpKind op_kind = WarpOpKind::kShuffle;
  uint32_t op_mode = 0;
  uint32_t op_mask = 0;
  uint32_t op_value = 0;
  uint32_t op_b = 0;
  uint32_t op_c = 0;
  uint32_t result = 0;
  uint32_t in_range = 0;
};

/// The simulated thread that the calling host thread runs; null outside a launch.
thread_local SimThread* t_current = nullptr;

/// What the race checker knows of one byte of shared memory. An epoch runs from one barrier of
/// the block to the next; numbers are never reused by a host thread, so a shadow left by an
/// earlier block or launch is stale by construction.
struct SharedShadow {
  uint32_t write_epoch = 0;
  uint32_t read_epoch = 0;
  /// The thread that wrote (read) the byte in write_epoch (read_epoch), or kSeveralThreads.
  uint16_t writer = 0;
  uint16_t reader = 0;
  /// Whether every write (read) of the epoch was atomic.
  bool writes_atomic = false;
  bool reads_atomic = false;
};

const char* shuffleModeName(uint32_t mode) {
  static const char* const kNames[] = {"idx", "up", "down", "bfly"};
  return mode < 4 ? kNames[mode] : "?";
}

const char* voteModeName(uint32_t mode) {
  static const char* const kNames[] = {"all", "any", "uni", "ballot"};
  return mode < 4 ? kNames[mode] : "?";
}

/// PTX shfl.sync: the lane that `lane` reads, given its operands `b` and `c`; `*in_range` is
/// PTX's predicate (false: the lane reads its own value).
uint32_t shuffleSourceLane(uint32_t mode, uint32_t lane, uint32_t b, uint32_t c, bool* in_range) {
  int32_t self = static_cast<int32_t>(lane);
  int32_t bval = static_cast<int32_t>(b & 0x1f);
  int32_t clamp = static_cast<int32_t>(c & 0x1f);
  int32_t segmask = static_cast<int32_t>((c >> 8) & 0x1f);
  int32_t max_lane = (self & segmask) | (clamp & ~segmask);
  int32_t min_lane = self & segmask;
  int32_t j = self;
  bool pval = false;
  switch (mode) {
    case KILN_SIM_SHFL_UP:
      j = self - bval;
      pval = j >= max_lane;
      break;
    case KILN_SIM_SHFL_DOWN:
      j = self + bval;
      pval = j <= max_lane;
      break;
    case KILN_SIM_SHFL_BFLY:
      j = self ^ bval;
      pval = j <= max_lane;
      break;
    default:  // KILN_SIM_SHFL_IDX
      j = min_lane | (bval & ~segmask);
      pval = j <= max_lane;
      break;
  }
  *in_range = pval;
  return static_cast<uint32_t>(pval ? j : self);
}

/// Runs blocks on one host thread; see the file comment.
class BlockRunner {
 public:
  /// Runs block `index` of `launch`; failures go to `launch.fail`.
  void run(Launch& launch, uint64_t index);

  // The runtime table's operations on the calling thread `t` of this runner's block.
  uint32_t specialRegister(SimThread& t, uint32_t which);
  void barrier(SimThread& t, uint32_t site);
  uint32_t warpOp(SimThread& t, WarpOpKind kind, uint32_t mode, uint32_t mask, uint32_t value,
                  uint32_t b, uint32_t c, uint32_t* in_range);
  void* sharedMemory() const { return shared_; }
  void* checkAccess(SimThread& t, void* address, uint64_t size, uint32_t flags, uint32_t site);
  void trap(SimThread& t, uint32_t site);

  /// Switches away from the fiber of `t`, which an operation stopped, for good. Its frames are
  /// dropped without being unwound: the caller must hold nothing that needs a destructor (the
  /// operations build their messages and return before the table's functions call this).
  [[noreturn]] void abandon(SimThread& t);

 private:
  static void fiberMain(fctx::transfer_t from);
  /// Runs the whole block in a plain loop on one fiber.
  void runLoop();
  void loopBody();
  /// Runs the threads of the block as fibers.
  void runFibers();
  /// Switches from the scheduler to `t`'s fiber until it yields, exits or stops.
  void resume(SimThread& t, size_t stack_index);
  /// Switches from `t`'s fiber back to the scheduler; `final` when it will never be resumed.
  void yield(SimThread& t, bool final);

  /// Records the block's first failure, for thread `t`, with the launch; `message()`, called
  /// for the first failure only, says what went wrong. Never throws: out of memory, the launch
  /// fails with RESOURCE_EXHAUSTED instead.
  template <typename Message>
  [[gnu::cold, gnu::noinline]] void fail(const SimThread& t, Message&& message) noexcept;
  /// fail(), and marks `t` stopped: the table's function that runs it then abandons it.
  template <typename Message>
  void stopThread(SimThread& t, Message&& message) noexcept {
    t.state = ThreadState::kStopped;
    fail(t, std::forward<Message>(message));
  }
  bool makeStacks(size_t count);
  std::string threadName(uint32_t linear) const;
  void setThread(SimThread& t, uint32_t linear) const;
  uint32_t nextEpoch();
  void shuffle(std::vector<uint32_t>& order);

  /// Handles `t` that just began to wait in a warp operation; releases its lanes when all have.
  void postWarpOp(SimThread& t);
  /// Releases the threads at the barrier, or fails when they are at different barriers.
  void releaseBarrier();
  /// Fails the block whose live threads all wait and cannot all be released.
  void diagnoseDeadlock();

  bool knownGlobal(uintptr_t address, uint64_t size) const;
  /// Updates the shadow of the bytes accessed; false (`t` stopped) on a race.
  bool checkRace(SimThread& t, size_t offset, uint64_t size, uint32_t flags, uint32_t site);

  // The failures of the table's operations, out of their hot paths; each stops `t`.
  [[gnu::cold, gnu::noinline]] void failAccess(SimThread& t, uintptr_t address, uint64_t size,
                                               uint32_t flags, uint32_t site, bool shared);
  [[gnu::cold, gnu::noinline]] void failRace(SimThread& t, size_t offset, uint16_t other,
                                             bool other_writes, uint32_t flags, uint32_t site);
  [[gnu::cold, gnu::noinline]] void failUnknownRegister(SimThread& t, uint32_t which);

  Launch* launch_ = nullptr;
  uint32_t ctaid_[3] = {};
  bool failed_ = false;
  bool check_races_ = false;

  // Shared memory: shared_bytes_ of shared_buffer_, and a shadow per byte.
  struct AlignedFree {
    void operator()(uint8_t* p) const {
      ::operator delete[](p, std::align_val_t{kSharedAlignment});
    }
  };
  std::unique_ptr<uint8_t[], AlignedFree> shared_buffer_;
  size_t shared_capacity_ = 0;
  uint8_t* shared_ = nullptr;
  size_t shared_bytes_ = 0;
  std::vector<SharedShadow> shadow_;
  uint32_t epoch_ = 0;
  uint32_t epoch_counter_ = 0;

  // Global allocations found during launch known_launch_id_.
  uint64_t known_launch_id_ = 0;
  uintptr_t known_begin_[kKnownAllocations] = {};
  uintptr_t known_end_[kKnownAllocations] = {};
  size_t known_next_ = 0;

  // Fibers.
  StackCache stacks_;
  fctx::fcontext_t scheduler_ = nullptr;
  const void* host_stack_bottom_ = nullptr;
  size_t host_stack_size_ = 0;
  SimThread loop_thread_;
  std::vector<SimThread> threads_;
  std::vector<uint32_t> order_;
  std::vector<uint32_t> round_;
  std::vector<uint32_t> runnable_;
  std::mt19937_64 rng_;
  size_t live_ = 0;
  size_t at_barrier_ = 0;
};

BlockRunner& hostRunner() {
  thread_local BlockRunner runner;
  return runner;
}

std::string BlockRunner::threadName(uint32_t linear) const {
  const uint32_t* block = launch_->block;
  uint32_t tid[3] = {linear % block[0], linear / block[0] % block[1],
                     linear / (block[0] * block[1])};
  return "thread " + dims(tid);
}

void BlockRunner::setThread(SimThread& t, uint32_t linear) const {
  const uint32_t* block = launch_->block;
  t.linear = linear;
  t.tid[0] = linear % block[0];
  t.tid[1] = linear / block[0] % block[1];
  t.tid[2] = linear / (block[0] * block[1]);
}

template <typename Message>
void BlockRunner::fail(const SimThread& t, Message&& message) noexcept {
  if (failed_) return;
  failed_ = true;
  try {
    launch_->fail(Status(KILN_STATUS_INTERNAL, "cuda-sim: kernel '" + launch_->kernel->name +
                                                   "' block " + dims(ctaid_) + " " +
                                                   threadName(t.linear) + ": " + message()));
  } catch (...) {
    launch_->failOutOfMemory();
  }
}

void BlockRunner::abandon(SimThread& t) {
  yield(t, /*final=*/true);
  std::abort();  // Never reached: a stopped fiber is not resumed.
}

uint32_t BlockRunner::nextEpoch() {
  if (++epoch_counter_ == 0) {
    std::fill(shadow_.begin(), shadow_.end(), SharedShadow{});
    epoch_counter_ = 1;
  }
  return epoch_counter_;
}

void BlockRunner::shuffle(std::vector<uint32_t>& order) {
  // Fisher-Yates with the generator's own numbers: the same order on every standard library.
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng_() % i]);
}

bool BlockRunner::makeStacks(size_t count) {
  if (stacks_.reserve(count, launch_->options->fiber_stack_bytes)) return true;
  launch_->fail(Status(KILN_STATUS_RESOURCE_EXHAUSTED,
                       "cuda-sim: kernel '" + launch_->kernel->name + "' block " + dims(ctaid_) +
                           ": cannot map " + std::to_string(count) + " fiber stacks of " +
                           std::to_string(launch_->options->fiber_stack_bytes) + " bytes"));
  failed_ = true;
  return false;
}

void BlockRunner::run(Launch& launch, uint64_t index) {
  launch_ = &launch;
  uint64_t grid_xy = uint64_t{launch.grid[0]} * launch.grid[1];
  ctaid_[0] = static_cast<uint32_t>(index % launch.grid[0]);
  ctaid_[1] = static_cast<uint32_t>(index / launch.grid[0] % launch.grid[1]);
  ctaid_[2] = static_cast<uint32_t>(index / grid_xy);
  failed_ = false;
  check_races_ = launch.options->check_races;
  if (launch.options->seed != 0) rng_.seed(launch.options->seed ^ index);
  if (known_launch_id_ != launch.id) {
    known_launch_id_ = launch.id;
    std::fill(std::begin(known_end_), std::end(known_end_), 0);
    std::fill(std::begin(known_begin_), std::end(known_begin_), 0);
  }

  // Fresh, poisoned shared memory (at least one byte, so that its address is a real one).
  shared_bytes_ = launch.kernel->info.shared_bytes;
  if (shared_capacity_ < std::max<size_t>(shared_bytes_, 1)) {
    size_t capacity = (std::max<size_t>(shared_bytes_, 1) + kSharedAlignment - 1) /
                      kSharedAlignment * kSharedAlignment;
    shared_buffer_.reset(
        static_cast<uint8_t*>(::operator new[](capacity, std::align_val_t{kSharedAlignment})));
    shared_capacity_ = capacity;
  }
  shared_ = shared_buffer_.get();
  std::memset(shared_, kSimPoisonByte, shared_bytes_);
  if (check_races_ && shadow_.size() < shared_bytes_) shadow_.resize(shared_bytes_);
  epoch_ = nextEpoch();

  if (launch.fibers) {
    runFibers();
  } else {
    runLoop();
  }
  t_current = nullptr;
}

void BlockRunner::fiberMain(fctx::transfer_t from) {
  BlockRunner* runner = static_cast<BlockRunner*>(from.data);
  runner->scheduler_ = from.fctx;
  sanitizerFinishSwitch(nullptr, &runner->host_stack_bottom_, &runner->host_stack_size_);
  SimThread& t = *t_current;
  if (runner->launch_->fibers) {
    runner->launch_->kernel->entry(runner->launch_->arguments);
  } else {
    runner->loopBody();
  }
  t.state = ThreadState::kExited;
  runner->yield(t, /*final=*/true);
  std::abort();  // Never reached: an exited fiber is not resumed.
}

void BlockRunner::resume(SimThread& t, size_t stack_index) {
  t_current = &t;
  void* fake_stack = nullptr;
  sanitizerStartSwitch(&fake_stack, stacks_.bottom(stack_index), stacks_.usableBytes());
  fctx::transfer_t back = fctx::jump_fcontext(t.context, this);
  sanitizerFinishSwitch(fake_stack, nullptr, nullptr);
  t.context = back.fctx;
}

void BlockRunner::yield(SimThread& t, bool final) {
  sanitizerStartSwitch(final ? nullptr : &t.fake_stack, host_stack_bottom_, host_stack_size_);
  fctx::transfer_t back = fctx::jump_fcontext(scheduler_, nullptr);
  sanitizerFinishSwitch(t.fake_stack, &host_stack_bottom_, &host_stack_size_);
  scheduler_ = back.fctx;
}

//===----------------------------------------------------------------------===//
// Plain loop
//===----------------------------------------------------------------------===//

void BlockRunner::runLoop() {
  if (!makeStacks(1)) return;
  sanitizerForgetStack(stacks_.bottom(0), stacks_.usableBytes());
  loop_thread_.runner = this;
  loop_thread_.state = ThreadState::kRunnable;
  loop_thread_.fake_stack = nullptr;
  loop_thread_.context = fctx::make_fcontext(stacks_.bottom(0) + stacks_.usableBytes(),
                                             stacks_.usableBytes(), &BlockRunner::fiberMain);
  resume(loop_thread_, 0);
}

void BlockRunner::loopBody() {
  const Launch& launch = *launch_;
  kiln_sim_kernel_fn entry = launch.kernel->entry;
  void** arguments = launch.arguments;
  SimThread& t = loop_thread_;
  uint32_t count = launch.block_threads;
  if (launch.options->seed != 0) {
    order_.resize(count);
    for (uint32_t i = 0; i < count; ++i) order_[i] = i;
    shuffle(order_);
    for (uint32_t linear : order_) {
      setThread(t, linear);
      entry(arguments);
    }
    return;
  }
  t.linear = 0;
  t.tid[0] = t.tid[1] = t.tid[2] = 0;
  for (uint32_t i = 0; i < count; ++i) {
    entry(arguments);
    // The next thread along x, then y, then z.
    ++t.linear;
    if (++t.tid[0] == launch.block[0]) {
      t.tid[0] = 0;
      if (++t.tid[1] == launch.block[1]) {
        t.tid[1] = 0;
        ++t.tid[2];
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Fibers
//===----------------------------------------------------------------------===//

void BlockRunner::runFibers() {
  uint32_t count = launch_->block_threads;
  if (!makeStacks(count)) return;
  threads_.resize(count);
  runnable_.clear();
  for (uint32_t i = 0; i < count; ++i) {
    SimThread& t = threads_[i];
    t = SimThread();
    t.runner = this;
    setThread(t, i);
    sanitizerForgetStack(stacks_.bottom(i), stacks_.usableBytes());
    t.context = fctx::make_fcontext(stacks_.bottom(i) + stacks_.usableBytes(),
                                    stacks_.usableBytes(), &BlockRunner::fiberMain);
    runnable_.push_back(i);
  }
  live_ = count;
  at_barrier_ = 0;
  bool shuffled = launch_->options->seed != 0;

  while (!failed_) {
    if (runnable_.empty()) {
      if (live_ == 0) break;
      if (at_barrier_ == live_) {
        releaseBarrier();
      } else {
        diagnoseDeadlock();
      }
      continue;
    }
    // One round: every thread runnable now runs to its next synchronization point; those it
    // releases run in the next round.
    round_.swap(runnable_);
    runnable_.clear();
    if (shuffled) shuffle(round_);
    for (uint32_t i : round_) {
      if (failed_) break;
      SimThread& t = threads_[i];
      resume(t, i);
      switch (t.state) {
        case ThreadState::kExited:
          --live_;
          break;
        case ThreadState::kAtBarrier:
          ++at_barrier_;
          break;
        case ThreadState::kInWarpOp:
          postWarpOp(t);
          break;
        case ThreadState::kRunnable:
          runnable_.push_back(i);
          break;
        case ThreadState::kStopped:
          break;
      }
    }
  }
  // Threads still waiting are dropped: their stacks are remade by the next block.
}

void BlockRunner::releaseBarrier() {
  uint32_t site = 0;
  const SimThread* first = nullptr;
  const SimThread* other = nullptr;
  for (const SimThread& t : threads_) {
    if (t.state != ThreadState::kAtBarrier) continue;
    if (first == nullptr) {
      first = &t;
      site = t.barrier_site;
    } else if (t.barrier_site != site && other == nullptr) {
      other = &t;
    }
  }
  if (other != nullptr) {
    // "threads 0-31 at barrier 1, threads 32-63 at barrier 2", by linear index.
    std::string ranges;
    size_t listed = 0;
    for (size_t i = 0; i < threads_.size();) {
      if (threads_[i].state != ThreadState::kAtBarrier) {
        ++i;
        continue;
      }
      size_t end = i + 1;
      while (end < threads_.size() && threads_[end].state == ThreadState::kAtBarrier &&
             threads_[end].barrier_site == threads_[i].barrier_site) {
        ++end;
      }
      if (listed++ == kMaxListedRanges) {
        ranges += ", ...";
        break;
      }
      if (!ranges.empty()) ranges += ", ";
      ranges += end - i == 1 ? "thread " + std::to_string(i)
                             : "threads " + std::to_string(i) + "-" + std::to_string(end - 1);
      ranges += " at barrier " + std::to_string(threads_[i].barrier_site);
      i = end;
    }
    fail(*other, [&] {
      return "threads of block " + dims(ctaid_) + " reached different barriers: " + ranges;
    });
    return;
  }
  epoch_ = nextEpoch();
  for (uint32_t i = 0; i < threads_.size(); ++i) {
    if (threads_[i].state != ThreadState::kAtBarrier) continue;
    threads_[i].state = ThreadState::kRunnable;
    runnable_.push_back(i);
  }
  at_barrier_ = 0;
}

std::string warpOpName(const SimThread& t) {
  std::string name = t.op_kind == WarpOpKind::kShuffle
                         ? std::string("shfl.sync.") + shuffleModeName(t.op_mode)
                         : std::string("vote.sync.") + voteModeName(t.op_mode);
  return name + " with member mask " + hex(t.op_mask);
}

void BlockRunner::postWarpOp(SimThread& t) {
  uint32_t lane = t.linear % kWarpSize;
  uint32_t warp_base = t.linear - lane;
  uint32_t mask = t.op_mask;
  if ((mask >> lane & 1) == 0) {
    fail(t, [&] {
      return warpOpName(t) + " from lane " + std::to_string(lane) + ", which is not in its mask";
    });
    return;
  }
  uint32_t warp_lanes = std::min<uint32_t>(kWarpSize, launch_->block_threads - warp_base);
  if (warp_lanes < kWarpSize && (mask >> warp_lanes) != 0) {
    fail(t, [&] {
      return warpOpName(t) + ": the warp has only " + std::to_string(warp_lanes) + " lanes";
    });
    return;
  }
  // Lanes that wait in a warp operation with this one or whose mask names this lane must be in
  // the same operation with the same mask.
  bool complete = true;
  for (uint32_t l = 0; l < warp_lanes; ++l) {
    const SimThread& other = threads_[warp_base + l];
    bool waiting = other.state == ThreadState::kInWarpOp;
    bool related = (mask >> l & 1) != 0 || (waiting && (other.op_mask >> lane & 1) != 0);
    if (!related || l == lane) continue;
    if (!waiting) {
      complete = false;
      continue;
    }
    if (other.op_kind != t.op_kind || other.op_mode != t.op_mode || other.op_mask != mask) {
      fail(t, [&] {
        return "lanes of a warp disagree: lane " + std::to_string(lane) + " executes " +
               warpOpName(t) + " while lane " + std::to_string(l) + " waits in " +
               warpOpName(other);
      });
      return;
    }
  }
  if (!complete) return;

  // Every lane of the mask is here: compute each lane's result from the others' operands.
  if (t.op_kind == WarpOpKind::kShuffle) {
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      if ((mask >> l & 1) == 0) continue;
      SimThread& reader = threads_[warp_base + l];
      bool in_range = false;
      uint32_t source = shuffleSourceLane(reader.op_mode, l, reader.op_b, reader.op_c, &in_range);
      if ((mask >> source & 1) == 0) {
        fail(reader, [&] {
          return warpOpName(reader) + " reads lane " + std::to_string(source) +
                 ", which is not in the mask (b=" + std::to_string(reader.op_b) +
                 ", c=" + hex(reader.op_c) + ")";
        });
        return;
      }
      reader.result = threads_[warp_base + source].op_value;
      reader.in_range = in_range ? 1 : 0;
    }
  } else {
    uint32_t ballot = 0;
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      if ((mask >> l & 1) != 0 && threads_[warp_base + l].op_value != 0) ballot |= 1u << l;
    }
    uint32_t result = 0;
    switch (t.op_mode) {
      case KILN_SIM_VOTE_ALL:
        result = ballot == mask;
        break;
      case KILN_SIM_VOTE_ANY:
        result = ballot != 0;
        break;
      case KILN_SIM_VOTE_UNI:
        result = ballot == 0 || ballot == mask;
        break;
      default:  // KILN_SIM_VOTE_BALLOT
        result = ballot;
        break;
    }
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      if ((mask >> l & 1) != 0) threads_[warp_base + l].result = result;
    }
  }
  for (uint32_t l = 0; l < kWarpSize; ++l) {
    if ((mask >> l & 1) == 0) continue;
    threads_[warp_base + l].state = ThreadState::kRunnable;
    runnable_.push_back(warp_base + l);
  }
}

void BlockRunner::diagnoseDeadlock() {
  for (const SimThread& t : threads_) {
    if (t.state != ThreadState::kInWarpOp) continue;
    uint32_t lane = t.linear % kWarpSize;
    uint32_t warp_base = t.linear - lane;
    for (uint32_t l = 0; l < kWarpSize; ++l) {
      if ((t.op_mask >> l & 1) == 0) continue;
      const SimThread& missing = threads_[warp_base + l];
      if (missing.state == ThreadState::kInWarpOp) continue;
      std::string where = missing.state == ThreadState::kExited ? "which has exited"
                          : missing.state == ThreadState::kAtBarrier
                              ? "which waits at barrier " + std::to_string(missing.barrier_site)
                              : "which cannot run";
      fail(t, [&] {
        return "deadlock: " + warpOpName(t) + " waits for lane " + std::to_string(l) + " (" +
               threadName(missing.linear) + "), " + where;
      });
      return;
    }
  }
  // Not reached: a warp operation whose lanes all wait is released when the last one arrives.
  fail(threads_.front(), [&] { return "deadlock: no thread of the block can run"; });
}

//===----------------------------------------------------------------------===//
// The runtime table's operations
//===----------------------------------------------------------------------===//

uint32_t BlockRunner::specialRegister(SimThread& t, uint32_t which) {
  switch (which) {
    case KILN_SIM_TID_X:
    case KILN_SIM_TID_Y:
    case KILN_SIM_TID_Z:
      return t.tid[which - KILN_SIM_TID_X];
    case KILN_SIM_NTID_X:
    case KILN_SIM_NTID_Y:
    case KILN_SIM_NTID_Z:
      return launch_->block[which - KILN_SIM_NTID_X];
    case KILN_SIM_CTAID_X:
    case KILN_SIM_CTAID_Y:
    case KILN_SIM_CTAID_Z:
      return ctaid_[which - KILN_SIM_CTAID_X];
    case KILN_SIM_NCTAID_X:
    case KILN_SIM_NCTAID_Y:
    case KILN_SIM_NCTAID_Z:
      return launch_->grid[which - KILN_SIM_NCTAID_X];
    case KILN_SIM_LANEID:
      return t.linear % kWarpSize;
    case KILN_SIM_WARPSIZE:
      return kWarpSize;
    default:
      failUnknownRegister(t, which);
      return 0;
  }
}

void BlockRunner::barrier(SimThread& t, uint32_t site) {
  if (!launch_->fibers) {
    stopThread(t, [&] {
      return "bar.sync (barrier " + std::to_string(site) +
             ") in a kernel whose info has neither KILN_SIM_KERNEL_BARRIERS nor "
             "KILN_SIM_KERNEL_WARP_SYNC, so that its threads run one after the other";
    });
    return;
  }
  t.barrier_site = site;
  t.state = ThreadState::kAtBarrier;
  yield(t, /*final=*/false);
}

uint32_t BlockRunner::warpOp(SimThread& t, WarpOpKind kind, uint32_t mode, uint32_t mask,
                             uint32_t value, uint32_t b, uint32_t c, uint32_t* in_range) {
  const char* name = kind == WarpOpKind::kShuffle ? "shfl.sync" : "vote.sync";
  if (!launch_->fibers) {
    stopThread(t, [&] {
      return std::string(name) +
             " in a kernel whose info has neither KILN_SIM_KERNEL_WARP_SYNC nor "
             "KILN_SIM_KERNEL_BARRIERS, so that its threads run one after the other";
    });
    return 0;
  }
  if (mode > 3) {
    stopThread(t, [&] { return std::string(name) + " with unknown mode " + std::to_string(mode); });
    return 0;
  }
  t.op_kind = kind;
  t.op_mode = mode;
  t.op_mask = mask;
  t.op_value = value;
  t.op_b = b;
  t.op_c = c;
  t.state = ThreadState::kInWarpOp;
  yield(t, /*final=*/false);
  if (in_range != nullptr) *in_range = t.in_range;
  return t.result;
}

bool BlockRunner::knownGlobal(uintptr_t address, uint64_t size) const {
  for (size_t i = 0; i < kKnownAllocations; ++i) {
    if (address >= known_begin_[i] && address < known_end_[i] && size <= known_end_[i] - address) {
      return true;
    }
  }
  return false;
}

void BlockRunner::failUnknownRegister(SimThread& t, uint32_t which) {
  stopThread(t, [&] { return "unknown special register " + std::to_string(which); });
}

void BlockRunner::failAccess(SimThread& t, uintptr_t address, uint64_t size, uint32_t flags,
                             uint32_t site, bool shared) {
  stopThread(t, [&] {
    const char* kind = (flags & KILN_SIM_ACCESS_ATOMIC) != 0  ? "atomic"
                       : (flags & KILN_SIM_ACCESS_WRITE) != 0 ? "store"
                                                              : "load";
    std::string why = std::string("outside ") + launch_->options->memory_description;
    if (shared) {
      int64_t offset = static_cast<int64_t>(address - reinterpret_cast<uintptr_t>(shared_));
      why = "outside the block's " + std::to_string(shared_bytes_) +
            " bytes of shared memory (at offset " + std::to_string(offset) + ")";
    }
    return std::string("out-of-bounds ") + kind + " of " + std::to_string(size) + " bytes at " +
           hex(address) + " (site " + std::to_string(site) + "): " + why;
  });
}

void BlockRunner::failRace(SimThread& t, size_t offset, uint16_t other, bool other_writes,
                           uint32_t flags, uint32_t site) {
  stopThread(t, [&] {
    std::string mine = (flags & KILN_SIM_ACCESS_ATOMIC) != 0  ? "an atomic"
                       : (flags & KILN_SIM_ACCESS_WRITE) != 0 ? "a store"
                                                              : "a load";
    std::string theirs =
        other == kSeveralThreads
            ? (other_writes ? "stores" : "loads") + std::string(" of several threads")
            : std::string(other_writes ? "a store" : "a load") + " of " + threadName(other);
    return "race on shared memory at byte offset " + std::to_string(offset) + ": " + mine +
           " of this thread (site " + std::to_string(site) + ") and " + theirs +
           " with no barrier between";
  });
}

void* BlockRunner::checkAccess(SimThread& t, void* address, uint64_t size, uint32_t flags,
                               uint32_t site) {
  uintptr_t begin = reinterpret_cast<uintptr_t>(address);
  uintptr_t shared = reinterpret_cast<uintptr_t>(shared_);
  uintptr_t offset = begin - shared;  // Wraps around below the shared memory.
  if ((flags & KILN_SIM_ACCESS_SHARED) != 0 || offset < shared_bytes_) {
    if (begin < shared || offset > shared_bytes_ || size > shared_bytes_ - offset) {
      failAccess(t, begin, size, flags, site, /*shared=*/true);
      return nullptr;
    }
    if (check_races_ && !checkRace(t, offset, size, flags, site)) return nullptr;
    return address;
  }
  if (knownGlobal(begin, size)) return address;
  uintptr_t base;
  size_t bytes;
  if (!launch_->memory->find(address, size, &base, &bytes)) {
    failAccess(t, begin, size, flags, site, /*shared=*/false);
    return nullptr;
  }
  known_begin_[known_next_] = base;
  known_end_[known_next_] = base + bytes;
  known_next_ = (known_next_ + 1) % kKnownAllocations;
  return address;
}

bool BlockRunner::checkRace(SimThread& t, size_t offset, uint64_t size, uint32_t flags,
                            uint32_t site) {
  bool write = (flags & KILN_SIM_ACCESS_WRITE) != 0;
  bool atomic = (flags & KILN_SIM_ACCESS_ATOMIC) != 0;
  uint16_t self = static_cast<uint16_t>(t.linear);
  for (size_t i = offset; i < offset + size; ++i) {
    SharedShadow& s = shadow_[i];
    uint16_t other = self;
    bool other_writes = false;
    if (s.write_epoch == epoch_ && s.writer != self && !(atomic && s.writes_atomic)) {
      other = s.writer;
      other_writes = true;
    } else if (write && s.read_epoch == epoch_ && s.reader != self && !(atomic && s.reads_atomic)) {
      other = s.reader;
    }
    if (other != self) {
      failRace(t, i, other, other_writes, flags, site);
      return false;
    }
    if (write) {
      if (s.write_epoch != epoch_) {
        s.write_epoch = epoch_;
        s.writer = self;
        s.writes_atomic = atomic;
      } else {
        if (s.writer != self) s.writer = kSeveralThreads;
        s.writes_atomic = s.writes_atomic && atomic;
      }
    } else if (s.read_epoch != epoch_) {
      s.read_epoch = epoch_;
      s.reader = self;
      s.reads_atomic = atomic;
    } else {
      if (s.reader != self) s.reader = kSeveralThreads;
      s.reads_atomic = s.reads_atomic && atomic;
    }
  }
  return true;
}

void BlockRunner::trap(SimThread& t, uint32_t site) {
  stopThread(t, [&] { return "trap (site " + std::to_string(site) + ")"; });
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

/// Where check_access points an access made outside a launch.
void* scratchArea(uint64_t size) {
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < std::max<uint64_t>(size, 256)) scratch.resize(std::max<uint64_t>(size, 256));
  std::memset(scratch.data(), kSimPoisonByte, scratch.size());
  return scratch.data();
}

/// Leaves the fiber of `t` for good when the operation it just made stopped it. The table's
/// functions call this with no object alive that needs a destructor.
inline void abandonIfStopped(SimThread* t) {
  if (t->state == ThreadState::kStopped) t->runner->abandon(*t);
}

uint32_t simSpecialRegister(uint32_t which) {
  SimThread* t = t_current;
  if (t == nullptr) return 0;
  uint32_t value = t->runner->specialRegister(*t, which);
  abandonIfStopped(t);
  return value;
}

void simBarrier(uint32_t site) {
  SimThread* t = t_current;
  if (t == nullptr) return;
  t->runner->barrier(*t, site);
  abandonIfStopped(t);
}

uint32_t simShflSync(uint32_t mode, uint32_t member_mask, uint32_t value, uint32_t b, uint32_t c,
                     uint32_t* in_range) {
  SimThread* t = t_current;
  if (t == nullptr) {
    if (in_range != nullptr) *in_range = 0;
    return value;
  }
  uint32_t result =
      t->runner->warpOp(*t, WarpOpKind::kShuffle, mode, member_mask, value, b, c, in_range);
  abandonIfStopped(t);
  return result;
}

uint32_t simVoteSync(uint32_t mode, uint32_t member_mask, uint32_t predicate) {
  SimThread* t = t_current;
  if (t == nullptr) return 0;
  uint32_t result =
      t->runner->warpOp(*t, WarpOpKind::kVote, mode, member_mask, predicate != 0, 0, 0, nullptr);
  abandonIfStopped(t);
  return result;
}

void* simSharedMemory() {
  SimThread* t = t_current;
  return t != nullptr ? t->runner->sharedMemory() : nullptr;
}

void* simCheckAccess(void* address, uint64_t size, uint32_t flags, uint32_t site) {
  SimThread* t = t_current;
  if (t == nullptr) return scratchArea(size);
  void* result = t->runner->checkAccess(*t, address, size, flags, site);
  abandonIfStopped(t);
  return result;
}

void simTrap(uint32_t site) {
  SimThread* t = t_current;
  if (t == nullptr) return;
  t->runner->trap(*t, site);
  abandonIfStopped(t);
}

const kiln_sim_runtime_t kRuntimeTable = {
    KILN_SIM_ABI_VERSION,
    sizeof(kiln_sim_runtime_t),
    &simSpecialRegister,
    &simBarrier,
    &simShflSync,
    &simVoteSync,
    &simSharedMemory,
    &simCheckAccess,
    &simTrap,
};

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

unsigned hardwareThreads() {
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : hardware;
}

/// The host threads of every launch of the process.
cpu::ThreadPool& blockPool() {
  static cpu::ThreadPool pool(hardwareThreads());
  return pool;
}

uint64_t gcd(uint64_t a, uint64_t b) {
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}

Status validateLaunch(const SimKernel& kernel, const uint32_t grid[3], const uint32_t block[3]) {
  auto invalid = [&](const std::string& what) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, "cuda-sim: kernel '" + kernel.name + "': " + what);
  };
  if (kernel.entry == nullptr) return invalid("no entry point");
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return invalid("empty grid " + dims(grid));
  if (block[0] == 0 || block[1] == 0 || block[2] == 0) return invalid("empty block " + dims(block));
  uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
  if (threads > kMaxBlockThreads || block[0] > 1024 || block[1] > 1024 || block[2] > 64) {
    return invalid("block " + dims(block) + " has " + std::to_string(threads) +
                   " threads; CUDA allows at most 1024, and (1024,1024,64) in each dimension");
  }
  if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535) {
    return invalid("grid " + dims(grid) + " is over CUDA's (2147483647,65535,65535)");
  }
  return Status();
}

__extension__ typedef unsigned __int128 Uint128;

/// Runs blocks of `launch` on the calling host thread until none is left or the launch failed.
void runBlocks(Launch& launch) {
  BlockRunner& runner = hostRunner();
  try {
    while (!launch.failed.load(std::memory_order_relaxed)) {
      uint64_t i = launch.next_block.fetch_add(1, std::memory_order_relaxed);
      if (i >= launch.block_count) break;
      uint64_t index = static_cast<uint64_t>(
          (static_cast<Uint128>(launch.order_multiplier) * i + launch.order_offset) %
          launch.block_count);
      runner.run(launch, index);
    }
  } catch (const std::bad_alloc&) {
    t_current = nullptr;
    launch.failOutOfMemory();
  }
}

}  // namespace

const kiln_sim_runtime_t* simRuntimeTable() { return &kRuntimeTable; }

Status launchSimKernel(const SimKernel& kernel, const uint32_t grid[3], const uint32_t block[3],
                       void** arguments, const SimMemory& memory, const SimLaunchOptions& options) {
  if (Status status = validateLaunch(kernel, grid, block); !status.ok()) return status;
  Launch launch;
  launch.kernel = &kernel;
  std::copy(grid, grid + 3, launch.grid);
  std::copy(block, block + 3, launch.block);
  launch.block_threads = block[0] * block[1] * block[2];
  launch.block_count = uint64_t{grid[0]} * grid[1] * grid[2];
  launch.arguments = arguments;
  launch.memory = &memory;
  launch.options = &options;
  launch.fibers = (kernel.info.flags & (KILN_SIM_KERNEL_BARRIERS | KILN_SIM_KERNEL_WARP_SYNC)) != 0;
  launch.id = g_next_launch_id.fetch_add(1, std::memory_order_relaxed);
  if (options.seed != 0 && launch.block_count > 1) {
    // A permutation of the blocks: i -> (a * i + b) mod n with a coprime to n.
    std::mt19937_64 rng(options.seed);
    uint64_t a = rng() % launch.block_count;
    while (gcd(a, launch.block_count) != 1) a = (a + 1) % launch.block_count;
    launch.order_multiplier = a;
    launch.order_offset = rng() % launch.block_count;
  }

  uint64_t host_threads = options.host_threads != 0 ? options.host_threads : hardwareThreads();
  host_threads = std::min<uint64_t>(host_threads, launch.block_count);
  if (host_threads <= 1) {
    runBlocks(launch);
  } else {
    cpu::ThreadPool& pool = blockPool();
    host_threads = std::min<uint64_t>(host_threads, pool.threadCount());
    pool.parallelFor(host_threads, [&launch](size_t) { runBlocks(launch); });
  }
  std::lock_guard<std::mutex> lock(launch.error_mutex);
  if (launch.error.ok() && launch.out_of_memory.load(std::memory_order_relaxed)) {
    return Status(KILN_STATUS_RESOURCE_EXHAUSTED,
                  "cuda-sim: kernel '" + kernel.name + "': out of host memory");
  }
  return launch.error;
}

}  // namespace kiln::runtime::cuda::sim
