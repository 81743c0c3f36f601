//===- cpu_program.cpp - A .kiln program ready to run on the CPU ----------===//

#include "runtime/src/cpu/cpu_program.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "runtime/src/cpu/denormals.h"
#include "runtime/src/tensor.h"

namespace kiln::runtime::cpu {
namespace {

namespace fb = kiln::artifact;

size_t resolveThreadCount(size_t requested) {
  if (requested != 0) return requested;
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : hardware;
}

}  // namespace

void CpuProgram::RunContext::FreeArena::operator()(void* arena) const { std::free(arena); }

CpuProgram::CpuProgram(std::shared_ptr<const LoadedArtifact> artifact, size_t num_threads,
                       std::shared_ptr<Collectives> collectives)
    : artifact_(std::move(artifact)),
      collectives_(std::move(collectives)),
      pool_(num_threads, /*openmp=*/true) {}

CpuProgram::~CpuProgram() = default;

Result<std::unique_ptr<CpuProgram>> CpuProgram::create(
    std::shared_ptr<const LoadedArtifact> artifact, size_t num_threads,
    std::shared_ptr<Collectives> collectives) {
  std::unique_ptr<CpuProgram> program(
      new CpuProgram(std::move(artifact), resolveThreadCount(num_threads), std::move(collectives)));
  if (Status s = program->prepare(); !s.ok()) return s;
  return program;
}

Status CpuProgram::prepare() {
  const fb::Artifact& root = artifact_->root();
  const std::string& name = artifact_->name();
  if (root.device()->string_view() != "cpu") {
    return Status(KILN_STATUS_INVALID_ARGUMENT, name + ": the artifact was compiled for device '" +
                                                    root.device()->str() + "', not for the cpu");
  }
  const auto& code_objects = *root.code_objects();
  // Load only the code objects some dispatch uses; the verifier has checked every index.
  std::vector<bool> used(code_objects.size(), false);
  const auto& steps = *artifact_->program().steps();
  for (const fb::Step* step : steps) {
    if (step->kind_type() == fb::StepKind::Dispatch)
      used[step->kind_as_Dispatch()->code_object()] = true;
  }
  code_objects_.resize(code_objects.size());
  for (flatbuffers::uoffset_t i = 0; i < code_objects.size(); ++i) {
    if (!used[i]) continue;
    const fb::CodeObject& code = *code_objects.Get(i);
    std::string what =
        name + ": code object " + std::to_string(i) + " (target '" + code.target()->str() + "')";
    auto loaded = ElfCodeObject::load(code.data()->data(), code.data()->size(), what);
    if (!loaded.ok()) return loaded.status();
    code_objects_[i] = std::move(*loaded);
  }

  auto table = ProgramTable::build(*artifact_);
  if (!table.ok()) return table.status();
  table_ = std::move(*table);
  shapes_ = RunShapes::build(*artifact_, table_);
  if (shapes_.dynamic()) {
    // Each dispatch's bindings, then the address of its bindings' dimensions.
    size_t arguments = 0;
    for (const ProgramStep& step : table_.steps()) {
      first_argument_.push_back(arguments);
      if (step.kind == StepKind::kDispatch) arguments += step.binding_count + 1;
    }
    argument_count_ = arguments;
  }
  steps_.resize(table_.steps().size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ProgramStep& step = table_.steps()[i];
    CpuStep& resolved = steps_[i];
    if (step.kind == StepKind::kDispatch) {
      const fb::Dispatch& dispatch = *step.dispatch;
      const std::string symbol =
          code_objects.Get(dispatch.code_object())->kernels()->Get(dispatch.kernel())->str();
      auto address = code_objects_[dispatch.code_object()]->symbol(symbol);
      if (!address.ok()) {
        return Status(address.status().code(),
                      "step " + std::to_string(i) + ": " + address.status().message());
      }
      resolved.kernel = reinterpret_cast<kiln_cpu_dispatch_fn>(*address);
    } else if (step.kind == StepKind::kLibraryCall &&
               shapes_.varies(step.first_binding, step.binding_count)) {
      // Set up for each shape the runs bring (callsFor).
      resolved.per_shape = true;
      per_shape_calls_ = true;
    } else if (step.kind == StepKind::kLibraryCall) {
      const fb::LibraryCall& call = *step.library_call;
      std::unique_ptr<LibraryCallKernel> kernel;
      if (Status s =
              createLibraryCallKernel(call, artifact_->constantsData(), collectives_, &kernel);
          !s.ok()) {
        return Status(s.code(), name + ": step " + std::to_string(i) + ": " + s.message());
      }
      if (!kernel) {
        return Status(KILN_STATUS_INTERNAL, name + ": step " + std::to_string(i) +
                                                ": library call '" + call.name()->str() +
                                                "' was prepared without a kernel");
      }
      resolved.library_call = kernel.get();
      library_calls_.push_back(std::move(kernel));
    }
  }
  // Calls set up per shape negotiate among themselves once set up (callsFor).
  negotiateLayouts(
      [this](size_t i) { return steps_[i].per_shape ? nullptr : steps_[i].library_call; });
  uint32_t streams = std::max<uint32_t>(artifact_->program().stream_count(), 1);
  stream_steps_.assign(streams, {});
  waited_for_.assign(steps_.size(), false);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ProgramStep& step = table_.steps()[i];
    stream_steps_[step.stream].push_back(i);
    for (uint32_t wait : step.waits) waited_for_[wait] = true;
  }
  return Status();
}

