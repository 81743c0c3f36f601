//===- cuda_program.cpp - A .kiln program ready to run on a CUDA GPU ------===//
//
// Creation does everything that can fail or allocate: code loading, kernel lookup, grid sizing,
// library-call preparation and one device allocation laid out for constants, arena, workspace,
// inputs and outputs. A run copies the inputs into pinned staging memory, then executes in one of
// three ways (CudaGraphMode): the first run enqueues every step on its own and synchronizes after
// each, so a failing kernel is named by its description and lazily loaded kernels are loaded
// before any capture; the second records the whole run, from the input upload to the output
// download, into a CUDA graph; every later run replays that graph with one launch.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/cuda_program.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "runtime/src/cuda/cuda_api.h"
#include "runtime/src/cuda/cuda_status.h"
#include "runtime/src/status.h"
#include "runtime/src/tensor.h"

namespace kiln::runtime::cuda {
namespace {

namespace fb = kiln::artifact;

/// The alignment cudaMalloc guarantees, and the least every section of the device allocation gets
/// (the library calls assume it of offset-0 buffers).
constexpr uint64_t kDeviceAlignment = 256;

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// An architecture named by a code object's target: "sm_86" is {86, false}; "sm_90a" (code that
/// runs on exactly that architecture) is {90, true}. "compute_80" is read like "sm_80".
struct TargetArchitecture {
  int number = 0;
  bool specific = false;
};

std::optional<TargetArchitecture> parseTarget(std::string_view target) {
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (target.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = target.substr(prefix.size());
    TargetArchitecture architecture;
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && digits < 4) {
      architecture.number = architecture.number * 10 + (rest[digits] - '0');
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    std::string_view suffix = rest.substr(digits);
    if (suffix == "a" || suffix == "f") {
      architecture.specific = true;
    } else if (!suffix.empty()) {
      return std::nullopt;
    }
    return architecture;
  }
  return std::nullopt;
}

std::string architectureName(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

/// Makes the current device `ordinal` for a scope and restores the caller's afterwards, so that
/// a session never changes which device the embedding application's thread works on.
class ScopedCudaDevice {
 public:
  explicit ScopedCudaDevice(CudaApi& api) : api_(api) {}
  ~ScopedCudaDevice() {
    // Restoring cannot fail for an ordinal getDevice returned; there is no caller to tell.
    if (previous_ >= 0) (void)api_.setDevice(previous_);
  }
  ScopedCudaDevice(const ScopedCudaDevice&) = delete;
  ScopedCudaDevice& operator=(const ScopedCudaDevice&) = delete;

  Status enter(int ordinal) {
    int current = 0;
    if (Status s = api_.getDevice(&current); !s.ok()) return s;
    if (current == ordinal) return Status();
    if (Status s = api_.setDevice(ordinal); !s.ok()) return s;
    previous_ = current;
    return Status();
  }

 private:
  CudaApi& api_;
  int previous_ = -1;
};

/// Whether the environment turns CUDA graphs off (KILN_CUDA_GRAPHS=0).
bool graphsDisabledByEnvironment() {
  const char* value = std::getenv(kCudaGraphsEnvironmentVariable);
  return value != nullptr && std::string_view(value) == "0";
}

}  // namespace

//===----------------------------------------------------------------------===//
// Pure helpers
//===----------------------------------------------------------------------===//

Result<uint32_t> selectCudaCodeObject(const LoadedArtifact& artifact, int major, int minor) {
  const auto& code_objects = *artifact.root().code_objects();
  const int device_number = major * 10 + minor;
  std::optional<uint32_t> best_cubin;
  int best_cubin_number = -1;
  std::optional<uint32_t> best_ptx;
  int best_ptx_number = -1;
  std::string targets;
  for (flatbuffers::uoffset_t i = 0; i < code_objects.size(); ++i) {
    const fb::CodeObject& code = *code_objects.Get(i);
    const bool ptx = code.format() == fb::CodeFormat::Ptx;
    if (!targets.empty()) targets += ", ";
    targets += std::string(ptx                                      ? "ptx "
                           : code.format() == fb::CodeFormat::Cubin ? "cubin "
                                                                    : "host code for ") +
               code.target()->str();
    std::optional<TargetArchitecture> architecture = parseTarget(code.target()->string_view());
    if (!architecture) continue;
    if (code.format() == fb::CodeFormat::Cubin) {
      // CUDA's binary compatibility: a cubin for sm_XY runs on sm_XZ for every Z >= Y (same
      // major, no older minor); an arch-specific one (sm_90a) runs only on its own architecture.
      if (architecture->number == device_number) return i;
      const bool compatible = !architecture->specific && architecture->number / 10 == major &&
                              architecture->number < device_number;
      if (compatible && architecture->number > best_cubin_number) {
        best_cubin = i;
        best_cubin_number = architecture->number;
      }
      continue;
    }
    if (!ptx) continue;
    bool fits = architecture->specific ? architecture->number == device_number
                                       : architecture->number <= device_number;
    if (fits && architecture->number > best_ptx_number) {
      best_ptx = i;
      best_ptx_number = architecture->number;
    }
  }
  // Machine code of the same major architecture loads without a JIT compilation; PTX is the
  // fallback for every other GPU.
  if (best_cubin) return *best_cubin;
  if (best_ptx) return *best_ptx;
  return Status(KILN_STATUS_UNIMPLEMENTED,
                artifact.name() + ": no code object runs on this GPU (" +
                    architectureName(major, minor) + "): the artifact has " +
                    (targets.empty() ? std::string("none") : targets) +
                    "; a cubin must be for the GPU's major architecture and not a newer minor one, "
                    "PTX must not be for a newer architecture (compile with --gpu-arch " +
                    architectureName(major, minor) + ")");
}

uint32_t cudaGridSize(uint64_t work_items, uint32_t block_size, int multiprocessors,
                      int blocks_per_multiprocessor) {
  if (block_size == 0) block_size = 1;
  if (blocks_per_multiprocessor <= 0) blocks_per_multiprocessor = kFallbackBlocksPerMultiprocessor;
  if (multiprocessors <= 0) multiprocessors = 1;
  uint64_t needed = work_items / block_size + (work_items % block_size != 0 ? 1 : 0);
  uint64_t resident =
      static_cast<uint64_t>(multiprocessors) * static_cast<uint64_t>(blocks_per_multiprocessor);
  uint64_t blocks = std::min(needed, resident);
  // gridDim.x is at most 2^31 - 1; the resident bound keeps far below it in practice.
  blocks = std::min<uint64_t>(blocks, std::numeric_limits<int32_t>::max());
  return static_cast<uint32_t>(std::max<uint64_t>(blocks, 1));
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

CudaProgram::CudaProgram(std::shared_ptr<const LoadedArtifact> artifact, CudaDeviceInfo device,
                         std::unique_ptr<CudaApi> api)
    : artifact_(std::move(artifact)), device_(std::move(device)), api_(std::move(api)) {}

CudaProgram::~CudaProgram() {
  // Work still queued reads the memory about to be freed: wait for it, even when the device
  // cannot be made current (the stream belongs to its device whichever is current). Then release
  // everything while the program's device is current (the libraries' handles belong to it),
  // users before what they use: the graph, memory, library calls, their handles, the stream,
  // the code.
  ScopedCudaDevice device(*api_);
  (void)device.enter(device_.ordinal);
  // streams_ holds stream_ (first) once it exists.
  for (cudaStream_t stream : streams_) (void)api_->streamSynchronize(stream);
  if (graphs_.run != nullptr) api_->graphExecDestroy(graphs_.run);
  if (graphs_.steps != nullptr) api_->graphExecDestroy(graphs_.steps);
  if (device_begin_ != nullptr) (void)api_->eventDestroy(device_begin_);
  if (device_end_ != nullptr) (void)api_->eventDestroy(device_end_);
  if (staging_ != nullptr) (void)api_->freeHost(staging_);
  if (device_memory_ != nullptr) (void)api_->free(device_memory_);
  for (auto& [values, state] : shape_states_) releaseShapeState(*state);
  shape_states_.clear();
  library_calls_.clear();
  api_->releaseLibraries();
  for (cudaEvent_t event : step_events_)
    if (event != nullptr) (void)api_->eventDestroy(event);
  for (cudaEvent_t event : fork_events_) (void)api_->eventDestroy(event);
  for (cudaEvent_t event : join_events_) (void)api_->eventDestroy(event);
  releaseTraceEvents();
  for (size_t s = 1; s < streams_.size(); ++s) (void)api_->streamDestroy(streams_[s]);
  if (stream_ != nullptr) (void)api_->streamDestroy(stream_);
  if (library_ != nullptr) (void)api_->unloadLibrary(library_);
}

Result<std::unique_ptr<CudaProgram>> CudaProgram::create(
    std::shared_ptr<const LoadedArtifact> artifact, int device_ordinal) {
  return create(std::move(artifact), device_ordinal, createRealCudaApi());
}

Result<std::unique_ptr<CudaProgram>> CudaProgram::create(
    std::shared_ptr<const LoadedArtifact> artifact, int device_ordinal,
    std::unique_ptr<CudaApi> api, std::shared_ptr<cpu::Collectives> collectives) {
  const std::string& name = artifact->name();
  api->setCollectives(std::move(collectives));
  if (artifact->root().device()->string_view() != "cuda") {
    return Status(KILN_STATUS_INVALID_ARGUMENT, name + ": the artifact was compiled for device '" +
                                                    artifact->root().device()->str() +
                                                    "', not for cuda");
  }
  Result<std::vector<CudaDeviceInfo>> devices = api->devices();
  if (!devices.ok()) return prefixStatus(name, devices.status());
  if (device_ordinal < 0 || static_cast<size_t>(device_ordinal) >= devices->size()) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  name + ": " + api->name() + " device " + std::to_string(device_ordinal) +
                      " does not exist (this process sees " + std::to_string(devices->size()) +
                      " " + api->name() + " device" + (devices->size() == 1 ? "" : "s") + ")");
  }
  CudaApi& cuda = *api;
  std::unique_ptr<CudaProgram> program(new CudaProgram(
      std::move(artifact), (*devices)[static_cast<size_t>(device_ordinal)], std::move(api)));
  ScopedCudaDevice device(cuda);
  if (Status s = device.enter(device_ordinal); !s.ok()) return prefixStatus(name, s);
  if (Status s = program->prepare(); !s.ok()) return s;
  return program;
}

Status CudaProgram::prepare() {
  const std::string& name = artifact_->name();
  if (graphsDisabledByEnvironment()) {
    graph_disabled_reason_ = std::string(kCudaGraphsEnvironmentVariable) + "=0";
  }
  Result<uint32_t> selected = api_->selectCodeObject(*artifact_, device_);
  if (!selected.ok()) return selected.status();
  code_object_ = *selected;
  if (Status s = loadCode(); !s.ok()) return s;

  // The stream does not synchronize with the legacy default stream, so other work of the
  // application never waits on a run or the other way round.
  if (Status s = api_->streamCreate(&stream_); !s.ok()) return prefixStatus(name, s);
  if (Status s = prepareStreams(); !s.ok()) return prefixStatus(name, s);
  if (Status s = prepareSteps(); !s.ok()) return s;
  // Planned per run, the artifact's sizes are the nominal shape's: the first runs grow them.
  std::vector<uint64_t> inputs, outputs;
  for (const kiln_tensor_signature_t& input : artifact_->inputs())
    inputs.push_back(input.byte_size);
  for (const kiln_tensor_signature_t& output : artifact_->outputs())
    outputs.push_back(output.byte_size);
  if (Status s = allocateMemory(artifact_->arenaSize(), inputs, outputs); !s.ok())
    return prefixStatus(name, s);
  if (!shapes_.plannedPerRun()) resolveAddresses();
  return Status();
}

Status CudaProgram::prepareStreams() {
  // The streams past 0 do not synchronize with the legacy default stream either. Each is forked
  // from stream 0 at the start of a run (after the inputs' upload) and joined back before the
  // outputs' download, so that a capture on stream 0 takes them all in.
  uint32_t count = std::max<uint32_t>(artifact_->program().stream_count(), 1);
  streams_.assign(1, stream_);
  for (uint32_t s = 1; s < count; ++s) {
    cudaStream_t stream = nullptr;
    if (Status status = api_->streamCreate(&stream); !status.ok()) return status;
    streams_.push_back(stream);
    cudaEvent_t fork = nullptr, join = nullptr;
    if (Status status = api_->eventCreate(&fork); !status.ok()) return status;
    fork_events_.push_back(fork);
    if (Status status = api_->eventCreate(&join); !status.ok()) return status;
    join_events_.push_back(join);
  }
  const auto& steps = *artifact_->program().steps();
  step_events_.assign(steps.size(), nullptr);
  for (const fb::Step* step : steps) {
    if (!step->waits()) continue;
    for (uint32_t wait : *step->waits()) {
      if (step_events_[wait] != nullptr) continue;
      if (Status status = api_->eventCreate(&step_events_[wait]); !status.ok()) return status;
    }
  }
  return Status();
}

void* CudaProgram::workspace(uint32_t stream) const {
  if (run_shape_ != nullptr && run_shape_->workspace != nullptr) {
    return static_cast<uint8_t*>(run_shape_->workspace) +
           stream * alignUp(run_shape_->workspace_size, layout_.alignment);
  }
  if (workspace_size_ == 0) return nullptr;
  return device_base_ + layout_.workspace + stream * alignUp(workspace_size_, layout_.alignment);
}

Status CudaProgram::loadCode() {
  const fb::CodeObject& code = *artifact_->root().code_objects()->Get(code_object_);
  const std::string what = artifact_->name() + ": code object " + std::to_string(code_object_) +
                           " (" + fb::EnumNameCodeFormat(code.format()) + " for '" +
                           code.target()->str() + "')";
  std::string log;
  Status loaded = api_->loadLibrary(code, &library_, &log);
  if (!loaded.ok()) {
    library_ = nullptr;
    std::string message =
        what + ": the code does not load on " + device_.name + " (" +
        architectureName(device_.compute_capability_major, device_.compute_capability_minor) +
        "): " + loaded.message();
    if (!log.empty()) message += "; JIT log: " + log;
    return Status(loaded.code(), message);
  }

  const auto& names = *code.kernels();
  kernels_.assign(names.size(), nullptr);
  for (flatbuffers::uoffset_t k = 0; k < names.size(); ++k) {
    const std::string symbol = names.Get(k)->str();
    Status found = api_->getKernel(library_, symbol.c_str(), &kernels_[k]);
    if (!found.ok()) {
      // A listed kernel the code does not define is a broken artifact, as on the CPU.
      kiln_status_code_t code_value =
          found.code() == KILN_STATUS_NOT_FOUND ? KILN_STATUS_INVALID_ARGUMENT : found.code();
      return Status(code_value, what + ": kernel '" + symbol +
                                    "' is not defined by the code: " + found.message());
    }
  }
  return Status();
}

Status CudaProgram::prepareSteps() {
  const std::string& name = artifact_->name();
  auto table = ProgramTable::build(*artifact_);
  if (!table.ok()) return table.status();
  table_ = std::move(*table);
  shapes_ = RunShapes::build(*artifact_, table_);
  for (const ResolvedBinding& binding : table_.bindings()) binding_bytes_.push_back(binding.bytes);
  steps_.resize(table_.steps().size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ProgramStep& step = table_.steps()[i];
    CudaStep& resolved = steps_[i];
    switch (step.kind) {
      case StepKind::kDispatch: {
        const fb::Dispatch& dispatch = *step.dispatch;
        resolved.kernel = kernels_[dispatch.kernel()];
        // The verifier has checked that every dispatch of a cuda artifact has `cuda`.
        const fb::CudaLaunch& launch = *dispatch.cuda();
        resolved.block_size = launch.block_size();
        int max_threads = 0;
        Status status = api_->maxThreadsPerBlock(resolved.kernel, &max_threads);
        if (!status.ok()) return prefixStatus(name + ": " + step.label, status);
        if (resolved.block_size > static_cast<uint32_t>(max_threads)) {
          return Status(KILN_STATUS_INVALID_ARGUMENT,
                        name + ": " + step.label + ": blocks of " +
                            std::to_string(resolved.block_size) + " threads exceed the " +
                            std::to_string(max_threads) + " the kernel can run with on " +
                            device_.name);
        }
        // The occupancy only caps the grid (the kernels stride over their work items), so a
        // failed query costs speed, never correctness: fall back to a typical residency.
        int blocks_per_multiprocessor = 0;
        if (!api_->occupancy(resolved.kernel, static_cast<int>(resolved.block_size),
                             &blocks_per_multiprocessor)
                 .ok()) {
          blocks_per_multiprocessor = 0;
        }
        resolved.grid_size = cudaGridSize(launch.work_items(), resolved.block_size,
                                          device_.multiprocessor_count, blocks_per_multiprocessor);
        if (launch.work_items_code() != nullptr && launch.work_items_code()->size() != 0) {
          // Sized for each run (bindRunShapes).
          resolved.work_items_code = launch.work_items_code();
          resolved.blocks_per_multiprocessor = blocks_per_multiprocessor;
        }
        break;
      }
      case StepKind::kLibraryCall: {
        const fb::LibraryCall& call = *step.library_call;
        if (shapes_.varies(step.first_binding, step.binding_count)) {
          // Set up for each shape the runs bring (stateFor).
          resolved.per_shape = true;
          break;
        }
        const std::string where = name + ": step " + std::to_string(i);
        std::unique_ptr<CudaLibraryCall> prepared;
        if (Status s =
                api_->createLibraryCall(call, device_, streams_[step.stream], nullptr, &prepared);
            !s.ok()) {
          return prefixStatus(where, s);
        }
        if (!prepared) {
          return Status(KILN_STATUS_INTERNAL, where + ": library call '" + call.name()->str() +
                                                  "' was prepared without a call");
        }
        workspace_size_ = std::max(workspace_size_, prepared->workspaceSize());
        resolved.library_call = prepared.get();
        library_calls_.push_back(std::move(prepared));
        break;
      }
      case StepKind::kCopy:
        break;
    }
  }
  return Status();
}

Status CudaProgram::allocateMemory(uint64_t arena_size, const std::vector<uint64_t>& input_sizes,
                                   const std::vector<uint64_t>& output_sizes) {
  if (staging_ != nullptr) (void)api_->freeHost(staging_);
  if (device_memory_ != nullptr) (void)api_->free(device_memory_);
  staging_ = device_memory_ = nullptr;
  device_base_ = nullptr;
  // One device allocation holds everything, each section aligned for the library calls and the
  // arena's own alignment: [constants | arena | workspace | inputs... | outputs...]. Inputs and
  // outputs are contiguous so that one copy moves all inputs in and one all outputs out.
  DeviceLayout& layout = layout_;
  layout = DeviceLayout();
  layout.arena_size = arena_size;
  layout.input_sizes = input_sizes;
  layout.output_sizes = output_sizes;
  layout.alignment = std::max<uint64_t>(kDeviceAlignment, artifact_->arenaAlignment());
  uint64_t offset = 0;
  auto place = [&](uint64_t size) {
    uint64_t at = offset;
    offset = alignUp(offset + size, layout.alignment);
    return at;
  };
  layout.constants = place(artifact_->constantsSize());
  layout.arena = place(arena_size);
  layout.workspace = place(alignUp(workspace_size_, layout.alignment) * streams_.size());
  layout.inputs_begin = offset;
  if (shapes_.dynamic()) layout.dims = place(shapes_.dimCount() * sizeof(int64_t));
  for (uint64_t size : input_sizes) layout.inputs.push_back(place(size));
  layout.inputs_end = offset;
  layout.outputs_begin = offset;
  for (uint64_t size : output_sizes) layout.outputs.push_back(place(size));
  layout.outputs_end = offset;
  layout.size = std::max<uint64_t>(offset, layout.alignment);

  // cudaMalloc aligns to 256 bytes; a larger arena alignment needs the base rounded up.
  if (Status s = api_->malloc(&device_memory_, layout.size + (layout.alignment - kDeviceAlignment));
      !s.ok()) {
    device_memory_ = nullptr;
    return s;
  }
  device_base_ = reinterpret_cast<uint8_t*>(
      alignUp(reinterpret_cast<uintptr_t>(device_memory_), layout.alignment));

  // The constants uploaded before any run, so a synchronous wait is fine. Nothing else is
  // initialized: every step writes what it reads (the simulated device, whose fresh memory is
  // NaN, checks it).
  if (artifact_->constantsSize() != 0) {
    if (Status s = api_->memcpyAsync(device_base_ + layout.constants, artifact_->constantsData(),
                                     artifact_->constantsSize(), cudaMemcpyHostToDevice, stream_);
        !s.ok()) {
      return s;
    }
  }
  if (Status s = api_->streamSynchronize(stream_); !s.ok()) return s;

  // Pinned staging for [inputs_begin, outputs_end): copies from and to pinned memory are truly
  // asynchronous, and capturable into a graph because the addresses never change.
  Status s =
      api_->hostAlloc(&staging_, std::max<uint64_t>(layout.outputs_end - layout.inputs_begin, 1));
  if (!s.ok()) staging_ = nullptr;
  return s;
}

void CudaProgram::resolveAddresses(const ShapeState* state) {
  std::vector<void*> inputs, outputs;
  for (uint64_t at : layout_.inputs) inputs.push_back(device_base_ + at);
  for (uint64_t at : layout_.outputs) outputs.push_back(device_base_ + at);
  BindingBases bases;
  bases.arena = device_base_ + layout_.arena;
  if (state != nullptr) bases.arena_offsets = state->arena.value_offsets.data();
  resolved_shape_ = state;
  bases.constants = device_base_ + layout_.constants;
  bases.inputs = inputs.data();
  bases.outputs = outputs.data();
  table_.resolveAddresses(bases, addresses_);
  // cudaLaunchKernel takes an array of pointers to the parameter values: each dispatch's
  // bindings, then, in a program for a range of shapes, the device address of its bindings'
  // dimensions (kernel_abi.h).
  const bool dynamic = shapes_.dynamic();
  const auto& steps = table_.steps();
  first_argument_.assign(steps.size(), 0);
  argument_counts_.assign(steps.size(), 0);
  dims_addresses_.assign(steps.size(), nullptr);
  size_t count = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    first_argument_[i] = count;
    if (steps[i].kind == StepKind::kDispatch)
      argument_counts_[i] = steps[i].binding_count + (dynamic ? 1 : 0);
    count += argument_counts_[i];
  }
  kernel_arguments_.assign(count, nullptr);
  kernel_argument_bytes_.assign(count, 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const ProgramStep& step = steps[i];
    if (step.kind != StepKind::kDispatch) continue;
    void** arguments = kernel_arguments_.data() + first_argument_[i];
    uint64_t* bytes = kernel_argument_bytes_.data() + first_argument_[i];
    for (size_t b = 0; b < step.binding_count; ++b) {
      size_t binding = step.first_binding + b;
      arguments[b] = &addresses_[binding];
      bytes[b] = binding_bytes_[binding];
      // Planned per run, a binding's buffer holds the run's elements (its static size is the
      // nominal shape's).
      if (state != nullptr) {
        const kiln_binding_info_t& info = artifact_->steps()[i].bindings[b];
        bytes[b] = shapes_.runBytes(binding, kiln_element_type_size(info.element_type), dims_);
      }
    }
    if (!dynamic) continue;
    size_t first = shapes_.firstDim(step.first_binding);
    dims_addresses_[i] = device_base_ + layout_.dims + first * sizeof(int64_t);
    arguments[step.binding_count] = &dims_addresses_[i];
    bytes[step.binding_count] =
        (shapes_.firstDim(step.first_binding + step.binding_count) - first) * sizeof(int64_t);
  }
}

