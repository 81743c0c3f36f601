//===- sim_cuda_api.cpp - The simulated CUDA device behind CudaApi --------===//

#include "runtime/src/cuda/sim/sim_cuda_api.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/src/cpu/collectives.h"
#include "runtime/src/cpu/elf_code_object.h"
#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/cuda/sim/library_reference.h"
#include "runtime/src/cuda/sim/register_simulated_cuda.h"
#include "runtime/src/cuda/sim/sim_executor.h"
#include "contract/half_conversions.h"
#include "runtime/src/status.h"
#include "runtime/src/tensor.h"

namespace kiln::runtime::cuda::sim {
namespace {

namespace fb = kiln::artifact;

/// The alignment of device allocations (cudaMalloc's) and of pinned host allocations.
constexpr size_t kDeviceAlignment = 256;
constexpr size_t kPinnedAlignment = 64;
/// The threads of a multiprocessor, for the occupancy answer.
constexpr int kThreadsPerMultiprocessor = 2048;
constexpr int kMaxThreadsPerBlock = 1024;

using Work = std::function<Status()>;

/// A captured graph: work nodes and the nodes each one depends on (what the stream order and the
/// events of the capture made it wait for).
struct SimGraph {
  struct Node {
    Work work;
    std::vector<size_t> dependencies;
  };
  std::vector<Node> nodes;
  /// While captured: why the capture is invalid (empty if it is not).
  std::string error;
};

struct SimEvent;

struct SimStream {
  /// Queued work, event records and event waits, run in order when the stream is synchronized
  /// (or when another stream waits for one of its records).
  struct Item {
    enum Kind { kWork, kRecord, kWait } kind = kWork;
    Work work;
    SimEvent* event = nullptr;
    uint64_t generation = 0;
  };
  std::deque<Item> pending;
  /// While captured (as the capture's origin, or joined by waiting on one of its events): the
  /// graph, and the nodes the stream's next work depends on.
  SimGraph* capture = nullptr;
  std::vector<size_t> tail;
};

struct SimEvent {
  /// Records enqueued and records executed; a wait enqueued after record N waits for N.
  uint64_t recorded = 0;
  uint64_t completed = 0;
  /// The stream of the last record.
  SimStream* stream = nullptr;
  /// Recorded in a capture: its graph and the nodes the record stands for.
  SimGraph* graph = nullptr;
  std::vector<size_t> tail;
  /// A timed event (timedEventCreate), and the host clock when its last record completed.
  bool timed = false;
  std::chrono::steady_clock::time_point completed_at;
};

struct SimLibrary {
  std::unique_ptr<cpu::ElfCodeObject> object;
  std::vector<std::unique_ptr<SimKernel>> kernels;
};

/// The stream the calling thread captures, if any (CUDA's thread-local capture mode).
thread_local SimStream* capturing_stream = nullptr;

Status simError(kiln_status_code_t code, const std::string& message) {
  return Status(code, "cuda-sim: " + message);
}

std::string hex(const void* address) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", address);
  return text;
}

class SimCudaApi;

/// A library call computed by the CPU references on the simulated device's stream.
class SimLibraryCall final : public CudaLibraryCall {
 public:
  SimLibraryCall(SimCudaApi& api, std::string label, std::vector<uint64_t> binding_bytes,
                 const CudaCallCommon& common, std::function<Status(void* const*)> compute)
      : api_(api),
        label_(std::move(label)),
        binding_bytes_(std::move(binding_bytes)),
        common_(common),
        compute_(std::move(compute)) {}

  size_t workspaceSize() const override { return 0; }
  Status enqueue(cudaStream_t stream, void* const* buffers, void* workspace) const override;

 private:
  SimCudaApi& api_;
  std::string label_;
  std::vector<uint64_t> binding_bytes_;
  CudaCallCommon common_;
  std::function<Status(void* const*)> compute_;
};

class SimCudaApi final : public CudaApi {
 public:
  SimCudaApi() {
    if (const char* seed = std::getenv(kSimSeedEnvironmentVariable)) {
      launch_options_.seed = std::strtoull(seed, nullptr, 10);
    }
  }

  ~SimCudaApi() override {
    // Memory the program did not free (it frees everything) goes with the device.
    for (SimMemory* allocations : {&memory_, &pinned_})
      for (const void* base : allocations->bases()) std::free(const_cast<void*>(base));
  }

  const char* name() const override { return "cuda-sim"; }