void CpuProgram::negotiateLayouts(const std::function<LibraryCallKernel*(size_t)>& kernelOf,
                                  bool count, const std::vector<int64_t>* dims) {
  // Every step's accesses to each arena value (a BufferRef index names one value; views of it
  // share the index). A value qualifies when one library call writes it first and only library
  // calls that accept the writer's native layout read it.
  struct Access {
    size_t step;
    size_t binding;
  };
  struct Value {
    std::vector<Access> accesses;
    uint64_t size = UINT64_MAX;
    bool qualifies = true;
  };
  std::unordered_map<uint32_t, Value> values;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ProgramStep& step = table_.steps()[i];
    for (size_t b = 0; b < step.binding_count; ++b) {
      const ResolvedBinding& binding = table_.bindings()[step.first_binding + b];
      if (binding.kind != fb::BufferKind::Arena) continue;
      Value& value = values[binding.index];
      value.accesses.push_back({i, b});
      if (step.kind != StepKind::kLibraryCall || kernelOf(i) == nullptr) value.qualifies = false;
    }
  }
  for (auto& [index, value] : values) {
    (void)index;
    if (!value.qualifies || value.accesses.size() < 2) continue;
    const Access& first = value.accesses.front();
    LibraryCallKernel* writer = kernelOf(first.step);
    if (!writer->writes(first.binding)) continue;
    std::shared_ptr<const ActivationLayout> layout = writer->nativeLayout(first.binding);
    if (!layout) continue;
    const kiln_binding_info_t& info = artifact_->steps()[first.step].bindings[first.binding];
    uint64_t size = info.size;
    if (dims != nullptr && shapes_.plannedPerRun())
      size = shapes_.runBytes(table_.steps()[first.step].first_binding + first.binding,
                              kiln_element_type_size(info.element_type), *dims);
    if (layout->byteSize() > size) continue;
    bool all_accept = true;
    for (size_t a = 1; a < value.accesses.size() && all_accept; ++a) {
      const Access& access = value.accesses[a];
      LibraryCallKernel* reader = kernelOf(access.step);
      all_accept = !reader->writes(access.binding) && reader->accepts(access.binding, *layout);
    }
    if (!all_accept) continue;
    for (const Access& access : value.accesses)
      kernelOf(access.step)->useLayout(access.binding, *layout);
    if (count) ++native_layout_values_;
  }
}

Result<std::unique_ptr<CpuProgram::RunContext>> CpuProgram::acquireContext() {
  {
    std::lock_guard<std::mutex> lock(contexts_mutex_);
    if (!free_contexts_.empty()) {
      std::unique_ptr<RunContext> context = std::move(free_contexts_.back());
      free_contexts_.pop_back();
      return context;
    }
  }
  auto context = std::make_unique<RunContext>();
  // A program planned per run gets its arena at its first run, of that run's size.
  if (!shapes_.plannedPerRun())
    if (Status s = reserveArena(*context, artifact_->arenaSize()); !s.ok()) return s;
  context->addresses.resize(table_.bindings().size());
  context->inputs.resize(artifact_->inputs().size(), nullptr);
  context->outputs.resize(artifact_->outputs().size(), nullptr);
  context->output_data.resize(artifact_->outputs().size(), nullptr);
  arena_count_.fetch_add(1, std::memory_order_relaxed);
  return context;
}