Status CudaProgram::bindRunShapes(const kiln_tensor_t* const* inputs) {
  if (Status s = shapes_.bindInputs(inputs, symbol_values_); !s.ok()) return s;
  if (Status s = shapes_.bindingDims(symbol_values_, dims_); !s.ok()) return s;
  run_input_bytes_.clear();
  for (size_t i = 0; i < artifact_->inputs().size(); ++i)
    run_input_bytes_.push_back(inputs[i]->host.byteSize());
  run_output_bytes_.clear();
  for (size_t i = 0; i < artifact_->outputs().size(); ++i) {
    uint64_t bytes = kiln_element_type_size(artifact_->outputs()[i].element_type);
    for (int64_t dim : shapes_.outputDims(i, symbol_values_)) bytes *= static_cast<uint64_t>(dim);
    run_output_bytes_.push_back(bytes);
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    CudaStep& step = steps_[i];
    if (step.work_items_code == nullptr) continue;
    const ProgramStep& program_step = table_.steps()[i];
    size_t first = shapes_.firstDim(program_step.first_binding);
    size_t count =
        shapes_.firstDim(program_step.first_binding + program_step.binding_count) - first;
    int64_t items = 0;
    if (!evaluateDimCode(*step.work_items_code, dims_.data() + first, count, &items) || items < 0) {
      return Status(KILN_STATUS_INTERNAL, artifact_->name() + ": " + program_step.label +
                                              ": its work items do not evaluate for this run");
    }
    step.grid_size = cudaGridSize(static_cast<uint64_t>(items), step.block_size,
                                  device_.multiprocessor_count, step.blocks_per_multiprocessor);
  }
  // The shape's library calls and graphs (its first run checks each step, the next captures).
  run_shape_ = nullptr;
  Result<ShapeState*> state = stateFor(symbol_values_);
  if (!state.ok()) return state.status();
  if (shapes_.plannedPerRun())
    if (Status s = placeRunShape(**state); !s.ok()) return s;
  run_shape_ = *state;
  std::memcpy(static_cast<uint8_t*>(staging_) + (layout_.dims - layout_.inputs_begin), dims_.data(),
              dims_.size() * sizeof(int64_t));
  return Status();
}

