//===- sim_abi.h - How retargeted CUDA kernels talk to the simulator -*- C -*-===//
//
// The simulated CUDA device (`--device cuda-sim`) runs the very kernels Kiln generates for a GPU:
// the NVVM-lowered gpu.module is retargeted to the host
// (compiler/codegen/sim/CudaSimObject.cpp) and stored in the artifact as an ELF shared object
// whose code object target is "cuda-sim". In it,
// everything that is a GPU instruction becomes a call through a table of functions that the
// simulator provides when it loads the object:
//
//   - the object defines `const kiln_sim_runtime_t* kiln_sim_runtime`, which the loader sets to
//     the simulator's table before any launch;
//   - every kernel `K` of the code object is exported as `void K(void** arguments)`, taking
//     cudaLaunchKernel's argument array (one pointer to each parameter's value);
//   - with it, `const kiln_sim_kernel_info_t kiln_sim_info_K` says what the kernel needs.
//
// Special registers (%tid, %ntid, %ctaid, %nctaid, %laneid, WARP_SZ), bar.sync, shfl.sync and
// vote.sync become `special_register`, `barrier`, `shfl_sync` and `vote_sync`; shared memory
// (address space 3) is `shared_memory()` plus the variable's offset; every load, store and atomic
// through a pointer is checked by `check_access` first. Atomics stay host atomics.
// Every other NVVM intrinsic is either rewritten to exact host IR or refused at compile time.
//
// The header is valid C99 and C++; the compiler builds the same layout in LLVM IR, so a field
// is never reordered: new fields go last and raise `version`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_SIM_SIM_ABI_H_
#define KILN_RUNTIME_SRC_CUDA_SIM_SIM_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_SIM_ABI_VERSION 1

/// `special_register`'s argument.
enum {
  KILN_SIM_TID_X = 0,
  KILN_SIM_TID_Y = 1,
  KILN_SIM_TID_Z = 2,
  KILN_SIM_NTID_X = 3,
  KILN_SIM_NTID_Y = 4,
  KILN_SIM_NTID_Z = 5,
  KILN_SIM_CTAID_X = 6,
  KILN_SIM_CTAID_Y = 7,
  KILN_SIM_CTAID_Z = 8,
  KILN_SIM_NCTAID_X = 9,
  KILN_SIM_NCTAID_Y = 10,
  KILN_SIM_NCTAID_Z = 11,
  KILN_SIM_LANEID = 12,
  KILN_SIM_WARPSIZE = 13,
};

/// `shfl_sync`'s mode (PTX shfl.sync.{idx,up,down,bfly}).
enum {
  KILN_SIM_SHFL_IDX = 0,
  KILN_SIM_SHFL_UP = 1,
  KILN_SIM_SHFL_DOWN = 2,
  KILN_SIM_SHFL_BFLY = 3,
};

/// `vote_sync`'s mode (PTX vote.sync.{all,any,uni,ballot}).
enum {
  KILN_SIM_VOTE_ALL = 0,
  KILN_SIM_VOTE_ANY = 1,
  KILN_SIM_VOTE_UNI = 2,
  KILN_SIM_VOTE_BALLOT = 3,
};

/// `check_access`'s flags.
enum {
  /// The access writes (a store, or an atomic).
  KILN_SIM_ACCESS_WRITE = 1,
  /// The pointer is in the shared address space (3); otherwise global or generic.
  KILN_SIM_ACCESS_SHARED = 2,
  /// An atomic read-modify-write or compare-exchange (never a race with another atomic).
  KILN_SIM_ACCESS_ATOMIC = 4,
};

/// `kiln_sim_kernel_info_t.flags`.
enum {
  /// The kernel (or a function it calls) executes bar.sync or traps: its threads run as fibers
  /// (a trapping thread is never resumed).
  KILN_SIM_KERNEL_BARRIERS = 1,
  /// The kernel executes shfl.sync or vote.sync: its threads run as fibers.
  KILN_SIM_KERNEL_WARP_SYNC = 2,
};

typedef struct kiln_sim_runtime {
  /// KILN_SIM_ABI_VERSION, and sizeof(kiln_sim_runtime_t).
  uint32_t version;
  uint32_t size;
  /// The value of a special register of the calling thread (KILN_SIM_TID_X, ...).
  uint32_t (*special_register)(uint32_t which);
  /// bar.sync 0 (__syncthreads). `site` numbers the barrier within its code object, so that
  /// threads reaching different barriers are told apart.
  void (*barrier)(uint32_t site);
  /// shfl.sync with PTX's operands: `b` is the source lane, delta or lane mask, `c` packs the
  /// segment mask (bits 8-12) and the clamp (bits 0-4). Returns the value read and stores into
  /// `*in_range` whether the source lane was in range (PTX's predicate).
  uint32_t (*shfl_sync)(uint32_t mode, uint32_t member_mask, uint32_t value, uint32_t b, uint32_t c,
                        uint32_t* in_range);
  /// vote.sync: all/any/uni return 0 or 1; ballot the mask of lanes whose predicate is true.
  uint32_t (*vote_sync)(uint32_t mode, uint32_t member_mask, uint32_t predicate);
  /// The calling block's shared memory (static variables, at the offsets the compiler chose).
  void* (*shared_memory)(void);
  /// Called before every load, store and atomic of `size` bytes at `address`; returns the
  /// address the access uses, `address` itself. An access outside every device allocation (or
  /// outside the block's shared memory) never returns: the error is recorded for the launch
  /// and the thread stops there (a kernel that went on could loop on the poison it would read).
  void* (*check_access)(void* address, uint64_t size, uint32_t flags, uint32_t site);
  /// A trap (llvm.trap, PTX trap): the launch fails naming the kernel and `site`.
  void (*trap)(uint32_t site);
} kiln_sim_runtime_t;

typedef struct kiln_sim_kernel_info {
  /// KILN_SIM_KERNEL_* bits.
  uint32_t flags;
  /// Bytes of static shared memory (its variables laid out from offset 0).
  uint32_t shared_bytes;
  /// The entries of `arguments`: every parameter of a Kiln kernel is a pointer (a binding).
  uint32_t parameter_count;
} kiln_sim_kernel_info_t;

/// The type of an exported kernel entry.
typedef void (*kiln_sim_kernel_fn)(void** arguments);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_RUNTIME_SRC_CUDA_SIM_SIM_ABI_H_