Status CpuProgram::reserveArena(RunContext& context, uint64_t size) {
  uint64_t alignment = artifact_->arenaAlignment();
  uint64_t capacity = (size + alignment - 1) / alignment * alignment;
  if (capacity == 0) capacity = alignment;
  if (context.arena && capacity <= context.arena_capacity) return Status();
  context.arena.reset(std::aligned_alloc(alignment, capacity));
  context.arena_capacity = 0;
  if (!context.arena) {
    return Status(KILN_STATUS_RESOURCE_EXHAUSTED, artifact_->name() + ": cannot allocate the " +
                                                      std::to_string(size) +
                                                      "-byte arena of a run");
  }
  context.arena_capacity = capacity;
  uint64_t largest = arena_size_.load(std::memory_order_relaxed);
  while (capacity > largest &&
         !arena_size_.compare_exchange_weak(largest, capacity, std::memory_order_relaxed)) {
  }
  return Status();
}

void CpuProgram::releaseContext(std::unique_ptr<RunContext> context) {
  std::lock_guard<std::mutex> lock(contexts_mutex_);
  free_contexts_.push_back(std::move(context));
}

Status CpuProgram::execute(RunContext& context, const kiln_tensor_t* const* inputs) {
  ScopedFlushDenormals flush;
  for (size_t i = 0; i < context.inputs.size(); ++i) {
    // Kernels never write inputs; the ABI passes every binding as a mutable pointer.
    context.inputs[i] = const_cast<void*>(inputs[i]->host.data());
  }
  for (size_t i = 0; i < context.outputs.size(); ++i)
    context.output_data[i] = context.outputs[i]->host.data();
  if (shapes_.dynamic()) {
    if (Status s = shapes_.bindingDims(context.symbol_values, context.dims); !s.ok()) return s;
    // Library calls set up for the run's shape and, planned per run, its arena layout.
    if (per_shape_calls_ || shapes_.plannedPerRun()) {
      auto calls = callsFor(context.symbol_values, context.dims);
      if (!calls.ok()) return calls.status();
      context.calls = std::move(*calls);
    }
    if (shapes_.plannedPerRun())
      if (Status s = reserveArena(context, context.calls->arena.size); !s.ok()) return s;
  }
  BindingBases bases;
  bases.arena = static_cast<uint8_t*>(context.arena.get());
  if (shapes_.plannedPerRun()) bases.arena_offsets = context.calls->arena.value_offsets.data();
  bases.constants = const_cast<uint8_t*>(artifact_->constantsData());
  bases.inputs = context.inputs.data();
  bases.outputs = context.output_data.data();
  table_.resolveAddresses(bases, context.addresses);
  if (shapes_.dynamic()) {
    context.arguments.resize(argument_count_);
    context.workgroups.resize(steps_.size());
    for (size_t i = 0; i < steps_.size(); ++i) {
      const ProgramStep& step = table_.steps()[i];
      if (step.kind != StepKind::kDispatch) continue;
      void** arguments = context.arguments.data() + first_argument_[i];
      std::copy_n(context.addresses.data() + step.first_binding, step.binding_count, arguments);
      arguments[step.binding_count] = context.dims.data() + shapes_.firstDim(step.first_binding);
      const fb::Dispatch& dispatch = *step.dispatch;
      context.workgroups[i] = dispatch.workgroup_dims() && dispatch.workgroup_dims()->size() != 0
                                  ? shapes_.workgroups(dispatch, step.first_binding, context.dims)
                                  : step.workgroups;
    }
  }

  // While a trace is on, each step is timed (two clock reads) and the run's slices are added
  // at its end.
  const bool traced = trace_.active();
  std::vector<TraceSlice> slices;
  uint64_t run = 0;
  uint32_t track = 0;
  if (traced) {
    run = trace_.beginRun();
    track = trace_.track();
    slices.reserve(steps_.size());
  }
  if (stream_steps_.size() > 1) {
    Status status = runStreams(context, traced ? &slices : nullptr, run, track);
    if (traced) trace_.add(slices);
    return status;
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (traced) slices.push_back({run, i, track, trace_.now(), 0});
    if (Status s = runStep(i, context); !s.ok()) return s;
    if (traced) slices.back().end_ns = trace_.now();
  }
  if (traced) trace_.add(slices);
  return Status();
}