Status CudaProgram::placeRunShape(ShapeState& state) {
  // What the shape needs beside what the memory holds.
  uint64_t arena = std::max(layout_.arena_size, state.arena.size);
  bool grows = arena > layout_.arena_size || device_memory_ == nullptr;
  auto largest = [&](std::vector<uint64_t> held, const std::vector<uint64_t>& run) {
    for (size_t i = 0; i < held.size(); ++i) {
      grows |= run[i] > held[i];
      held[i] = std::max(held[i], run[i]);
    }
    return held;
  };
  std::vector<uint64_t> input_sizes = largest(layout_.input_sizes, run_input_bytes_);
  std::vector<uint64_t> output_sizes = largest(layout_.output_sizes, run_output_bytes_);
  if (grows) {
    // Every graph holds the old addresses: each shape's next run checks its steps again and the
    // one after captures anew.
    for (auto& [values, kept] : shape_states_) {
      (void)values;
      if (kept->graphs.run != nullptr) api_->graphExecDestroy(kept->graphs.run);
      if (kept->graphs.steps != nullptr) api_->graphExecDestroy(kept->graphs.steps);
      kept->graphs = Graphs();
    }
    resolved_shape_ = nullptr;
    if (Status s = allocateMemory(arena, input_sizes, output_sizes); !s.ok()) {
      // Nothing is held: the next run allocates again for its own shape.
      if (staging_ != nullptr) (void)api_->freeHost(staging_);
      if (device_memory_ != nullptr) (void)api_->free(device_memory_);
      staging_ = device_memory_ = nullptr;
      device_base_ = nullptr;
      layout_.arena_size = 0;
      layout_.input_sizes.assign(layout_.input_sizes.size(), 0);
      layout_.output_sizes.assign(layout_.output_sizes.size(), 0);
      return prefixStatus(artifact_->name() + ": growing the device memory for a run's shape", s);
    }
  }
  if (resolved_shape_ != &state) resolveAddresses(&state);
  return Status();
}

