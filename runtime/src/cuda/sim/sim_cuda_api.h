//===- sim_cuda_api.h - The simulated CUDA device behind CudaApi -*- C++ -*-===//
//
// `--device cuda-sim`: CudaApi implemented on the CPU with CUDA's semantics and CUDA's rules, so
// that CudaProgram, unchanged, runs a `--target cuda` artifact compiled with `--gpu-arch
// ...,cuda-sim` and CI executes the CUDA device's host code without a GPU.
//
//   - Device memory is host memory registered with the kernels' access checker (SimMemory),
//     allocated 256-byte aligned and poisoned with NaN bytes (kSimPoisonByte), so that a result
//     computed from memory nobody wrote shows up.
//   - Streams queue their work; it runs when the stream is synchronized (or destroyed), in
//     order. Work therefore happens later than the call that enqueued it, as on a GPU: a host
//     that reads a result before synchronizing reads poison.
//   - Kernels are the artifact's "cuda-sim" code object, loaded like a CPU code object and run by
//     the block executor (sim_executor.h); library calls run the CPU references
//     (library_reference.h) from the same problem structs cuBLASLt and cuDNN get.
//   - CUDA's rules are enforced where a GPU would fail: no allocation, free or synchronization on
//     a thread while it captures a stream (the capture is invalidated, as cudaStreamEndCapture
//     reports); asynchronous copies to or from host memory need pinned memory (cudaHostAlloc);
//     copies and memsets must stay inside device allocations; launches need a grid and at most
//     1024 threads per block.
//
// KILN_CUDA_SIM_SEED=N (N != 0) shuffles the order in which the threads of a block run.
//
// The simulator is the library kiln_cuda_sim (this folder's CMakeLists.txt), outside the runtime;
// registerSimulatedCuda() (register_simulated_cuda.h) installs createSimCudaApi in it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_SIM_SIM_CUDA_API_H_
#define KILN_RUNTIME_SRC_CUDA_SIM_SIM_CUDA_API_H_

#include <memory>

#include "runtime/src/cuda/cuda_api.h"

namespace kiln::runtime::cuda::sim {

/// The environment variable that seeds the order of threads (0 or unset: in order).
inline constexpr const char* kSimSeedEnvironmentVariable = "KILN_CUDA_SIM_SEED";

/// A simulated CUDA device (one, ordinal 0, reported as compute capability 8.0).
std::unique_ptr<CudaApi> createSimCudaApi();

}  // namespace kiln::runtime::cuda::sim

#endif  // KILN_RUNTIME_SRC_CUDA_SIM_SIM_CUDA_API_H_
