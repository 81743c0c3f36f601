//===- cuda_program.h - A .kiln program ready to run on a CUDA GPU -*- C++ -*-===//
//
// CudaProgram is what a CUDA session runs: the code object that fits the GPU loaded through the
// CUDA runtime's library API with every kernel resolved and its grid sized, every library call
// prepared, and all the device memory a run needs allocated once: constants (uploaded at
// creation), the arena, the library calls' workspace, a device buffer for every input and
// output, and pinned host staging buffers for them. Every binding's device address is therefore
// fixed when the session is created, so the whole run (input upload, steps, output download)
// can be captured once as a CUDA graph and replayed. (A program for a range of shapes has a
// graph per shape; one planned per run also grows that memory to the shapes runs bring,
// dropping the graphs, and points its bindings at each shape's plan.) A program compiled with
// several streams gets a CUDA stream for each (stream 0 uploads, downloads and starts the capture;
// the others fork from it and join back with events, their steps ordered by events), and a library
// workspace per stream.
//
// Only built with KILN_HAVE_CUDA; links cudart, cuBLASLt and cuDNN, never libcuda.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_CUDA_PROGRAM_H_
#define KILN_RUNTIME_SRC_CUDA_CUDA_PROGRAM_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/cuda/cuda_device.h"
#include "runtime/src/cuda/cuda_library_call.h"
#include "runtime/src/program/device_program.h"
#include "runtime/src/program/run_shapes.h"

namespace kiln::runtime::cpu {
class Collectives;
}

namespace kiln::runtime::cuda {

class CudaApi;

/// The environment variable that turns CUDA graphs off when set to "0".
inline constexpr const char* kCudaGraphsEnvironmentVariable = "KILN_CUDA_GRAPHS";

/// The resident blocks per multiprocessor assumed when the occupancy query has no answer.
inline constexpr int kFallbackBlocksPerMultiprocessor = 4;

/// Returns the index of the code object of `artifact` (a verified "cuda" artifact) to load on a
/// GPU of compute capability `major`.`minor`: a Cubin for exactly that architecture ("sm_86", or
/// its arch-specific "sm_90a"); otherwise the newest Cubin of the same major architecture and an
/// older minor one (CUDA's binary compatibility: sm_80 code runs on sm_86 and sm_89; arch-specific
/// cubins never run elsewhere); otherwise the Ptx object of the highest architecture not above the
/// GPU's, which the driver compiles for it. UNIMPLEMENTED naming the GPU's architecture and
/// every target the artifact has when none fits. Needs no GPU.
Result<uint32_t> selectCudaCodeObject(const LoadedArtifact& artifact, int major, int minor);

/// The number of blocks a dispatch launches: enough blocks of `block_size` threads for one
/// thread per work item, but no more than the GPU holds at once (`multiprocessors` x
/// `blocks_per_multiprocessor`, the latter replaced by kFallbackBlocksPerMultiprocessor when not
/// positive), since the kernels stride over their work items; at least 1.
uint32_t cudaGridSize(uint64_t work_items, uint32_t block_size, int multiprocessors,
                      int blocks_per_multiprocessor);

/// How a CudaProgram executes its runs.
enum class CudaGraphMode {
  /// The next run launches the steps one by one (the first run, which also checks each step).
  kEager,
  /// The next run records the steps into a CUDA graph, then launches it.
  kCapture,
  /// Runs launch the recorded graph.
  kReplay,
  /// Every run launches the steps one by one: graphs are off (KILN_CUDA_GRAPHS=0) or the
  /// capture failed.
  kDisabled,
};

/// What a CudaProgram has done and holds, beyond ProgramStatistics.
struct CudaProgramStatistics {
  /// The device and the code object loaded for it.
  int device_ordinal = 0;
  uint32_t code_object = 0;
  CudaGraphMode graph_mode = CudaGraphMode::kEager;
  /// Why graphs are off (kDisabled); empty otherwise.
  std::string graph_disabled_reason;
  /// Runs that launched the steps one by one, and runs that launched the graph.
  uint64_t eager_runs = 0;
  uint64_t graph_runs = 0;
  /// The grid size (blocks) of every dispatch step, in step order.
  std::vector<uint32_t> dispatch_grid_sizes;
  /// The bytes of the one device allocation (constants, arena, workspace, inputs, outputs).
  uint64_t device_bytes = 0;
};

/// A "cuda" artifact loaded on one GPU.
///
/// Thread safety: `run` may be called from any number of threads, but the runs of one program
/// serialize on a mutex: they share the one arena, the input/output buffers, the stream and the
/// graph. Sessions (each with its own program) run concurrently; one session per concurrent
/// caller gives parallelism on the GPU.
class CudaProgram final : public DeviceProgram {
 public:
  /// Prepares `artifact` on the GPU `device_ordinal`. UNAVAILABLE (probeCudaDevices' message)
  /// when there is no GPU; INVALID_ARGUMENT for an ordinal past the devices, or code that does
  /// not load or lacks a kernel (naming the code object and kernel); UNIMPLEMENTED when no code
  /// object fits the GPU; the status of any failing CUDA, cuBLASLt or cuDNN call.
  static Result<std::unique_ptr<CudaProgram>> create(std::shared_ptr<const LoadedArtifact> artifact,
                                                     int device_ordinal);
  /// The same on the CUDA that `api` is: the real one, or the simulated device. `collectives`
  /// joins the devices of a split model (null when it is not split): its nccl.* calls run
  /// between them (CudaApi::setCollectives).
  static Result<std::unique_ptr<CudaProgram>> create(
      std::shared_ptr<const LoadedArtifact> artifact, int device_ordinal,
      std::unique_ptr<CudaApi> api, std::shared_ptr<cpu::Collectives> collectives = nullptr);