Result<CudaProgram::ShapeState*> CudaProgram::stateFor(const std::vector<int64_t>& values) {
  // The shapes a service sees repeat; a few are kept, the least recently used dropped (runs
  // serialize and wait for their work, so none is in use).
  constexpr size_t kShapeStatesKept = 8;
  for (auto it = shape_states_.begin(); it != shape_states_.end(); ++it) {
    if (it->first != values) continue;
    auto found = std::move(*it);
    shape_states_.erase(it);
    shape_states_.push_back(std::move(found));
    return shape_states_.back().second.get();
  }
  auto state = std::make_unique<ShapeState>();
  state->by_step.assign(steps_.size(), nullptr);
  size_t workspace_size = 0;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (!steps_[i].per_shape) continue;
    const ProgramStep& step = table_.steps()[i];
    std::vector<std::vector<int64_t>> run_dims =
        shapes_.bindingsDims(step.first_binding, step.binding_count, dims_);
    std::unique_ptr<CudaLibraryCall> prepared;
    Status s = api_->createLibraryCall(*step.library_call, device_, streams_[step.stream],
                                       &run_dims, &prepared);
    if (s.ok() && !prepared) s = Status(KILN_STATUS_INTERNAL, "prepared without a call");
    if (!s.ok()) {
      releaseShapeState(*state);
      return Status(s.code(),
                    artifact_->name() + ": step " + std::to_string(i) + ": " + s.message());
    }
    workspace_size = std::max(workspace_size, prepared->workspaceSize());
    state->by_step[i] = prepared.get();
    state->calls.push_back(std::move(prepared));
  }
  if (shapes_.plannedPerRun())
    if (Status s = shapes_.planArena(values, dims_, state->arena, kDeviceAlignment); !s.ok()) {
      releaseShapeState(*state);
      return Status(s.code(), artifact_->name() + ": " + s.message());
    }
  if (workspace_size > workspace_size_) {
    // More than the program's workspace: this shape's own, per stream.
    state->workspace_size = workspace_size;
    if (Status s = api_->malloc(&state->workspace,
                                alignUp(workspace_size, layout_.alignment) * streams_.size());
        !s.ok()) {
      state->workspace = nullptr;
      releaseShapeState(*state);
      return prefixStatus(artifact_->name() + ": the workspace of a shape's library calls", s);
    }
  }
  if (shape_states_.size() == kShapeStatesKept) {
    if (resolved_shape_ == shape_states_.front().second.get()) resolved_shape_ = nullptr;
    releaseShapeState(*shape_states_.front().second);
    shape_states_.erase(shape_states_.begin());
  }
  shape_states_.emplace_back(values, std::move(state));
  return shape_states_.back().second.get();
}

