//===- sim_executor.h - Running retargeted CUDA kernels on the CPU -*- C++ -*-===//
//
// The block executor of the simulated CUDA device: it runs a grid of a retargeted kernel (see
// sim_abi.h) with CUDA's semantics. Blocks are independent and run on host threads; the threads
// of a block run one after the other in a plain loop, or, when the kernel synchronizes
// (bar.sync, shfl.sync, vote.sync), as fibers on one host thread that switch at each
// synchronization point. Warps are 32 threads, numbered along x, then y, then z.
//
// Checkers, each failing the launch with a status that names the kernel, the block and the
// thread: threads of a block reaching different barriers (or a barrier some threads of the warp
// never reach in a shuffle); loads and stores outside every allocation of the device (SimMemory)
// and outside the block's shared memory; races on shared memory (two threads, at least one
// writing, no barrier between, not both atomic); and, with a seed, a shuffled order of the
// threads between synchronization points so that a kernel relying on an order shows it. Shared
// memory starts poisoned with a NaN pattern (kSimPoisonByte), as does device memory.
//
// Stricter than the hardware: a shfl.sync or vote.sync whose member mask names a lane that has
// exited (or does not exist) fails, as does one that reads a lane outside its mask, or lanes of
// one warp that wait in different warp operations or with different masks.
//
// How a failure stops a kernel: every thread, in a plain loop or not, runs on a fiber stack (the
// loop on one fiber for the whole block), so the thread that traps or makes a bad access
// (`trap`, `check_access`) is switched away from and never resumed: those calls do not return.
// Its block stops there; its fibers are dropped without unwinding their frames (generated code
// may lack unwind tables) and their stacks are reused. Blocks not yet started are skipped.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_SIM_SIM_EXECUTOR_H_
#define KILN_RUNTIME_SRC_CUDA_SIM_SIM_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <string>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/src/cuda/sim/sim_abi.h"

namespace kiln::runtime::cuda::sim {

/// Every byte of fresh device and shared memory: 0xFF bytes read as a NaN in f32, f16, bf16 and
/// f64, so that a result computed from memory nobody wrote shows up.
inline constexpr uint8_t kSimPoisonByte = 0xFF;

/// The allocations of a simulated device; global accesses of kernels are checked against them.
/// Thread-safe. An allocation that a running launch uses must stay until the launch returns
/// (the executor remembers the allocations each host thread has found during a launch).
class SimMemory {
 public:
  /// Registers [base, base + size).
  void add(const void* base, size_t size);
  /// Forgets the allocation that starts at `base`; false when there is none.
  bool remove(const void* base);
  /// Whether [address, address + size) lies inside one allocation.
  bool contains(const void* address, size_t size) const;
  /// The allocation [*base, *base + *bytes) that holds [address, address + size); false when
  /// none does.
  bool find(const void* address, size_t size, uintptr_t* base, size_t* bytes) const;
  /// The base of every allocation.
  std::vector<const void*> bases() const;

 private:
  mutable std::shared_mutex mutex_;
  /// Base address -> size.
  std::map<uintptr_t, size_t> allocations_;
};

/// One kernel of a loaded code object.
struct SimKernel {
  std::string name;
  kiln_sim_kernel_fn entry = nullptr;
  kiln_sim_kernel_info_t info{};
};

struct SimLaunchOptions {
  /// What the SimMemory of the launch holds, for messages ("outside <it>").
  const char* memory_description = "every allocation of the device";
  /// 0 runs the threads of a block in order; otherwise the seed of the order in which threads
  /// run between synchronization points (and blocks are started).
  uint64_t seed = 0;
  /// Whether shared-memory accesses are checked for races.
  bool check_races = true;
  /// The stack of each fiber (at least 16 KiB are used, in whole pages, under a guard page).
  size_t fiber_stack_bytes = 128 * 1024;
  /// Host threads that run blocks; 0 for the hardware's concurrency. They come from one pool
  /// of the process with as many threads as the hardware has, which bounds the concurrency.
  unsigned host_threads = 0;
};

/// The table to store into a code object's `kiln_sim_runtime` variable. Its functions act on
/// the simulated thread that the calling host thread runs; outside a launch they do nothing
/// (check_access then returns a scratch area).
const kiln_sim_runtime_t* simRuntimeTable();

/// Runs `kernel` over `grid` x `block` with cudaLaunchKernel's `arguments` and waits for it.
/// INVALID_ARGUMENT for an empty grid or block or a block over 1024 threads; INTERNAL naming
/// the kernel, block, thread and what went wrong when a checker trips or the kernel traps
/// (only the first failure is reported); RESOURCE_EXHAUSTED when fiber stacks cannot be mapped.
/// Thread-safe: several launches may run at once.
Status launchSimKernel(const SimKernel& kernel, const uint32_t grid[3], const uint32_t block[3],
                       void** arguments, const SimMemory& memory, const SimLaunchOptions& options);

}  // namespace kiln::runtime::cuda::sim

#endif  // KILN_RUNTIME_SRC_CUDA_SIM_SIM_EXECUTOR_H_
