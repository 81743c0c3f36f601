//===- cuda_api.cpp - The real CUDA runtime behind CudaApi, the simulator's hook -===//

#include "runtime/src/cuda/cuda_api.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "runtime/src/cpu/collectives.h"
#include "runtime/src/cuda/cuda_program.h"
#include "runtime/src/cuda/cuda_status.h"
#include "runtime/src/status.h"

namespace kiln::runtime::cuda {
namespace {

namespace fb = kiln::artifact;

class RealCudaApi final : public CudaApi {
 public:
  ~RealCudaApi() override { releaseLibraries(); }

  void releaseLibraries() override {
    // Teardown has no caller to report a failure to.
    if (cudnn_ != nullptr) (void)cudnnDestroy(cudnn_);
    if (cublaslt_ != nullptr) (void)cublasLtDestroy(cublaslt_);
    if (nccl_ != nullptr) (void)ncclCommDestroy(nccl_);
    cudnn_ = nullptr;
    cublaslt_ = nullptr;
    nccl_ = nullptr;
  }

  const char* name() const override { return "CUDA"; }

  Result<std::vector<CudaDeviceInfo>> devices() override { return probeCudaDevices(); }
  Status getDevice(int* ordinal) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaGetDevice(ordinal));
    return Status();
  }
  Status setDevice(int ordinal) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    return Status();
  }
  Result<uint32_t> selectCodeObject(const LoadedArtifact& artifact,
                                    const CudaDeviceInfo& device) override {
    return selectCudaCodeObject(artifact, device.compute_capability_major,
                                device.compute_capability_minor);
  }

  Status malloc(void** memory, size_t size) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaMalloc(memory, size));
    return Status();
  }
  Status free(void* memory) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaFree(memory));
    return Status();
  }
  Status hostAlloc(void** memory, size_t size) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaHostAlloc(memory, size, cudaHostAllocDefault));
    return Status();
  }
  Status freeHost(void* memory) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaFreeHost(memory));
    return Status();
  }
  Status memsetAsync(void* destination, int value, size_t size, cudaStream_t stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(destination, value, size, stream));
    return Status();
  }
  Status memcpyAsync(void* destination, const void* source, size_t size, cudaMemcpyKind kind,
                     cudaStream_t stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(destination, source, size, kind, stream));
    return Status();
  }

  Status streamCreate(cudaStream_t* stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
    return Status();
  }
  Status streamDestroy(cudaStream_t stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamDestroy(stream));
    return Status();
  }
  Status streamSynchronize(cudaStream_t stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return Status();
  }

  Status eventCreate(cudaEvent_t* event) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
    return Status();
  }
  Status eventDestroy(cudaEvent_t event) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventDestroy(event));
    return Status();
  }
  Status eventRecord(cudaEvent_t event, cudaStream_t stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventRecord(event, stream));
    return Status();
  }
  Status streamWaitEvent(cudaStream_t stream, cudaEvent_t event) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, event, 0));
    return Status();
  }
  Status timedEventCreate(cudaEvent_t* event) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(event, cudaEventDefault));
    return Status();
  }
  Status eventElapsed(cudaEvent_t start, cudaEvent_t end, float* milliseconds) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(milliseconds, start, end));
    return Status();
  }

  Status loadLibrary(const fb::CodeObject& code, cudaLibrary_t* library,
                     std::string* log) override {
    // PTX is text the driver reads up to its NUL, which a byte vector of the file need not have;
    // the driver keeps its own copy of the image, so this one may go afterwards.
    const void* image = code.data()->data();
    std::string ptx;
    if (code.format() == fb::CodeFormat::Ptx) {
      ptx.assign(reinterpret_cast<const char*>(code.data()->data()), code.data()->size());
      image = ptx.c_str();
    }
    char buffer[4096] = {};
    cudaJitOption options[] = {cudaJitErrorLogBuffer, cudaJitErrorLogBufferSizeBytes};
    void* values[] = {buffer, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(buffer)))};
    Status loaded = [&]() -> Status {
      KILN_CUDA_RETURN_IF_ERROR(
          cudaLibraryLoadData(library, image, options, values, 2, nullptr, nullptr, 0));
      return Status();
    }();
    // Modules load lazily by default (CUDA_MODULE_LOADING=LAZY): PTX is compiled when a kernel
    // is first looked up, not by the load. Looking the listed kernels up here makes a failed
    // compilation a failed load, with its log, while the log buffer still exists (the driver
    // writes it during the compilation). A name the code lacks is left to the caller.
    if (loaded.ok() && code.kernels() != nullptr) {
      for (flatbuffers::uoffset_t k = 0; k < code.kernels()->size(); ++k) {
        cudaKernel_t kernel = nullptr;
        cudaError_t error =
            cudaLibraryGetKernel(&kernel, *library, code.kernels()->Get(k)->c_str());
        (void)cudaGetLastError();
        if (error == cudaSuccess || error == cudaErrorSymbolNotFound) continue;
        loaded = cudaResultToStatus(error, "cudaLibraryGetKernel(kernel, library, name)", __FILE__,
                                    __LINE__);
        (void)cudaLibraryUnload(*library);
        *library = nullptr;
        break;
      }
    }
    buffer[sizeof(buffer) - 1] = '\0';
    if (!loaded.ok() && log != nullptr) *log = buffer;
    return loaded;
  }
  Status unloadLibrary(cudaLibrary_t library) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaLibraryUnload(library));
    return Status();
  }
  Status getKernel(cudaLibrary_t library, const char* name, cudaKernel_t* kernel) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaLibraryGetKernel(kernel, library, name));
    return Status();
  }
  Status maxThreadsPerBlock(cudaKernel_t kernel, int* threads) override {
    cudaFuncAttributes attributes{};
    KILN_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, static_cast<const void*>(kernel)));
    *threads = attributes.maxThreadsPerBlock;
    return Status();
  }
  Status occupancy(cudaKernel_t kernel, int block_size, int* blocks) override {
    Status status = [&]() -> Status {
      KILN_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          blocks, static_cast<const void*>(kernel), block_size, 0));
      return Status();
    }();
    // A failed query leaves its error for cudaGetLastError: clear it, so that it is not
    // reported by the next caller that checks.
    if (!status.ok()) (void)cudaGetLastError();
    return status;
  }
  Status launchKernel(cudaKernel_t kernel, uint32_t grid_size, uint32_t block_size,
                      void** arguments, const uint64_t*, cudaStream_t stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaLaunchKernel(static_cast<const void*>(kernel), dim3(grid_size),
                                               dim3(block_size), arguments, 0, stream));
    return Status();
  }

  Status beginCapture(cudaStream_t stream) override {
    // Thread-local capture forbids unsafe calls (a cudaMalloc, a synchronization) on this thread
    // only, so other threads of the application and other sessions go on undisturbed.
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    return Status();
  }
  Status endCapture(cudaStream_t stream, cudaGraph_t* graph) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaStreamEndCapture(stream, graph));
    return Status();
  }
  Status graphInstantiate(cudaGraph_t graph, cudaGraphExec_t* exec) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(exec, graph, 0));
    return Status();
  }
  Status graphLaunch(cudaGraphExec_t exec, cudaStream_t stream) override {
    KILN_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec, stream));
    return Status();
  }
  void graphDestroy(cudaGraph_t graph) override { (void)cudaGraphDestroy(graph); }
  void graphExecDestroy(cudaGraphExec_t exec) override { (void)cudaGraphExecDestroy(exec); }
  void clearLastError() override { (void)cudaGetLastError(); }

  Status createLibraryCall(const fb::LibraryCall& call, const CudaDeviceInfo& device,
                           cudaStream_t stream, const std::vector<std::vector<int64_t>>* run_dims,
                           std::unique_ptr<CudaLibraryCall>* out) override {
    // The handles are created with the first library call, so programs of generated kernels
    // only do not pay for cuBLASLt and cuDNN.
    if (cublaslt_ == nullptr) {
      KILN_CUDA_RETURN_IF_ERROR(cublasLtCreate(&cublaslt_));
      KILN_CUDA_RETURN_IF_ERROR(cudnnCreate(&cudnn_));
      // The calls run on the program's stream only; cuDNN takes it from its handle.
      KILN_CUDA_RETURN_IF_ERROR(cudnnSetStream(cudnn_, stream));
    }
    std::string_view name = call.name()->string_view();
    if (nccl_ == nullptr && collectives_ != nullptr && name.substr(0, 5) == "nccl.") {
      // The split model's communicator, with its first collective: device 0 makes NCCL's id
      // and sends it to the others over the host's Gloo group; every device then joins.
      ncclUniqueId id{};
      if (collectives_->rank() == 0) KILN_CUDA_RETURN_IF_ERROR(ncclGetUniqueId(&id));
      if (Status s = collectives_->broadcast(&id, sizeof(id), 0, collectives_->nextTag()); !s.ok())
        return s;
      KILN_CUDA_RETURN_IF_ERROR(ncclCommInitRank(&nccl_, static_cast<int>(collectives_->devices()),
                                                 id, static_cast<int>(collectives_->rank())));
    }
    CudaLibraryContext context;
    context.nccl = nccl_;
    context.device = device.ordinal;
    context.compute_capability_major = device.compute_capability_major;
    context.compute_capability_minor = device.compute_capability_minor;
    context.cublaslt = cublaslt_;
    context.cudnn = cudnn_;
    return createCudaLibraryCall(call, context, out, run_dims);
  }

 private:
  cublasLtHandle_t cublaslt_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  ncclComm_t nccl_ = nullptr;
};

}  // namespace

std::unique_ptr<CudaApi> createRealCudaApi() { return std::make_unique<RealCudaApi>(); }

namespace {
/// The simulated CUDA device's factory, installed by kiln_cuda_sim (null without it).
std::atomic<SimulatedCudaApiFactory> simulated_cuda_api_factory{nullptr};
}  // namespace

void setSimulatedCudaApiFactory(SimulatedCudaApiFactory factory) {
  simulated_cuda_api_factory.store(factory, std::memory_order_release);
}

Result<std::unique_ptr<CudaApi>> createSimulatedCudaApi() {
  SimulatedCudaApiFactory factory = simulated_cuda_api_factory.load(std::memory_order_acquire);
  if (factory == nullptr) {
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  "the simulated CUDA device is not built into this program; link kiln_cuda_sim "
                  "and call kiln::runtime::registerSimulatedCuda()");
  }
  return factory();
}

}  // namespace kiln::runtime::cuda