void CudaProgram::releaseShapeState(ShapeState& state) {
  if (state.graphs.run != nullptr) api_->graphExecDestroy(state.graphs.run);
  if (state.graphs.steps != nullptr) api_->graphExecDestroy(state.graphs.steps);
  state.graphs = Graphs();
  state.calls.clear();
  state.by_step.clear();
  if (state.workspace != nullptr) (void)api_->free(state.workspace);
  state.workspace = nullptr;
}

//===----------------------------------------------------------------------===//
// Runs
//===----------------------------------------------------------------------===//

Status CudaProgram::enqueueStep(size_t index) {
  const ProgramStep& step = table_.steps()[index];
  const CudaStep& cuda = steps_[index];
  void* const* addresses = addresses_.data() + step.first_binding;
  cudaStream_t stream = streams_[step.stream];
  switch (step.kind) {
    case StepKind::kDispatch: {
      void** arguments = argument_counts_[index] != 0
                             ? kernel_arguments_.data() + first_argument_[index]
                             : nullptr;
      return api_->launchKernel(cuda.kernel, cuda.grid_size, cuda.block_size, arguments,
                                kernel_argument_bytes_.data() + first_argument_[index], stream);
    }
    case StepKind::kLibraryCall: {
      const CudaLibraryCall* call = cuda.per_shape ? run_shape_->by_step[index] : cuda.library_call;
      return call->enqueue(stream, addresses, workspace(step.stream));
    }
    case StepKind::kCopy: {
      uint64_t bytes = step.copy_size;
      if (shapes_.dynamic() && bytes != 0) {
        // The run's elements of the source, row-major at the front of its bytes.
        const kiln_binding_info_t& source = artifact_->steps()[index].bindings[0];
        bytes = shapes_.runBytes(step.first_binding, kiln_element_type_size(source.element_type),
                                 dims_);
      }
      if (bytes == 0) return Status();
      return api_->memcpyAsync(addresses[1], addresses[0], bytes, cudaMemcpyDeviceToDevice, stream);
    }
  }
  return Status(KILN_STATUS_INTERNAL, "unknown step kind");
}