  Result<std::vector<CudaDeviceInfo>> devices() override {
    CudaDeviceInfo device;
    device.ordinal = 0;
    device.name = "Kiln simulated CUDA device";
    device.compute_capability_major = 8;
    device.compute_capability_minor = 0;
    device.multiprocessor_count =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    device.total_memory_bytes = uint64_t{16} << 30;
    return std::vector<CudaDeviceInfo>{device};
  }
  Status getDevice(int* ordinal) override {
    *ordinal = 0;
    return Status();
  }
  Status setDevice(int ordinal) override {
    if (ordinal != 0) {
      return simError(KILN_STATUS_INVALID_ARGUMENT,
                      "device " + std::to_string(ordinal) + " does not exist (there is one)");
    }
    return Status();
  }
  Result<uint32_t> selectCodeObject(const LoadedArtifact& artifact,
                                    const CudaDeviceInfo&) override {
    const auto& code_objects = *artifact.root().code_objects();
    for (flatbuffers::uoffset_t i = 0; i < code_objects.size(); ++i) {
      const fb::CodeObject& code = *code_objects.Get(i);
      if (code.format() == fb::CodeFormat::ElfSharedObject &&
          code.target()->string_view() == "cuda-sim") {
        return i;
      }
    }
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  artifact.name() +
                      ": the artifact has no code for the simulated CUDA device; compile it with "
                      "--gpu-arch cuda-sim (alone or next to the GPU architectures)");
  }

  // Memory.
  Status malloc(void** memory, size_t size) override {
    if (Status s = refuseDuringCapture("cudaMalloc"); !s.ok()) return s;
    return allocate(memory_, kDeviceAlignment, size, "device", memory);
  }
  Status free(void* memory) override {
    if (Status s = refuseDuringCapture("cudaFree"); !s.ok()) return s;
    return release(memory_, memory, "cudaFree", "cudaMalloc");
  }
  Status hostAlloc(void** memory, size_t size) override {
    if (Status s = refuseDuringCapture("cudaHostAlloc"); !s.ok()) return s;
    return allocate(pinned_, kPinnedAlignment, size, "pinned", memory);
  }
  Status freeHost(void* memory) override {
    if (Status s = refuseDuringCapture("cudaFreeHost"); !s.ok()) return s;
    return release(pinned_, memory, "cudaFreeHost", "cudaHostAlloc");
  }
  Status memsetAsync(void* destination, int value, size_t size, cudaStream_t stream) override {
    if (size == 0) return Status();
    if (!memory_.contains(destination, size)) {
      return simError(KILN_STATUS_INVALID_ARGUMENT, "cudaMemsetAsync of " + std::to_string(size) +
                                                        " bytes at " + hex(destination) +
                                                        " is outside every device allocation");
    }
    return enqueue(stream, [=]() {
      std::memset(destination, value, size);
      return Status();
    });
  }
  Status memcpyAsync(void* destination, const void* source, size_t size, cudaMemcpyKind kind,
                     cudaStream_t stream) override {
    if (size == 0) return Status();
    const std::string what = "cudaMemcpyAsync of " + std::to_string(size) + " bytes from " +
                             hex(source) + " to " + hex(destination);
    auto device = [&](const void* address) { return memory_.contains(address, size); };
    auto pinned = [&](const void* address) { return pinned_.contains(address, size); };
    // Pageable host memory: CUDA copies it synchronously (a host-to-device copy takes the source
    // before returning, a device-to-host one waits for the stream), and cannot capture it.
    auto pageable = [&](const char* which) -> Status {
      if (capturing_stream == nullptr) return Status();
      return refuseDuringCapture(
          (what + ": the host " + which +
           " is not pinned memory (cudaHostAlloc), and a copy "
           "of pageable memory cannot be captured into a graph; cudaMemcpyAsync")
              .c_str());
    };
    switch (kind) {
      case cudaMemcpyHostToDevice: {
        if (!device(destination)) {
          return simError(KILN_STATUS_INVALID_ARGUMENT,
                          what + ": the destination is outside every device allocation");
        }
        if (pinned(source)) break;
        if (Status s = pageable("source"); !s.ok()) return s;
        auto snapshot = std::make_shared<std::vector<uint8_t>>(
            static_cast<const uint8_t*>(source), static_cast<const uint8_t*>(source) + size);
        return enqueue(stream, [=]() {
          std::memcpy(destination, snapshot->data(), size);
          return Status();
        });
      }
      case cudaMemcpyDeviceToHost: {
        if (!device(source)) {
          return simError(KILN_STATUS_INVALID_ARGUMENT,
                          what + ": the source is outside every device allocation");
        }
        if (pinned(destination)) break;
        if (Status s = pageable("destination"); !s.ok()) return s;
        SimStream* waited = fromHandle(stream);
        if (waited == nullptr) return simError(KILN_STATUS_INVALID_ARGUMENT, "unknown stream");
        if (Status s = drain(*waited); !s.ok()) return s;
        std::memcpy(destination, source, size);
        return Status();
      }
      case cudaMemcpyDeviceToDevice:
        if (!device(source) || !device(destination)) {
          return simError(KILN_STATUS_INVALID_ARGUMENT,
                          what + ": a device-to-device copy must stay inside device allocations");
        }
        break;
      default:
        return simError(KILN_STATUS_UNIMPLEMENTED,
                        what + ": copy kind " + std::to_string(static_cast<int>(kind)) +
                            " is not simulated (the CUDA device names every copy's direction)");
    }
    return enqueue(stream, [=]() {
      std::memmove(destination, source, size);
      return Status();
    });
  }

