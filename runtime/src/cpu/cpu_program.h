//===- cpu_program.h - A .kiln program ready to run on the CPU --*- C++ -*-===//
//
// CpuProgram is what a CPU session runs: the artifact's code objects loaded and every kernel
// resolved, every library call prepared, the steps flattened into a ProgramTable,
// a thread pool for the workgroups of dispatches, and a pool of run contexts (arena plus binding
// addresses) so that concurrent runs each get their own and no arena is allocated per run once
// the pool is warm.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_CPU_PROGRAM_H_
#define KILN_RUNTIME_SRC_CPU_CPU_PROGRAM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/kernel_abi.h"
#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/cpu/collectives.h"
#include "runtime/src/cpu/elf_code_object.h"
#include "runtime/src/cpu/library_call.h"
#include "runtime/src/cpu/stream_threads.h"
#include "runtime/src/cpu/thread_pool.h"
#include "runtime/src/program/device_program.h"
#include "runtime/src/program/trace.h"

namespace kiln::runtime::cpu {

class CpuProgram final : public DeviceProgram {
 public:
  /// Loads the code and prepares the library calls of `artifact` (a "cpu" artifact) with a pool
  /// of `num_threads` threads (0: the hardware concurrency).
  /// `collectives` joins the other devices of a partitioned program (null: one device); runs of
  /// such a program take turns.
  static Result<std::unique_ptr<CpuProgram>> create(
      std::shared_ptr<const LoadedArtifact> artifact, size_t num_threads,
      std::shared_ptr<Collectives> collectives = nullptr);

  ~CpuProgram() override;
  CpuProgram(const CpuProgram&) = delete;
  CpuProgram& operator=(const CpuProgram&) = delete;

  /// Runs the program (see kiln_session_run). Thread-safe: concurrent runs each take a run
  /// context of their own from the pool and share the thread pool.
  Status run(size_t input_count, const kiln_tensor_t* const* inputs, size_t output_count,
             kiln_tensor_t** outputs, kiln_tensor_t* const* provided = nullptr) override;

  const LoadedArtifact& artifact() const override { return *artifact_; }
  ProgramStatistics statistics() const override;
  const ProgramTable& table() const override { return table_; }

 private:
  /// What the CPU adds to a step of the table: the kernel a dispatch calls, the library call's
  /// prepared kernel.
  struct CpuStep {
    kiln_cpu_dispatch_fn kernel = nullptr;
    LibraryCallKernel* library_call = nullptr;
    /// A library call over dynamic dimensions, set up per shape (ShapeCalls).
    bool per_shape = false;
  };

  /// The library calls of a program for a range of shapes set up for one shape: per step, its
  /// kernel (null for other steps); and, planned per run, the shape's arena layout.
  struct ShapeCalls {
    std::vector<std::unique_ptr<LibraryCallKernel>> kernels;
    std::vector<LibraryCallKernel*> by_step;
    ArenaLayout arena;
  };

  /// The memory one run uses besides its outputs.
  struct RunContext {
    struct FreeArena {
      void operator()(void* arena) const;
    };
    std::unique_ptr<void, FreeArena> arena;
    /// The arena's bytes (a program planned per run grows it to the largest shape it ran).
    uint64_t arena_capacity = 0;
    /// The address of every binding of every step, in the table's order.
    std::vector<void*> addresses;
    /// The address of every input of the run.
    std::vector<void*> inputs;
    /// The address of every output tensor's data.
    std::vector<void*> output_data;
    std::vector<kiln_tensor_t*> outputs;
    /// A program for a range of shapes: the symbols' values for the run, every binding's
    /// dimensions, and each dispatch's bindings followed by its dimensions (kernel_abi.h).
    std::vector<int64_t> symbol_values;
    std::vector<int64_t> dims;
    std::vector<void*> arguments;
    /// Each step's workgroups for the run (dispatches whose count depends on the shapes).
    std::vector<uint64_t> workgroups;
    /// The library calls set up for the run's shape.
    std::shared_ptr<const ShapeCalls> calls;
  };

  CpuProgram(std::shared_ptr<const LoadedArtifact> artifact, size_t num_threads,
             std::shared_ptr<Collectives> collectives);

  Status prepare();
  /// The library calls set up for the shape of `values` (the symbols) whose bindings have the
  /// run's `dims`: from the cache of the most recent shapes, or set up now.
  Result<std::shared_ptr<const ShapeCalls>> callsFor(const std::vector<int64_t>& values,
                                                     const std::vector<int64_t>& dims);
  /// Lets values passed from one library call to others stay in the calls' own layout
  /// (LibraryCallKernel's layout negotiation).
  /// `kernelOf(i)` is step i's library call kernel, or null where the step takes no part; `count`
  /// adds the values kept in a native layout to native_layout_values_.
  /// A program planned per run passes the run's binding `dims` (a value's bytes are the run's).
  void negotiateLayouts(const std::function<LibraryCallKernel*(size_t)>& kernelOf,
                        bool count = true, const std::vector<int64_t>* dims = nullptr);
  /// Makes the context's arena hold `size` bytes (a program planned per run).
  Status reserveArena(RunContext& context, uint64_t size);
  Result<std::unique_ptr<RunContext>> acquireContext();
  void releaseContext(std::unique_ptr<RunContext> context);
  /// Resolves the binding addresses for `inputs` and the context's outputs, then runs every step.
  Status execute(RunContext& context, const kiln_tensor_t* const* inputs);
  /// Runs step `i` with the context's addresses.
  Status runStep(size_t i, const RunContext& context);
  /// Runs the streams at the same time: stream 0 on the calling thread, each other on a thread
  /// of its own; a step waits for the steps of other streams it lists (ProgramStep::waits).
  /// Records a slice per step into `slices` when `slices` is not null.
  Status runStreams(const RunContext& context, std::vector<TraceSlice>* slices, uint64_t run,
                    uint32_t track);

  std::shared_ptr<const LoadedArtifact> artifact_;
  std::shared_ptr<Collectives> collectives_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<ElfCodeObject>> code_objects_;
  std::vector<std::unique_ptr<LibraryCallKernel>> library_calls_;
  /// How many arena values stay in a library's own layout between calls.
  size_t native_layout_values_ = 0;
  ProgramTable table_;
  RunShapes shapes_;
  /// In a program for a range of shapes: where each dispatch step's arguments start in
  /// RunContext::arguments.
  std::vector<size_t> first_argument_;
  size_t argument_count_ = 0;
  bool per_shape_calls_ = false;
  std::mutex shape_calls_mutex_;
  /// The shapes set up most recently, oldest first; at most kShapeCallsKept.
  std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const ShapeCalls>>> shape_calls_;
  static constexpr size_t kShapeCallsKept = 16;
  /// One per step of `table_`.
  std::vector<CpuStep> steps_;
  /// The steps of each stream, in order (one stream: every step).
  std::vector<std::vector<size_t>> stream_steps_;
  /// Whether a step of another stream waits for each step.
  std::vector<bool> waited_for_;

  std::mutex contexts_mutex_;
  std::vector<std::unique_ptr<RunContext>> free_contexts_;
  std::atomic<uint64_t> arena_count_{0};
  /// The largest arena a run context holds.
  std::atomic<uint64_t> arena_size_{0};
  std::atomic<uint64_t> run_count_{0};
  /// Run the streams other than 0; declared last, so that its threads stop first.
  StreamThreads stream_threads_;
};

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_CPU_PROGRAM_H_