Status CudaProgram::enqueueRun(bool check_each_step, bool timed) {
  auto* staging = static_cast<uint8_t*>(staging_);
  // A section of the staging memory to the same offset of the device's, or back.
  auto copy = [&](uint64_t at, uint64_t bytes, bool upload) {
    if (bytes == 0) return Status();
    uint8_t* device = device_base_ + at;
    uint8_t* host = staging + (at - layout_.inputs_begin);
    return upload ? api_->memcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_)
                  : api_->memcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_);
  };
  // A program for a range of shapes moves the run's dimensions and each input's bytes for the
  // run; a static one, the whole region at once.
  if (shapes_.dynamic()) {
    Status s = copy(layout_.dims, shapes_.dimCount() * sizeof(int64_t), true);
    for (size_t i = 0; s.ok() && i < layout_.inputs.size(); ++i)
      s = copy(layout_.inputs[i], run_input_bytes_[i], true);
    if (!s.ok()) return prefixStatus(artifact_->name() + ": uploading the inputs", s);
  } else if (Status s = copy(layout_.inputs_begin, layout_.inputs_end - layout_.inputs_begin, true);
             !s.ok()) {
    return prefixStatus(artifact_->name() + ": uploading the inputs", s);
  }
  if (timed) {
    if (Status s = api_->eventRecord(trace_origin_, stream_); !s.ok())
      return prefixStatus(artifact_->name() + ": recording the trace's origin", s);
  }
  if (Status s = enqueueSteps(check_each_step, timed); !s.ok()) return s;
  Status s;
  if (shapes_.dynamic()) {
    for (size_t i = 0; s.ok() && i < layout_.outputs.size(); ++i)
      s = copy(layout_.outputs[i], run_output_bytes_[i], false);
  } else {
    s = copy(layout_.outputs_begin, layout_.outputs_end - layout_.outputs_begin, false);
  }
  if (!s.ok()) return prefixStatus(artifact_->name() + ": downloading the outputs", s);
  return Status();
}

Status CudaProgram::enqueueSteps(bool check_each_step, bool timed) {
  // Fork: the other streams start after the upload.
  for (size_t s = 1; s < streams_.size(); ++s) {
    Status status = api_->eventRecord(fork_events_[s - 1], stream_);
    if (status.ok()) status = api_->streamWaitEvent(streams_[s], fork_events_[s - 1]);
    if (!status.ok())
      return prefixStatus(artifact_->name() + ": forking stream " + std::to_string(s), status);
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ProgramStep& step = table_.steps()[i];
    cudaStream_t stream = streams_[step.stream];
    Status status;
    for (uint32_t wait : step.waits) {
      status = api_->streamWaitEvent(stream, step_events_[wait]);
      if (!status.ok()) break;
    }
    if (status.ok() && timed) status = api_->eventRecord(trace_begin_[i], stream);
    if (status.ok()) status = enqueueStep(i);
    if (status.ok() && timed) status = api_->eventRecord(trace_end_[i], stream);
    if (status.ok() && step_events_[i] != nullptr)
      status = api_->eventRecord(step_events_[i], stream);
    // Waiting here attributes an asynchronous fault (an illegal address, a trap) to the step
    // that caused it.
    if (status.ok() && check_each_step) status = api_->streamSynchronize(stream);
    if (!status.ok()) return prefixStatus(artifact_->name() + ": " + step.label, status);
  }
  // Join: the download waits for every stream.
  for (size_t s = 1; s < streams_.size(); ++s) {
    Status status = api_->eventRecord(join_events_[s - 1], streams_[s]);
    if (status.ok()) status = api_->streamWaitEvent(stream_, join_events_[s - 1]);
    if (!status.ok())
      return prefixStatus(artifact_->name() + ": joining stream " + std::to_string(s), status);
  }
  return Status();
}