  // Streams.
  Status streamCreate(cudaStream_t* stream) override {
    auto* created = new SimStream();
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.emplace_back(created);
    *stream = reinterpret_cast<cudaStream_t>(created);
    return Status();
  }
  Status streamDestroy(cudaStream_t stream) override {
    SimStream* destroyed = fromHandle(stream);
    if (destroyed == nullptr) return simError(KILN_STATUS_INVALID_ARGUMENT, "unknown stream");
    // cudaStreamDestroy lets queued work finish.
    Status status = drain(*destroyed);
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.erase(
        std::remove_if(streams_.begin(), streams_.end(),
                       [&](const std::unique_ptr<SimStream>& s) { return s.get() == destroyed; }),
        streams_.end());
    return status;
  }
  Status streamSynchronize(cudaStream_t stream) override {
    if (Status s = refuseDuringCapture("cudaStreamSynchronize"); !s.ok()) return s;
    SimStream* synchronized = fromHandle(stream);
    if (synchronized == nullptr) return simError(KILN_STATUS_INVALID_ARGUMENT, "unknown stream");
    if (synchronized->capture != nullptr) {
      return simError(KILN_STATUS_FAILED_PRECONDITION,
                      "cudaStreamSynchronize of a stream that is being captured");
    }
    return drain(*synchronized);
  }