Status CpuProgram::runStep(size_t i, const RunContext& context) {
  const ProgramStep& step = table_.steps()[i];
  void* const* addresses = context.addresses.data() + step.first_binding;
  switch (step.kind) {
    case StepKind::kDispatch: {
      kiln_cpu_dispatch_fn kernel = steps_[i].kernel;
      void* const* arguments =
          shapes_.dynamic() ? context.arguments.data() + first_argument_[i] : addresses;
      uint64_t workgroups = shapes_.dynamic() ? context.workgroups[i] : step.workgroups;
      pool_.parallelFor(static_cast<size_t>(workgroups), [kernel, arguments](size_t id) {
        kernel(arguments, static_cast<int64_t>(id));
      });
      break;
    }
    case StepKind::kLibraryCall:
      if (Status s = (steps_[i].per_shape ? context.calls->by_step[i] : steps_[i].library_call)
                         ->run(addresses);
          !s.ok()) {
        return Status(s.code(),
                      artifact_->name() + ": step " + std::to_string(i) + ": " + s.message());
      }
      break;
    case StepKind::kCopy: {
      uint64_t bytes = step.copy_size;
      if (shapes_.dynamic() && step.copy_size != 0) {
        // The run's elements of the source, row-major at the front of its bytes.
        const kiln_binding_info_t& source = artifact_->steps()[i].bindings[0];
        bytes = shapes_.runBytes(step.first_binding, kiln_element_type_size(source.element_type),
                                 context.dims);
      }
      if (bytes != 0) std::memmove(addresses[1], addresses[0], bytes);
      break;
    }
  }
  return Status();
}

Status CpuProgram::runStreams(const RunContext& context, std::vector<TraceSlice>* slices,
                              uint64_t run, uint32_t track) {
  // What the streams share: which steps have finished, and the first failure. A failed step
  // counts as finished, so that no stream waits forever; every stream stops at its next step.
  struct Progress {
    std::mutex mutex;
    std::condition_variable finished;
    std::vector<uint8_t> done;
    std::atomic<bool> failed{false};
    Status status;
    size_t streams_running = 0;
  } progress;
  progress.done.assign(steps_.size(), 0);
  std::vector<std::vector<TraceSlice>> stream_slices(stream_steps_.size());

  auto runStream = [&](uint32_t stream) {
    for (size_t i : stream_steps_[stream]) {
      const std::vector<uint32_t>& waits = table_.steps()[i].waits;
      if (!waits.empty()) {
        std::unique_lock<std::mutex> lock(progress.mutex);
        progress.finished.wait(lock, [&] {
          if (progress.failed.load(std::memory_order_relaxed)) return true;
          for (uint32_t wait : waits)
            if (!progress.done[wait]) return false;
          return true;
        });
      }
      if (progress.failed.load(std::memory_order_acquire)) return;
      if (slices) stream_slices[stream].push_back({run, i, track, trace_.now(), 0, stream});
      Status status = runStep(i, context);
      if (slices) stream_slices[stream].back().end_ns = trace_.now();
      if (status.ok() && !waited_for_[i]) continue;
      {
        std::lock_guard<std::mutex> lock(progress.mutex);
        progress.done[i] = 1;
        if (!status.ok() && !progress.failed.load(std::memory_order_relaxed)) {
          progress.status = status;
          progress.failed.store(true, std::memory_order_release);
        }
      }
      progress.finished.notify_all();
      if (!status.ok()) return;
    }
  };

  progress.streams_running = stream_steps_.size() - 1;
  for (uint32_t stream = 1; stream < stream_steps_.size(); ++stream) {
    stream_threads_.start([&, stream] {
      runStream(stream);
      std::lock_guard<std::mutex> lock(progress.mutex);
      if (--progress.streams_running == 0) progress.finished.notify_all();
    });
  }
  runStream(0);
  {
    std::unique_lock<std::mutex> lock(progress.mutex);
    progress.finished.wait(lock, [&] { return progress.streams_running == 0; });
  }
  if (slices)
    for (const std::vector<TraceSlice>& part : stream_slices)
      slices->insert(slices->end(), part.begin(), part.end());
  return progress.status;
}