Status CudaProgram::timeDevice(size_t iterations, double* milliseconds) {
  if (iterations != 0 && milliseconds == nullptr)
    return Status(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_time_device: out_ms is NULL");
  std::lock_guard<std::mutex> lock(run_mutex_);
  if (eager_runs_ + graph_runs_ == 0) {
    return Status(KILN_STATUS_FAILED_PRECONDITION,
                  "kiln_session_time_device: " + artifact_->name() +
                      " has not run yet; the steps are timed on the inputs of the last run "
                      "(kiln_session_run first)");
  }
  ScopedCudaDevice device(*api_);
  if (Status s = device.enter(device_.ordinal); !s.ok()) return s;
  if (device_end_ == nullptr) {
    // Both events, or whichever a failed earlier call left missing.
    Status status = device_begin_ != nullptr ? Status() : api_->timedEventCreate(&device_begin_);
    if (status.ok()) status = api_->timedEventCreate(&device_end_);
    if (!status.ok())
      return prefixStatus(artifact_->name() + ": creating the timing events", status);
  }
  // The steps' own graph, captured like the run's (which the first runs have already made
  // possible: kernels loaded, graphs on or off for a reason).
  Graphs& graphs = this->graphs();
  if (graphs.steps == nullptr && graphs.mode == CudaGraphMode::kReplay) {
    if (Status s = capture(/*steps_only=*/true, &graphs.steps); !s.ok())
      return prefixStatus(artifact_->name() + ": capturing the steps", s);
  }
  for (size_t i = 0; i < iterations; ++i) {
    Status status = api_->eventRecord(device_begin_, stream_);
    if (status.ok()) {
      status = graphs.steps != nullptr ? api_->graphLaunch(graphs.steps, stream_)
                                       : enqueueSteps(/*check_each_step=*/false, /*timed=*/false);
    }
    if (status.ok()) status = api_->eventRecord(device_end_, stream_);
    if (status.ok()) status = api_->streamSynchronize(stream_);
    float elapsed = 0;
    if (status.ok()) status = api_->eventElapsed(device_begin_, device_end_, &elapsed);
    if (!status.ok()) {
      for (cudaStream_t stream : streams_) (void)api_->streamSynchronize(stream);
      return prefixStatus(artifact_->name() + ": timing the steps", status);
    }
    milliseconds[i] = elapsed;
  }
  return Status();
}

Status CudaProgram::captureGraph() { return capture(/*steps_only=*/false, &graphs().run); }

Status CudaProgram::capture(bool steps_only, cudaGraphExec_t* out) {
  if (Status s = api_->beginCapture(stream_); !s.ok()) return s;
  Status enqueued = steps_only ? enqueueSteps(/*check_each_step=*/false, /*timed=*/false)
                               : enqueueRun(/*check_each_step=*/false);
  // The capture must end whatever happened, or the stream stays unusable.
  cudaGraph_t graph = nullptr;
  Status ended = api_->endCapture(stream_, &graph);
  if (!enqueued.ok() || !ended.ok() || graph == nullptr) {
    if (graph != nullptr) api_->graphDestroy(graph);
    // A capture error is not sticky: clear it so the eager run that follows starts clean.
    api_->clearLastError();
    if (!enqueued.ok()) return enqueued;
    if (!ended.ok()) return ended;
    return Status(KILN_STATUS_INTERNAL, "ending the capture returned no graph");
  }
  cudaGraphExec_t exec = nullptr;
  Status instantiated = api_->graphInstantiate(graph, &exec);
  api_->graphDestroy(graph);
  if (!instantiated.ok()) return instantiated;
  *out = exec;
  return Status();
}

void CudaProgram::releaseTraceEvents() {
  for (cudaEvent_t event : trace_begin_)
    if (event != nullptr) (void)api_->eventDestroy(event);
  for (cudaEvent_t event : trace_end_)
    if (event != nullptr) (void)api_->eventDestroy(event);
  if (trace_origin_ != nullptr) (void)api_->eventDestroy(trace_origin_);
  trace_origin_ = nullptr;
  trace_begin_.clear();
  trace_end_.clear();
}

Status CudaProgram::executeTimed(uint64_t run, uint32_t track, int64_t origin_ns,
                                 std::vector<TraceSlice>* slices) {
  if (trace_origin_ == nullptr) {
    Status status = api_->timedEventCreate(&trace_origin_);
    trace_begin_.assign(steps_.size(), nullptr);
    trace_end_.assign(steps_.size(), nullptr);
    for (size_t i = 0; status.ok() && i < steps_.size(); ++i) {
      status = api_->timedEventCreate(&trace_begin_[i]);
      if (status.ok()) status = api_->timedEventCreate(&trace_end_[i]);
    }
    if (!status.ok()) {
      // Made again by the next traced run, never used half made.
      releaseTraceEvents();
      return prefixStatus(artifact_->name() + ": creating the trace's events", status);
    }
  }
  if (Status status = runEagerly(/*timed=*/true); !status.ok()) return status;
  for (size_t i = 0; i < steps_.size(); ++i) {
    float begin_ms = 0, end_ms = 0;
    Status status = api_->eventElapsed(trace_origin_, trace_begin_[i], &begin_ms);
    if (status.ok()) status = api_->eventElapsed(trace_origin_, trace_end_[i], &end_ms);
    if (!status.ok())
      return prefixStatus(artifact_->name() + ": timing " + table_.steps()[i].label, status);
    TraceSlice slice;
    slice.run = run;
    slice.step = i;
    slice.track = track;
    slice.stream = table_.steps()[i].stream;
    slice.begin_ns = origin_ns + static_cast<int64_t>(static_cast<double>(begin_ms) * 1e6);
    slice.end_ns = origin_ns + static_cast<int64_t>(static_cast<double>(end_ms) * 1e6);
    slices->push_back(slice);
  }
  return Status();
}

Status CudaProgram::execute() {
  Graphs& graphs = this->graphs();
  if (graphs.mode == CudaGraphMode::kCapture) {
    if (Status captured = captureGraph(); captured.ok()) {
      graphs.mode = CudaGraphMode::kReplay;
    } else {
      graphs.mode = CudaGraphMode::kDisabled;
      graph_disabled_reason_ = "the capture failed: " + captured.message();
    }
  }

  if (graphs.mode == CudaGraphMode::kReplay) {
    ++graph_runs_;
    Status status = api_->graphLaunch(graphs.run, stream_);
    if (status.ok()) status = api_->streamSynchronize(stream_);
    if (!status.ok()) {
      return prefixStatus(artifact_->name() + ": running the program's CUDA graph (" +
                              std::string(kCudaGraphsEnvironmentVariable) +
                              "=0 runs the steps one by one)",
                          status);
    }
    return Status();
  }

  return runEagerly(/*timed=*/false);
}

Status CudaProgram::runEagerly(bool timed) {
  // The first run checks every step on its own; later eager runs (graphs off, or traced) do not
  // wait between steps.
  Graphs& graphs = this->graphs();
  const bool first = graphs.mode == CudaGraphMode::kEager;
  ++eager_runs_;
  Status status = enqueueRun(/*check_each_step=*/first, timed);
  if (status.ok()) {
    status = api_->streamSynchronize(stream_);
    if (!status.ok()) status = prefixStatus(artifact_->name() + ": running the program", status);
  } else {
    // Let whatever was enqueued finish before the next run reuses the staging memory; the
    // enqueue error is the one to report.
    for (cudaStream_t stream : streams_) (void)api_->streamSynchronize(stream);
  }
  if (status.ok() && first) {
    graphs.mode =
        graph_disabled_reason_.empty() ? CudaGraphMode::kCapture : CudaGraphMode::kDisabled;
  }
  return status;
}

Status CudaProgram::run(size_t input_count, const kiln_tensor_t* const* inputs, size_t output_count,
                        kiln_tensor_t** outputs, kiln_tensor_t* const* provided) {
  RunCounter count_run(run_count_);

  if (Status s = checkRunArguments(*artifact_, input_count, inputs, output_count, outputs);
      !s.ok()) {
    return s;
  }
  std::lock_guard<std::mutex> lock(run_mutex_);

  // A traced run runs its steps one by one rather than as the CUDA graph, with a timed event
  // before and after each (executeTimed): a slice per step, on the GPU's clock, placed from
  // the host time the run was enqueued.
  const bool traced = trace_.active();
  std::vector<TraceSlice> slices;
  ScopedCudaDevice device(*api_);
  Status status = device.enter(device_.ordinal);
  // A program for a range of shapes sets up the run's shape first (its library calls on the
  // device); its outputs have the run's shapes.
  if (status.ok() && shapes_.dynamic()) status = bindRunShapes(inputs);
  std::vector<kiln_tensor_t*> results;
  if (status.ok())
    status = allocateOutputTensors(*artifact_, results, &shapes_, &symbol_values_, provided);
  if (status.ok()) {
    auto* staging = static_cast<uint8_t*>(staging_);
    for (size_t i = 0; i < input_count; ++i) {
      const HostTensor& host = inputs[i]->host;
      if (host.byteSize() != 0) {
        std::memcpy(staging + (layout_.inputs[i] - layout_.inputs_begin), host.data(),
                    host.byteSize());
      }
    }
    status =
        traced ? executeTimed(trace_.beginRun(), trace_.track(), trace_.now(), &slices) : execute();
  }
  if (!status.ok()) {
    releaseTensors(results);
    return status;
  }
  const auto* staging = static_cast<const uint8_t*>(staging_);
  for (size_t i = 0; i < output_count; ++i) {
    HostTensor& host = results[i]->host;
    if (host.byteSize() != 0) {
      std::memcpy(host.data(), staging + (layout_.outputs[i] - layout_.inputs_begin),
                  host.byteSize());
    }
    outputs[i] = results[i];
  }
  if (traced) trace_.add(slices);
  return Status();
}

ProgramStatistics CudaProgram::statistics() const {
  ProgramStatistics stats;
  // The caller's thread enqueues the whole run; the GPU does the rest.
  stats.num_threads = 1;
  stats.run_count = run_count_.load(std::memory_order_relaxed);
  stats.arena_count = 1;
  if (shapes_.plannedPerRun()) {
    // The arena grows with the shapes runs bring.
    std::lock_guard<std::mutex> lock(run_mutex_);
    stats.arena_size = layout_.arena_size;
  } else {
    stats.arena_size = artifact_->arenaSize();
  }
  return stats;
}

CudaProgramStatistics CudaProgram::cudaStatistics() const {
  std::lock_guard<std::mutex> lock(run_mutex_);
  CudaProgramStatistics stats;
  stats.device_ordinal = device_.ordinal;
  stats.code_object = code_object_;
  stats.graph_mode = graphs().mode;
  stats.graph_disabled_reason = graph_disabled_reason_;
  stats.eager_runs = eager_runs_;
  stats.graph_runs = graph_runs_;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (table_.steps()[i].kind == StepKind::kDispatch)
      stats.dispatch_grid_sizes.push_back(steps_[i].grid_size);
  }
  stats.device_bytes = layout_.size;
  return stats;
}

}  // namespace kiln::runtime::cuda
