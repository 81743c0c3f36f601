//===- cuda_api.h - The one interface between the CUDA device and CUDA -*- C++ -*-===//
//
// Everything the CUDA device asks of CUDA, in one narrow interface with two implementations: the
// real CUDA runtime (cudart, cuBLASLt, cuDNN; createRealCudaApi) and the simulated CUDA device,
// which runs the same program on the CPU (sim/sim_cuda_api.h; `--device cuda-sim`). CudaProgram and
// the library calls' problem reading run unchanged on both, so CI, which has no GPU, executes the
// CUDA device's host code: memory layout, staging, launches, graph capture and replay.
//
// The simulator is a library of its own (kiln_cuda_sim) that the runtime does not link: a program
// that links it installs it with kiln::runtime::registerSimulatedCuda(), and the runtime reaches it
// only through createSimulatedCudaApi.
//
// The handles are CUDA's types; the simulator's are its own objects behind the same pointers.
// Every call returns a Status naming what failed (KILN_CUDA_RETURN_IF_ERROR for the real one).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_CUDA_API_H_
#define KILN_RUNTIME_SRC_CUDA_CUDA_API_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/cuda/cuda_device.h"
#include "runtime/src/cuda/cuda_library_call.h"

namespace kiln::runtime::cpu {
class Collectives;
}

namespace kiln::runtime::cuda {

class CudaApi {
 public:
  virtual ~CudaApi() = default;

  /// The devices of a split model this device belongs to (the host-side Gloo group its session
  /// joined), before the program is prepared; null for a model that is not split. The
  /// collectives (nccl.*) run over it: NCCL's communicator is set up through it on GPUs, and the
  /// simulated device carries the collectives out on the host with it.
  void setCollectives(std::shared_ptr<cpu::Collectives> collectives) {
    collectives_ = std::move(collectives);
  }

  /// "CUDA" or "cuda-sim", for messages.
  virtual const char* name() const = 0;

  /// The devices (probeCudaDevices for the real one).
  virtual Result<std::vector<CudaDeviceInfo>> devices() = 0;
  virtual Status getDevice(int* ordinal) = 0;
  virtual Status setDevice(int ordinal) = 0;

  /// The index of the code object of `artifact` to load on `device` (selectCudaCodeObject for a
  /// GPU; the "cuda-sim" object for the simulator).
  virtual Result<uint32_t> selectCodeObject(const LoadedArtifact& artifact,
                                            const CudaDeviceInfo& device) = 0;

  // Memory.
  virtual Status malloc(void** memory, size_t size) = 0;
  virtual Status free(void* memory) = 0;
  /// Pinned host memory (cudaHostAlloc).
  virtual Status hostAlloc(void** memory, size_t size) = 0;
  virtual Status freeHost(void* memory) = 0;
  virtual Status memsetAsync(void* destination, int value, size_t size, cudaStream_t stream) = 0;
  virtual Status memcpyAsync(void* destination, const void* source, size_t size,
                             cudaMemcpyKind kind, cudaStream_t stream) = 0;

  // Streams (non-blocking: they never synchronize with the legacy default stream).
  virtual Status streamCreate(cudaStream_t* stream) = 0;
  virtual Status streamDestroy(cudaStream_t stream) = 0;
  virtual Status streamSynchronize(cudaStream_t stream) = 0;

  // Events (without timing): cudaEventRecord and cudaStreamWaitEvent order work across streams,
  // and fork and join streams in a capture.
  virtual Status eventCreate(cudaEvent_t* event) = 0;
  virtual Status eventDestroy(cudaEvent_t event) = 0;
  virtual Status eventRecord(cudaEvent_t event, cudaStream_t stream) = 0;
  virtual Status streamWaitEvent(cudaStream_t stream, cudaEvent_t event) = 0;
  /// A timed event (cudaEventDefault), for traces, and the milliseconds between two completed
  /// records of timed events (cudaEventElapsedTime; the simulator's host clock as each record
  /// is reached in its stream's order).
  virtual Status timedEventCreate(cudaEvent_t* event) = 0;
  virtual Status eventElapsed(cudaEvent_t start, cudaEvent_t end, float* milliseconds) = 0;