  ~CudaProgram() override;
  CudaProgram(const CudaProgram&) = delete;
  CudaProgram& operator=(const CudaProgram&) = delete;

  /// Runs the program (see kiln_session_run). Thread-safe; runs serialize (see the class).
  Status run(size_t input_count, const kiln_tensor_t* const* inputs, size_t output_count,
             kiln_tensor_t** outputs, kiln_tensor_t* const* provided = nullptr) override;
  /// The steps without the upload and the download, as a CUDA graph of their own (or one by one
  /// where graphs are off), between two timed events on the stream; on the last run's inputs.
  Status timeDevice(size_t iterations, double* milliseconds) override;

  const LoadedArtifact& artifact() const override { return *artifact_; }
  ProgramStatistics statistics() const override;
  const ProgramTable& table() const override { return table_; }
  CudaProgramStatistics cudaStatistics() const;

 private:
  /// What the CUDA device adds to a step of the table: the kernel a dispatch launches and its
  /// grid, the library call prepared on the stream.
  struct CudaStep {
    cudaKernel_t kernel = nullptr;
    uint32_t grid_size = 1;
    uint32_t block_size = 1;
    /// A kernel of a program for a range of shapes whose work items the run's sizes give
    /// (CudaLaunch.work_items_code), and the device's blocks per multiprocessor for it.
    const flatbuffers::Vector<int64_t>* work_items_code = nullptr;
    int blocks_per_multiprocessor = 0;
    const CudaLibraryCall* library_call = nullptr;
    /// A library call set up for each shape the runs bring (shape_states_).
    bool per_shape = false;
  };

  /// How runs execute (CudaGraphMode), the run's graph and timeDevice's graph of the steps:
  /// the program's, or one shape's (a graph holds its launches' grids and library plans).
  struct Graphs {
    CudaGraphMode mode = CudaGraphMode::kEager;
    cudaGraphExec_t run = nullptr;
    cudaGraphExec_t steps = nullptr;
  };

  /// One shape of a program for a range of shapes: its library calls, their workspace where it
  /// outgrows the program's, and its graphs.
  struct ShapeState {
    std::vector<const CudaLibraryCall*> by_step;
    std::vector<std::unique_ptr<CudaLibraryCall>> calls;
    void* workspace = nullptr;
    size_t workspace_size = 0;
    Graphs graphs;
    /// A program planned per run: where the shape's plan puts the arena values.
    ArenaLayout arena;
  };
  /// The graphs of the run's shape, or the program's.
  Graphs& graphs() { return run_shape_ != nullptr ? run_shape_->graphs : graphs_; }
  const Graphs& graphs() const { return run_shape_ != nullptr ? run_shape_->graphs : graphs_; }

