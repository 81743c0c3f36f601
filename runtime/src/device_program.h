//===- device_program.h - What a session runs, on any device ----*- C++ -*-===//
//
// DeviceProgram, the interface a session holds for its device (the CPU's CpuProgram, the CUDA
// device's CudaProgram), and the parts every device shares: the program's steps resolved into a
// flat table of bindings (ProgramTable), the binding addresses of a run from the bases of its
// memory, checking the caller's inputs and output array against the artifact's signature, and
// making the output tensors.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_DEVICE_PROGRAM_H_
#define KILN_RUNTIME_SRC_DEVICE_PROGRAM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/run_shapes.h"
#include "runtime/src/trace.h"

namespace kiln::runtime {

/// What a device program has done and holds (kiln_session_statistics_t).
struct ProgramStatistics {
  /// The host threads that execute a run, counting the caller's.
  size_t num_threads = 0;
  uint64_t run_count = 0;
  uint64_t arena_count = 0;
  uint64_t arena_size = 0;
};

/// An artifact made ready to run on one device. `run` follows kiln_session_run and is
/// thread-safe; each device documents how concurrent runs share it.
class DeviceProgram {
 public:
  virtual ~DeviceProgram() = default;

  /// Runs the program once (see kiln_session_run): host tensors in, new host tensors out.
  virtual Status run(size_t input_count, const kiln_tensor_t* const* inputs, size_t output_count,
                     kiln_tensor_t** outputs) = 0;

  /// Times the program's steps on the device alone, `iterations` times, into `milliseconds`
  /// (see kiln_session_time_device). Devices whose runs read and write host memory in place have
  /// nothing to separate: UNIMPLEMENTED.
  virtual Status timeDevice(size_t iterations, double* milliseconds) {
    (void)iterations;
    (void)milliseconds;
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  "kiln_session_time_device: the CPU has no device time apart from a run's "
                  "(kiln_session_run reads and writes host memory in place)");
  }

  virtual const LoadedArtifact& artifact() const = 0;
  virtual ProgramStatistics statistics() const = 0;
  /// The program's steps, as the trace names them.
  virtual const ProgramTable& table() const = 0;

  /// Where runs record their steps while a trace is on (kiln_session_trace_start).
  TraceRecorder& trace() { return trace_; }

 protected:
  TraceRecorder trace_;
};

/// How a step of the program runs.
enum class StepKind { kDispatch, kLibraryCall, kCopy };

/// Where a binding's address comes from: a buffer of the artifact (the arena or the constants at
/// `offset`, or input / output `index`) and the bytes a step may touch through it.
struct ResolvedBinding {
  kiln::artifact::BufferKind kind;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  /// The type the step sees the buffer as (in the artifact).
  const kiln::artifact::TensorType* type = nullptr;
};

/// One step of a ProgramTable: what every device needs to know before it adds its own part (a
/// loaded kernel, a prepared library call).
struct ProgramStep {
  StepKind kind = StepKind::kDispatch;
  /// The step's bindings in ProgramTable::bindings(): [first_binding, first_binding +
  /// binding_count).
  size_t first_binding = 0;
  size_t binding_count = 0;
  /// The artifact's step (kDispatch) or call (kLibraryCall); NULL otherwise.
  const kiln::artifact::Dispatch* dispatch = nullptr;
  const kiln::artifact::LibraryCall* library_call = nullptr;
  /// A dispatch's workgroups: the product of its workgroup counts.
  uint64_t workgroups = 1;
  /// The bytes a copy moves.
  uint64_t copy_size = 0;
  /// The stream the step runs on, and the earlier steps of other streams it waits for.
  uint32_t stream = 0;
  std::vector<uint32_t> waits;
  /// What the step runs: "kernel 'kiln_k1': add, relu", "library call 'onednn.matmul': ...",
  /// "copy" (the trace's slice names).
  std::string name;
  /// The step as messages name it: "step 3 (kernel 'kiln_k1': add, relu)", "step 4 (library
  /// call 'onednn.matmul': ...)", "step 5 (copy)".
  std::string label;
};

/// The bases a run's bindings are resolved against: the arena and the constants (NULL only
/// when nothing is bound there), and the address of every input and output.
struct BindingBases {
  uint8_t* arena = nullptr;
  /// In a program planned per run, the arena offset of each arena value (ArenaLayout); an arena
  /// binding's offset is then from its value's start.
  const uint64_t* arena_offsets = nullptr;
  uint8_t* constants = nullptr;
  void* const* inputs = nullptr;
  void* const* outputs = nullptr;
};

/// The program of a verified artifact flattened into a table of steps and their bindings, in
/// step order, with the bindings of each step contiguous so that a run's addresses are one
/// array and a step's are a slice of it. Built once per device program; immutable afterwards.
class ProgramTable {
 public:
  /// An empty table (no steps).
  ProgramTable() = default;
  /// Builds the table of `artifact`, whose program the verifier has checked (every binding in
  /// range, every kernel and code object index valid). INTERNAL naming the step for a step kind
  /// the verifier should have refused.
  static Result<ProgramTable> build(const LoadedArtifact& artifact);

  const std::vector<ProgramStep>& steps() const { return steps_; }
  const std::vector<ResolvedBinding>& bindings() const { return bindings_; }

  /// Writes the address of every binding, in bindings() order, into `addresses` (resized to the
  /// binding count): `bases.arena` or `bases.constants` plus the binding's offset, or the
  /// input's or output's address.
  void resolveAddresses(const BindingBases& bases, std::vector<void*>& addresses) const;

 private:
  void addBinding(const kiln::artifact::Binding& binding);

  std::vector<ProgramStep> steps_;
  std::vector<ResolvedBinding> bindings_;
};

/// Checks the arguments of a run against `artifact`'s signature: the input count, that no input
/// is NULL, each input's element type and dims, the output count and that `outputs` is not
/// NULL. INVALID_ARGUMENT naming the input and what was expected, e.g.
/// "input 'x': expected f32[1,3], got f32[1,4]".
Status checkRunArguments(const LoadedArtifact& artifact, size_t input_count,
                         const kiln_tensor_t* const* inputs, size_t output_count,
                         kiln_tensor_t* const* outputs);

/// The output half of checkRunArguments: room for exactly `expected` outputs and a non-NULL
/// `outputs` array (the session asks it of the caller's outputs, which leave out the checks).
Status checkOutputRoom(const LoadedArtifact& artifact, size_t expected, size_t output_count,
                       kiln_tensor_t* const* outputs);

/// Makes a zero-filled host tensor for every output of `artifact` into `tensors` (resized to the
/// output count), of the run's shape where `shapes` is a program for a range of shapes with the
/// symbols' `values`. On failure releases what it made, leaves `tensors` all NULL and returns
/// the status naming the output.
Status allocateOutputTensors(const LoadedArtifact& artifact, std::vector<kiln_tensor_t*>& tensors,
                             const RunShapes* shapes = nullptr,
                             const std::vector<int64_t>* values = nullptr);

/// Releases every tensor of `tensors` and sets it to NULL.
void releaseTensors(std::vector<kiln_tensor_t*>& tensors);

/// Counts one run in `count` when it goes out of scope, however the run ends.
class RunCounter {
 public:
  explicit RunCounter(std::atomic<uint64_t>& count) : count_(count) {}
  ~RunCounter() { count_.fetch_add(1, std::memory_order_relaxed); }
  RunCounter(const RunCounter&) = delete;
  RunCounter& operator=(const RunCounter&) = delete;

 private:
  std::atomic<uint64_t>& count_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_DEVICE_PROGRAM_H_