  // Code.
  /// Loads `code`; `*log` gets what a failed JIT compilation said.
  virtual Status loadLibrary(const kiln::artifact::CodeObject& code, cudaLibrary_t* library,
                             std::string* log) = 0;
  virtual Status unloadLibrary(cudaLibrary_t library) = 0;
  virtual Status getKernel(cudaLibrary_t library, const char* name, cudaKernel_t* kernel) = 0;
  virtual Status maxThreadsPerBlock(cudaKernel_t kernel, int* threads) = 0;
  virtual Status occupancy(cudaKernel_t kernel, int block_size, int* blocks_per_multiprocessor) = 0;
  /// cudaLaunchKernel: `arguments` points at each parameter's value, a binding's address.
  /// `argument_bytes` (one per argument) are the bindings' sizes: the simulator checks every
  /// access of the kernel against them; CUDA ignores them.
  virtual Status launchKernel(cudaKernel_t kernel, uint32_t grid_size, uint32_t block_size,
                              void** arguments, const uint64_t* argument_bytes,
                              cudaStream_t stream) = 0;

  // Graphs: thread-local stream capture, instantiation and replay.
  virtual Status beginCapture(cudaStream_t stream) = 0;
  virtual Status endCapture(cudaStream_t stream, cudaGraph_t* graph) = 0;
  virtual Status graphInstantiate(cudaGraph_t graph, cudaGraphExec_t* exec) = 0;
  virtual Status graphLaunch(cudaGraphExec_t exec, cudaStream_t stream) = 0;
  virtual void graphDestroy(cudaGraph_t graph) = 0;
  virtual void graphExecDestroy(cudaGraphExec_t exec) = 0;
  /// Clears a non-sticky error left by a failed call (cudaGetLastError).
  virtual void clearLastError() = 0;

  /// Prepares a library call for `device` whose work goes to `stream`: cuBLASLt and cuDNN (their
  /// handles created with the first call), or the simulator's CPU references. `run_dims`, when
  /// not null, holds each binding's dimensions for one shape of a program compiled for a range
  /// of shapes (LibraryCallView::create), for which the call is set up.
  virtual Status createLibraryCall(const kiln::artifact::LibraryCall& call,
                                   const CudaDeviceInfo& device, cudaStream_t stream,
                                   const std::vector<std::vector<int64_t>>* run_dims,
                                   std::unique_ptr<CudaLibraryCall>* out) = 0;
  /// Destroys the library handles createLibraryCall made, once every call is gone, while the
  /// device is current (the handles belong to it).
  virtual void releaseLibraries() = 0;

 protected:
  std::shared_ptr<cpu::Collectives> collectives_;
};

/// The CUDA runtime, cuBLASLt and cuDNN.
std::unique_ptr<CudaApi> createRealCudaApi();

/// Makes a simulated CUDA device (sim::createSimCudaApi, in kiln_cuda_sim).
using SimulatedCudaApiFactory = std::unique_ptr<CudaApi> (*)();

/// Installs the factory of the simulated CUDA device; null uninstalls it. Thread-safe.
/// kiln::runtime::registerSimulatedCuda() (sim/register_simulated_cuda.h) is how a program that
/// links kiln_cuda_sim calls it.
void setSimulatedCudaApiFactory(SimulatedCudaApiFactory factory);

/// A simulated CUDA device from the installed factory; UNIMPLEMENTED, saying which library to
/// link, when none is installed (the runtime alone, libkiln_runtime.so, never has one).
Result<std::unique_ptr<CudaApi>> createSimulatedCudaApi();

}  // namespace kiln::runtime::cuda

#endif  // KILN_RUNTIME_SRC_CUDA_CUDA_API_H_