  // Code.
  Status loadLibrary(const fb::CodeObject& code, cudaLibrary_t* library,
                     std::string* log) override {
    (void)log;
    if (code.format() != fb::CodeFormat::ElfSharedObject ||
        code.target()->string_view() != "cuda-sim") {
      return simError(KILN_STATUS_UNIMPLEMENTED,
                      std::string("the simulated device runs only 'cuda-sim' code objects, not ") +
                          fb::EnumNameCodeFormat(code.format()) + " for '" + code.target()->str() +
                          "'");
    }
    Result<std::unique_ptr<cpu::ElfCodeObject>> object =
        cpu::ElfCodeObject::load(code.data()->data(), code.data()->size(), "cuda-sim code object");
    if (!object.ok()) return object.status();
    Result<void*> table = (*object)->symbol("kiln_sim_runtime");
    if (!table.ok()) return table.status();
    *static_cast<const kiln_sim_runtime_t**>(*table) = simRuntimeTable();
    auto* loaded = new SimLibrary();
    loaded->object = std::move(*object);
    std::lock_guard<std::mutex> lock(mutex_);
    libraries_.emplace_back(loaded);
    *library = reinterpret_cast<cudaLibrary_t>(loaded);
    return Status();
  }
  Status unloadLibrary(cudaLibrary_t library) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto* unloaded = reinterpret_cast<SimLibrary*>(library);
    libraries_.erase(
        std::remove_if(libraries_.begin(), libraries_.end(),
                       [&](const std::unique_ptr<SimLibrary>& l) { return l.get() == unloaded; }),
        libraries_.end());
    return Status();
  }
  Status getKernel(cudaLibrary_t library, const char* name, cudaKernel_t* kernel) override {
    auto* loaded = reinterpret_cast<SimLibrary*>(library);
    Result<void*> entry = loaded->object->symbol(name);
    if (!entry.ok()) return Status(KILN_STATUS_NOT_FOUND, entry.status().message());
    Result<void*> info = loaded->object->symbol(std::string("kiln_sim_info_") + name);
    if (!info.ok()) return Status(KILN_STATUS_NOT_FOUND, info.status().message());
    auto simulated = std::make_unique<SimKernel>();
    simulated->name = name;
    simulated->entry = reinterpret_cast<kiln_sim_kernel_fn>(*entry);
    std::memcpy(&simulated->info, *info, sizeof(simulated->info));
    *kernel = reinterpret_cast<cudaKernel_t>(simulated.get());
    loaded->kernels.push_back(std::move(simulated));
    return Status();
  }
  Status maxThreadsPerBlock(cudaKernel_t, int* threads) override {
    *threads = kMaxThreadsPerBlock;
    return Status();
  }
  Status occupancy(cudaKernel_t, int block_size, int* blocks) override {
    if (block_size <= 0 || block_size > kMaxThreadsPerBlock) {
      return simError(KILN_STATUS_INVALID_ARGUMENT,
                      "occupancy of blocks of " + std::to_string(block_size) + " threads");
    }
    *blocks = std::max(1, kThreadsPerMultiprocessor / block_size);
    return Status();
  }
  Status launchKernel(cudaKernel_t kernel, uint32_t grid_size, uint32_t block_size,
                      void** arguments, const uint64_t* argument_bytes,
                      cudaStream_t stream) override {
    const SimKernel* launched = reinterpret_cast<const SimKernel*>(kernel);
    if (grid_size == 0 || block_size == 0 || block_size > kMaxThreadsPerBlock) {
      return simError(KILN_STATUS_INVALID_ARGUMENT,
                      "launch of kernel '" + launched->name + "' with " +
                          std::to_string(grid_size) + " blocks of " + std::to_string(block_size) +
                          " threads (at least 1 of each, at most " +
                          std::to_string(kMaxThreadsPerBlock) + " threads a block)");
    }
    // cudaLaunchKernel reads the parameter values when it is called; every parameter of a Kiln
    // kernel is a pointer, a binding.
    const size_t count = launched->info.parameter_count;
    std::vector<void*> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = *static_cast<void**>(arguments[i]);
    // The kernel may touch its bindings only: each access is checked against them (overlapping
    // bindings, views of one buffer, merged), not against the whole device allocation.
    auto bindings = std::make_shared<SimMemory>();
    if (argument_bytes != nullptr) {
      std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
      for (size_t i = 0; i < count; ++i) {
        auto begin = reinterpret_cast<uintptr_t>(values[i]);
        if (argument_bytes[i] == 0) continue;
        if (!memory_.contains(values[i], argument_bytes[i])) {
          return simError(KILN_STATUS_INVALID_ARGUMENT,
                          "launch of kernel '" + launched->name + "': binding " +
                              std::to_string(i) + " (" + std::to_string(argument_bytes[i]) +
                              " bytes at " + hex(values[i]) +
                              ") is outside every device allocation");
        }
        ranges.emplace_back(begin, begin + argument_bytes[i]);
      }
      std::sort(ranges.begin(), ranges.end());
      for (size_t i = 0; i < ranges.size();) {
        uintptr_t begin = ranges[i].first, end = ranges[i].second;
        for (++i; i < ranges.size() && ranges[i].first <= end; ++i)
          end = std::max(end, ranges[i].second);
        bindings->add(reinterpret_cast<const void*>(begin), end - begin);
      }
    }
    const SimMemory* checked = argument_bytes != nullptr ? bindings.get() : &memory_;
    SimLaunchOptions options = launch_options_;
    if (argument_bytes != nullptr) options.memory_description = "the kernel's bindings";
    return enqueue(
        stream, [launched, grid_size, block_size, values, bindings, checked, options]() mutable {
          std::vector<void*> pointers(values.size());
          for (size_t i = 0; i < values.size(); ++i) pointers[i] = &values[i];
          const uint32_t grid[3] = {grid_size, 1, 1};
          const uint32_t block[3] = {block_size, 1, 1};
          return launchSimKernel(*launched, grid, block, pointers.data(), *checked, options);
        });
  }

  // Events.
  Status eventCreate(cudaEvent_t* event) override {
    auto* created = new SimEvent();
    std::lock_guard<std::mutex> lock(mutex_);
    events_.emplace_back(created);
    *event = reinterpret_cast<cudaEvent_t>(created);
    return Status();
  }
  Status timedEventCreate(cudaEvent_t* event) override {
    if (Status status = eventCreate(event); !status.ok()) return status;
    fromHandle(*event)->timed = true;
    return Status();
  }
  Status eventElapsed(cudaEvent_t start, cudaEvent_t end, float* milliseconds) override {
    SimEvent* first = fromHandle(start);
    SimEvent* last = fromHandle(end);
    if (first == nullptr || last == nullptr)
      return simError(KILN_STATUS_INVALID_ARGUMENT, "cudaEventElapsedTime of an unknown event");
    if (!first->timed || !last->timed)
      return simError(KILN_STATUS_INVALID_ARGUMENT,
                      "cudaEventElapsedTime of an event created without timing "
                      "(cudaErrorInvalidResourceHandle)");
    if (first->graph != nullptr || last->graph != nullptr || first->completed == 0 ||
        last->completed == 0 || first->completed < first->recorded ||
        last->completed < last->recorded)
      return simError(KILN_STATUS_FAILED_PRECONDITION,
                      "cudaEventElapsedTime of an event whose record has not completed "
                      "(cudaErrorNotReady)");
    *milliseconds =
        std::chrono::duration<float, std::milli>(last->completed_at - first->completed_at).count();
    return Status();
  }
  Status eventDestroy(cudaEvent_t event) override {
    // Queued records and waits may still name it: it lives as long as the device.
    return fromHandle(event) != nullptr ? Status()
                                        : simError(KILN_STATUS_INVALID_ARGUMENT, "unknown event");
  }
  Status eventRecord(cudaEvent_t event, cudaStream_t stream) override {
    SimEvent* recorded = fromHandle(event);
    SimStream* target = fromHandle(stream);
    if (recorded == nullptr || target == nullptr)
      return simError(KILN_STATUS_INVALID_ARGUMENT,
                      "cudaEventRecord of an unknown event or stream");
    if (target->capture != nullptr) {
      recorded->graph = target->capture;
      recorded->tail = target->tail;
      return Status();
    }
    recorded->graph = nullptr;
    recorded->stream = target;
    SimStream::Item item;
    item.kind = SimStream::Item::kRecord;
    item.event = recorded;
    item.generation = ++recorded->recorded;
    target->pending.push_back(std::move(item));
    return Status();
  }
  Status streamWaitEvent(cudaStream_t stream, cudaEvent_t event) override {
    SimEvent* awaited = fromHandle(event);
    SimStream* target = fromHandle(stream);
    if (awaited == nullptr || target == nullptr)
      return simError(KILN_STATUS_INVALID_ARGUMENT,
                      "cudaStreamWaitEvent of an unknown event or stream");
    if (awaited->graph != nullptr) {
      // An event of a capture: the waiting stream joins it, after the record's nodes.
      if (target->capture != nullptr && target->capture != awaited->graph) {
        return simError(KILN_STATUS_FAILED_PRECONDITION,
                        "cudaStreamWaitEvent joins two captures (cudaErrorStreamCaptureIsolation)");
      }
      if (target->capture == nullptr) {
        target->capture = awaited->graph;
        target->tail.clear();
      }
      for (size_t node : awaited->tail)
        if (!contains(target->tail, node)) target->tail.push_back(node);
      return Status();
    }
    if (target->capture != nullptr) {
      // Waiting on work outside the capture would make the graph depend on it.
      target->capture->error = "a captured stream waited on an event recorded outside the capture";
      return simError(KILN_STATUS_FAILED_PRECONDITION,
                      target->capture->error + " (cudaErrorStreamCaptureIsolation)");
    }
    if (awaited->recorded == 0) return Status();  // never recorded: nothing to wait for
    SimStream::Item item;
    item.kind = SimStream::Item::kWait;
    item.event = awaited;
    item.generation = awaited->recorded;
    target->pending.push_back(std::move(item));
    return Status();
  }

  // Graphs.
  Status beginCapture(cudaStream_t stream) override {
    SimStream* captured = fromHandle(stream);
    if (captured == nullptr) return simError(KILN_STATUS_INVALID_ARGUMENT, "unknown stream");
    if (captured->capture != nullptr || capturing_stream != nullptr) {
      return simError(KILN_STATUS_FAILED_PRECONDITION,
                      "cudaStreamBeginCapture while a capture is under way on this thread");
    }
    captured->capture = new SimGraph();
    captured->tail.clear();
    capturing_stream = captured;
    return Status();
  }
  Status endCapture(cudaStream_t stream, cudaGraph_t* graph) override {
    SimStream* captured = fromHandle(stream);
    *graph = nullptr;
    if (captured == nullptr || captured->capture == nullptr || capturing_stream != captured) {
      return simError(KILN_STATUS_FAILED_PRECONDITION,
                      "cudaStreamEndCapture of a stream this thread does not capture");
    }
    std::unique_ptr<SimGraph> recorded(captured->capture);
    capturing_stream = nullptr;
    // Every stream that joined the capture must have been joined back: its last work is
    // something the origin's end depends on.
    std::vector<bool> before_end(recorded->nodes.size(), false);
    std::vector<size_t> work(captured->tail.begin(), captured->tail.end());
    while (!work.empty()) {
      size_t node = work.back();
      work.pop_back();
      if (before_end[node]) continue;
      before_end[node] = true;
      for (size_t dependency : recorded->nodes[node].dependencies) work.push_back(dependency);
    }
    std::string unjoined;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const std::unique_ptr<SimStream>& other : streams_) {
        if (other->capture != recorded.get()) continue;
        if (other.get() != captured) {
          for (size_t node : other->tail)
            if (!before_end[node])
              unjoined =
                  "a stream that joined the capture has work the "
                  "origin stream was not made to wait for";
        }
        other->capture = nullptr;
        other->tail.clear();
      }
      // The capture's events stand for nothing once it ends (the graph goes to the caller).
      for (const std::unique_ptr<SimEvent>& event : events_) {
        if (event->graph != recorded.get()) continue;
        event->graph = nullptr;
        event->tail.clear();
      }
    }
    if (!recorded->error.empty()) {
      return simError(KILN_STATUS_FAILED_PRECONDITION,
                      "the stream capture was invalidated: " + recorded->error);
    }
    if (!unjoined.empty()) {
      return simError(KILN_STATUS_FAILED_PRECONDITION,
                      "cudaStreamEndCapture: " + unjoined + " (cudaErrorStreamCaptureUnjoined)");
    }
    *graph = reinterpret_cast<cudaGraph_t>(recorded.release());
    return Status();
  }
  Status graphInstantiate(cudaGraph_t graph, cudaGraphExec_t* exec) override {
    auto* instantiated = new SimGraph(*reinterpret_cast<SimGraph*>(graph));
    *exec = reinterpret_cast<cudaGraphExec_t>(instantiated);
    return Status();
  }
  Status graphLaunch(cudaGraphExec_t exec, cudaStream_t stream) override {
    const SimGraph* graph = reinterpret_cast<SimGraph*>(exec);
    // One piece of work on the stream that runs the nodes in an order their dependencies allow:
    // in capture order, or, with a seed, a shuffled one (independent branches may run in any
    // order on a GPU).
    uint64_t seed = launch_options_.seed;
    return enqueue(stream, [graph, seed]() {
      const size_t count = graph->nodes.size();
      std::vector<size_t> waiting(count, 0);
      std::vector<std::vector<size_t>> dependents(count);
      for (size_t n = 0; n < count; ++n) {
        waiting[n] = graph->nodes[n].dependencies.size();
        for (size_t d : graph->nodes[n].dependencies) dependents[d].push_back(n);
      }
      std::vector<size_t> ready;
      for (size_t n = 0; n < count; ++n)
        if (waiting[n] == 0) ready.push_back(n);
      std::mt19937_64 random(seed);
      while (!ready.empty()) {
        size_t pick = 0;
        if (seed != 0) {
          pick = static_cast<size_t>(random() % ready.size());
        } else {
          pick = static_cast<size_t>(std::min_element(ready.begin(), ready.end()) - ready.begin());
        }
        size_t node = ready[pick];
        ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
        if (Status status = graph->nodes[node].work(); !status.ok()) return status;
        for (size_t next : dependents[node])
          if (--waiting[next] == 0) ready.push_back(next);
      }
      return Status();
    });
  }
  void graphDestroy(cudaGraph_t graph) override { delete reinterpret_cast<SimGraph*>(graph); }
  void graphExecDestroy(cudaGraphExec_t exec) override { delete reinterpret_cast<SimGraph*>(exec); }
  void clearLastError() override {}

  Status createLibraryCall(const fb::LibraryCall& call, const CudaDeviceInfo&, cudaStream_t,
                           const std::vector<std::vector<int64_t>>* run_dims,
                           std::unique_ptr<CudaLibraryCall>* out) override {
    // The view has checked each binding's type against its buffer, so the sizes are valid.
    auto bytesOf = [](const LibraryCallView& view) {
      std::vector<uint64_t> bytes;
      for (const LibraryCallBinding& binding : view.bindings())
        bytes.push_back(computeByteSize(binding.element_type, binding.dims).value());
      return bytes;
    };
    CudaLibraryFactory factory;
    factory.matmul = [&](const LibraryCallView& view, const MatmulProblem& problem,
                         std::unique_ptr<CudaLibraryCall>* result) {
      *result = std::make_unique<SimLibraryCall>(
          *this, view.label(), bytesOf(view), problem.common,
          [problem](void* const* buffers) { return runMatmulReference(problem, buffers); });
      return Status();
    };
    factory.convolution = [&](const LibraryCallView& view, const ConvolutionProblem& problem,
                              std::unique_ptr<CudaLibraryCall>* result) {
      *result = std::make_unique<SimLibraryCall>(
          *this, view.label(), bytesOf(view), problem.common,
          [problem](void* const* buffers) { return runConvolutionReference(problem, buffers); });
      return Status();
    };
    factory.attention = [&](const LibraryCallView& view, const AttentionProblem& problem,
                            std::unique_ptr<CudaLibraryCall>* result) {
      *result = std::make_unique<SimLibraryCall>(
          *this, view.label(), bytesOf(view), problem.common,
          [problem](void* const* buffers) { return runAttentionReference(problem, buffers); });
      return Status();
    };
    factory.collective = [&](const LibraryCallView& view, const CollectiveProblem& problem,
                             std::unique_ptr<CudaLibraryCall>* result) {
      // NCCL's collectives carried out on the host, over the split model's Gloo group: the
      // simulated devices' memory is the host's.
      std::shared_ptr<cpu::Collectives> collectives = collectives_;
      if (Status s = cpu::checkSessionDevices(view.label(), "runs between", problem.devices,
                                              collectives.get());
          !s.ok())
        return s;
      uint32_t tag = collectives->nextTag();
      *result = std::make_unique<SimLibraryCall>(
          *this, view.label(), bytesOf(view), problem.common,
          [collectives, problem, tag](void* const* buffers) {
            if (problem.gather)
              return collectives->allGather(buffers[0], buffers[1], problem.bytes, tag);
            kiln_element_type_t type = problem.common.element_type;
            if (type == KILN_ELEMENT_TYPE_F32) {
              if (buffers[0] != buffers[1]) std::memcpy(buffers[1], buffers[0], problem.bytes);
              return collectives->allReduceSum(static_cast<float*>(buffers[1]), problem.count,
                                               tag);
            }
            // f16 and bf16 summed in f32 and rounded once (NCCL's sum of two devices).
            const auto* in = static_cast<const uint16_t*>(buffers[0]);
            std::vector<float> sums(problem.count);
            bool half = type == KILN_ELEMENT_TYPE_F16;
            for (uint64_t i = 0; i < problem.count; ++i)
              sums[i] = half ? contract::halfToFloat(in[i]) : contract::bf16ToFloat(in[i]);
            if (Status s = collectives->allReduceSum(sums.data(), problem.count, tag); !s.ok())
              return s;
            auto* out = static_cast<uint16_t*>(buffers[1]);
            for (uint64_t i = 0; i < problem.count; ++i)
              out[i] = half ? contract::floatToHalf(sums[i]) : contract::floatToBf16(sums[i]);
            return Status();
          });
      return Status();
    };
    return createCudaLibraryCall(call, factory, out, run_dims);
  }

  void releaseLibraries() override {}

  /// Queues `work` on `stream`, or records it into the stream's capture after the stream's tail.
  Status enqueue(cudaStream_t stream, Work work) {
    SimStream* target = fromHandle(stream);
    if (target == nullptr) return simError(KILN_STATUS_INVALID_ARGUMENT, "unknown stream");
    if (target->capture != nullptr) {
      SimGraph& graph = *target->capture;
      graph.nodes.push_back({std::move(work), target->tail});
      target->tail = {graph.nodes.size() - 1};
    } else {
      SimStream::Item item;
      item.work = std::move(work);
      target->pending.push_back(std::move(item));
    }
    return Status();
  }

  const SimMemory& memory() const { return memory_; }

 private:
  SimStream* fromHandle(cudaStream_t stream) {
    auto* candidate = reinterpret_cast<SimStream*>(stream);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<SimStream>& s : streams_) {
      if (s.get() == candidate) return candidate;
    }
    return nullptr;
  }
  SimEvent* fromHandle(cudaEvent_t event) {
    auto* candidate = reinterpret_cast<SimEvent*>(event);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<SimEvent>& e : events_) {
      if (e.get() == candidate) return candidate;
    }
    return nullptr;
  }
  static bool contains(const std::vector<size_t>& values, size_t value) {
    return std::find(values.begin(), values.end(), value) != values.end();
  }

  /// CUDA's thread-local capture mode: a call that is unsafe during capture fails on the
  /// capturing thread and invalidates the capture.
  Status refuseDuringCapture(const char* call) {
    if (capturing_stream == nullptr) return Status();
    std::string reason = std::string(call) + " during stream capture";
    if (capturing_stream->capture->error.empty()) capturing_stream->capture->error = reason;
    return simError(KILN_STATUS_FAILED_PRECONDITION,
                    reason +
                        " (CUDA forbids it on a thread that captures a stream: "
                        "cudaErrorStreamCaptureUnsupported)");
  }

  /// `size` bytes, `alignment`-aligned and poisoned, registered in `allocations` (`what`
  /// memory, for messages).
  static Status allocate(SimMemory& allocations, size_t alignment, size_t size, const char* what,
                         void** memory) {
    size_t rounded = std::max<size_t>((size + alignment - 1) / alignment, 1) * alignment;
    void* block = std::aligned_alloc(alignment, rounded);
    if (block == nullptr) {
      return simError(KILN_STATUS_RESOURCE_EXHAUSTED,
                      "out of memory allocating " + std::to_string(size) + " " + what + " bytes");
    }
    std::memset(block, kSimPoisonByte, rounded);
    allocations.add(block, size);
    *memory = block;
    return Status();
  }

  /// Frees `memory`, which `allocator` (registering it in `allocations`) must have returned.
  static Status release(SimMemory& allocations, void* memory, const char* call,
                        const char* allocator) {
    if (memory == nullptr) return Status();
    if (!allocations.remove(memory)) {
      return simError(KILN_STATUS_INVALID_ARGUMENT, std::string(call) + " of " + hex(memory) +
                                                        ", which " + allocator + " did not return");
    }
    std::free(memory);
    return Status();
  }

  /// Runs the stream's queued items in order; the first failure drops the rest, as a faulting
  /// kernel ends a GPU context's queued work. A wait runs the recording stream up to the record
  /// it waits for, so work on other streams happens only when an event orders it before this
  /// stream's: a missing event leaves it unrun (and the memory it would write poisoned).
  Status drain(SimStream& stream) { return drainUntil(stream, nullptr, 0); }

  /// drain, stopping once `event` has completed `generation` (null: all of the stream's work).
  Status drainUntil(SimStream& stream, const SimEvent* event, uint64_t generation) {
    while (!stream.pending.empty()) {
      if (event != nullptr && event->completed >= generation) return Status();
      SimStream::Item item = std::move(stream.pending.front());
      stream.pending.pop_front();
      Status status;
      switch (item.kind) {
        case SimStream::Item::kWork:
          status = item.work();
          break;
        case SimStream::Item::kRecord:
          item.event->completed = std::max(item.event->completed, item.generation);
          if (item.event->timed) item.event->completed_at = std::chrono::steady_clock::now();
          break;
        case SimStream::Item::kWait:
          if (item.event->completed < item.generation && item.event->stream != nullptr) {
            status = drainUntil(*item.event->stream, item.event, item.generation);
          }
          break;
      }
      if (!status.ok()) {
        stream.pending.clear();
        return status;
      }
    }
    return Status();
  }

  /// Device memory (what kernels, copies and memsets may touch) and pinned host memory.
  SimMemory memory_;
  SimMemory pinned_;
  SimLaunchOptions launch_options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<SimStream>> streams_;
  std::vector<std::unique_ptr<SimEvent>> events_;
  std::vector<std::unique_ptr<SimLibrary>> libraries_;
};

Status SimLibraryCall::enqueue(cudaStream_t stream, void* const* buffers, void*) const {
  if (Status s = checkAlignments(common_, buffers); !s.ok()) return s;
  std::vector<void*> addresses(buffers, buffers + binding_bytes_.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (!api_.memory().contains(addresses[i], binding_bytes_[i])) {
      return simError(KILN_STATUS_INVALID_ARGUMENT, label_ + ": binding " + std::to_string(i) +
                                                        " (" + std::to_string(binding_bytes_[i]) +
                                                        " bytes at " + hex(addresses[i]) +
                                                        ") is outside every device allocation");
    }
  }
  return api_.enqueue(stream, [this, addresses]() {
    Status status = compute_(addresses.data());
    return status.ok() ? status : prefixStatus(label_, status);
  });
}

}  // namespace

std::unique_ptr<CudaApi> createSimCudaApi() { return std::make_unique<SimCudaApi>(); }

}  // namespace kiln::runtime::cuda::sim

namespace kiln::runtime {

void registerSimulatedCuda() { cuda::setSimulatedCudaApiFactory(&cuda::sim::createSimCudaApi); }

}  // namespace kiln::runtime