Status CpuProgram::run(size_t input_count, const kiln_tensor_t* const* inputs, size_t output_count,
                       kiln_tensor_t** outputs, kiln_tensor_t* const* provided) {
  RunCounter count_run(run_count_);

  if (Status s = checkRunArguments(*artifact_, input_count, inputs, output_count, outputs);
      !s.ok()) {
    return s;
  }

  // The devices of a partition make their collective calls in the same order: one run at a time.
  std::unique_lock<std::mutex> turn;
  if (collectives_) turn = std::unique_lock<std::mutex>(collectives_->runMutex());
  auto context = acquireContext();
  if (!context.ok()) return context.status();
  RunContext& run_context = **context;
  if (shapes_.dynamic()) {
    if (Status s = shapes_.bindInputs(inputs, run_context.symbol_values); !s.ok()) {
      releaseContext(std::move(*context));
      return s;
    }
  }
  if (Status s = allocateOutputTensors(*artifact_, run_context.outputs, &shapes_,
                                       &run_context.symbol_values, provided);
      !s.ok()) {
    releaseContext(std::move(*context));
    return s;
  }

  Status status = execute(run_context, inputs);
  if (status.ok()) {
    for (size_t i = 0; i < output_count; ++i) {
      outputs[i] = run_context.outputs[i];
      run_context.outputs[i] = nullptr;
    }
  } else {
    releaseTensors(run_context.outputs);
  }
  releaseContext(std::move(*context));
  return status;
}

Result<std::shared_ptr<const CpuProgram::ShapeCalls>> CpuProgram::callsFor(
    const std::vector<int64_t>& values, const std::vector<int64_t>& dims) {
  std::lock_guard<std::mutex> lock(shape_calls_mutex_);
  for (auto it = shape_calls_.begin(); it != shape_calls_.end(); ++it) {
    if (it->first != values) continue;
    auto found = *it;
    shape_calls_.erase(it);
    shape_calls_.push_back(found);
    return found.second;
  }
  auto calls = std::make_shared<ShapeCalls>();
  calls->by_step.assign(steps_.size(), nullptr);
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (!steps_[i].per_shape) continue;
    const ProgramStep& step = table_.steps()[i];
    std::vector<std::vector<int64_t>> run_dims =
        shapes_.bindingsDims(step.first_binding, step.binding_count, dims);
    std::unique_ptr<LibraryCallKernel> kernel;
    if (Status s = createLibraryCallKernel(*step.library_call, artifact_->constantsData(),
                                           collectives_, &kernel, &run_dims);
        !s.ok()) {
      return Status(s.code(),
                    artifact_->name() + ": step " + std::to_string(i) + ": " + s.message());
    }
    calls->by_step[i] = kernel.get();
    calls->kernels.push_back(std::move(kernel));
  }
  negotiateLayouts([&calls](size_t i) { return calls->by_step[i]; }, /*count=*/false, &dims);
  if (shapes_.plannedPerRun())
    if (Status s = shapes_.planArena(values, dims, calls->arena); !s.ok())
      return Status(s.code(), artifact_->name() + ": " + s.message());
  if (shape_calls_.size() == kShapeCallsKept) shape_calls_.erase(shape_calls_.begin());
  shape_calls_.emplace_back(values, calls);
  return std::shared_ptr<const ShapeCalls>(std::move(calls));
}

ProgramStatistics CpuProgram::statistics() const {
  ProgramStatistics stats;
  stats.num_threads = pool_.threadCount();
  stats.run_count = run_count_.load(std::memory_order_relaxed);
  stats.arena_count = arena_count_.load(std::memory_order_relaxed);
  stats.arena_size = shapes_.plannedPerRun() ? arena_size_.load(std::memory_order_relaxed)
                                             : artifact_->arenaSize();
  return stats;
}

}  // namespace kiln::runtime::cpu