  /// How the one device allocation is laid out (byte offsets from its aligned base).
  struct DeviceLayout {
    uint64_t constants = 0;
    uint64_t arena = 0;
    uint64_t workspace = 0;
    /// One per input / output; the pinned staging allocation lays them out the same way,
    /// relative to `inputs_begin`.
    std::vector<uint64_t> inputs;
    std::vector<uint64_t> outputs;
    uint64_t inputs_begin = 0;
    uint64_t inputs_end = 0;
    /// A program for a range of shapes: every binding's dimensions for the run (int64), the
    /// first thing uploaded (at inputs_begin).
    uint64_t dims = 0;
    uint64_t outputs_begin = 0;
    uint64_t outputs_end = 0;
    uint64_t size = 0;
    uint64_t alignment = 256;
    /// What the arena, each input and each output can hold (a program planned per run grows
    /// them to the shapes its runs bring).
    uint64_t arena_size = 0;
    std::vector<uint64_t> input_sizes, output_sizes;
  };

  CudaProgram(std::shared_ptr<const LoadedArtifact> artifact, CudaDeviceInfo device,
              std::unique_ptr<CudaApi> api);

  Status prepare();
  /// Creates the streams past 0 and the events that order them.
  Status prepareStreams();
  /// The workspace of the library calls of `stream`.
  void* workspace(uint32_t stream) const;
  Status loadCode();
  Status prepareSteps();
  /// Lays out and allocates the device memory (and the pinned staging) for an arena of
  /// `arena_size` bytes and inputs and outputs of these sizes, freeing what was there; uploads
  /// the constants.
  Status allocateMemory(uint64_t arena_size, const std::vector<uint64_t>& input_sizes,
                        const std::vector<uint64_t>& output_sizes);
  /// A program planned per run: grows the memory where the run's shape (its arena plan, and
  /// run_input_bytes_ and run_output_bytes_) needs more (every shape's graphs then dropped:
  /// they hold the old addresses) and points the bindings at the shape's plan.
  Status placeRunShape(ShapeState& state);
  /// A run of a program for a range of shapes: the symbols read off `inputs`, every binding's
  /// dimensions into the staging memory, the kernels' grids, the library calls of the shape.
  Status bindRunShapes(const kiln_tensor_t* const* inputs);
  /// The run's shape: its library calls and graphs (cached, the least recently used dropped).
  Result<ShapeState*> stateFor(const std::vector<int64_t>& values);
  void releaseShapeState(ShapeState& state);
  /// Resolves every binding to its device address and points the kernels' argument arrays at
  /// them (a program planned per run: at `state`'s plan, each argument as large as the run's
  /// binding).
  void resolveAddresses(const ShapeState* state = nullptr);

  /// Enqueues the input upload, every step and the output download on the stream. With
  /// `check_each_step`, synchronizes after each step so that a failing kernel is named. With
  /// `timed`, records the trace events: the origin after the upload, and each step's begin and
  /// end on its stream.
  Status enqueueRun(bool check_each_step, bool timed = false);
  /// The part of enqueueRun between the upload and the download: the streams forked, every step,
  /// the streams joined.
  Status enqueueSteps(bool check_each_step, bool timed);
  Status enqueueStep(size_t index);
  /// Records enqueueRun into a graph and instantiates it. On failure the stream is out of
  /// capture again and graphs are disabled with the reason; the run goes on eagerly.
  Status captureGraph();
  /// Records enqueueRun, or enqueueSteps alone, into a graph instantiated into `*out`; on
  /// failure the stream is out of capture again and the error is cleared.
  Status capture(bool steps_only, cudaGraphExec_t* out);
  Status execute();
  /// The steps one by one (enqueueRun) and a wait for them; the first run of a program also
  /// checks each step and then lets the next run capture the graph.
  Status runEagerly(bool timed);
  /// A traced run: the steps one by one (not the graph), timed by events, each a slice of
  /// `slices` (run number and track given) placed on the host clock at `origin_ns`.
  Status executeTimed(uint64_t run, uint32_t track, int64_t origin_ns,
                      std::vector<TraceSlice>* slices);
  /// Destroys the trace's events (the destructor, or a traced run that could not make them all).
  void releaseTraceEvents();

  std::shared_ptr<const LoadedArtifact> artifact_;
  CudaDeviceInfo device_;
  /// What the program talks to: CUDA or the simulator. Everything below is its, released by
  /// the destructor in order.
  std::unique_ptr<CudaApi> api_;
  uint32_t code_object_ = 0;

  cudaLibrary_t library_ = nullptr;
  /// One per kernel of the loaded code object.
  std::vector<cudaKernel_t> kernels_;
  /// Stream 0: inputs, outputs and the steps of stream 0 go to it, and a capture starts on it.
  cudaStream_t stream_ = nullptr;
  /// Every stream of the program (stream_ first; more when compiled with --streams).
  std::vector<cudaStream_t> streams_;
  /// An event per step that a step of another stream waits for (null for the others), and per
  /// stream past 0 the events that fork it from stream 0 and join it back.
  std::vector<cudaEvent_t> step_events_;
  std::vector<cudaEvent_t> fork_events_, join_events_;
  /// Timed events of traced runs, made by the first: the origin, and each step's begin and end.
  cudaEvent_t trace_origin_ = nullptr;
  std::vector<cudaEvent_t> trace_begin_, trace_end_;
  std::vector<std::unique_ptr<CudaLibraryCall>> library_calls_;
  /// One library workspace per stream, each this large (aligned), side by side.
  size_t workspace_size_ = 0;

  DeviceLayout layout_;
  void* device_memory_ = nullptr;
  /// The aligned base of `device_memory_`.
  uint8_t* device_base_ = nullptr;
  /// Pinned host memory mirroring the device's [inputs_begin, outputs_end).
  void* staging_ = nullptr;

  ProgramTable table_;
  /// One per step of `table_`.
  std::vector<CudaStep> steps_;
  /// The bytes of every binding's buffer, in the table's order (what a kernel may touch through
  /// it).
  std::vector<uint64_t> binding_bytes_;
  /// The device address of every binding, in the table's order; fixed once resolved.
  std::vector<void*> addresses_;
  /// Each dispatch's cudaLaunchKernel argument array, argument_counts_[step] entries from
  /// first_argument_[step]: pointers to its bindings' entries of `addresses_`, then, in a
  /// program for a range of shapes, to its entry of `dims_addresses_`; with each argument's
  /// bytes (what the kernel may touch through it).
  std::vector<size_t> first_argument_, argument_counts_;
  std::vector<void*> kernel_arguments_;
  std::vector<uint64_t> kernel_argument_bytes_;

  /// A program for a range of shapes: its run's dimensions (the symbols' values, every
  /// binding's dimensions, which go to the device before the inputs, layout_.dims), and the
  /// device address of each dispatch's bindings' dimensions.
  RunShapes shapes_;
  std::vector<int64_t> symbol_values_, dims_;
  /// The bytes of each input and output for the run: what the upload and the download move
  /// (each one's own bytes rather than the whole region, which holds the largest shape's).
  std::vector<uint64_t> run_input_bytes_, run_output_bytes_;
  std::vector<void*> dims_addresses_;
  std::vector<std::pair<std::vector<int64_t>, std::unique_ptr<ShapeState>>> shape_states_;
  ShapeState* run_shape_ = nullptr;
  /// A program planned per run: the shape the addresses were last resolved for.
  const ShapeState* resolved_shape_ = nullptr;

  /// Serializes runs: they share the buffers, the stream and the graph.
  mutable std::mutex run_mutex_;
  /// A static program's graphs (a program for a range of shapes has them per shape), and why
  /// graphs are off where they are (for every shape).
  Graphs graphs_;
  std::string graph_disabled_reason_;
  /// timeDevice's two events, made at its first call.
  cudaEvent_t device_begin_ = nullptr, device_end_ = nullptr;
  uint64_t eager_runs_ = 0;
  uint64_t graph_runs_ = 0;
  std::atomic<uint64_t> run_count_{0};
};

}  // namespace kiln::runtime::cuda

#endif  // KILN_RUNTIME_SRC_CUDA_CUDA_PROGRAM_H_
