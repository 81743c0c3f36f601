//===- device_program.h - What a session runs, on any device ----*- C++ -*-===//
//
// DeviceProgram, the interface a session holds for its device (the CPU's CpuProgram, the CUDA
// device's CudaProgram), and the parts every device shares: checking the caller's inputs and
// output array against the artifact's signature, and making the output tensors. The program's
// steps and bindings are its ProgramTable (program_table.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_PROGRAM_DEVICE_PROGRAM_H_
#define KILN_RUNTIME_SRC_PROGRAM_DEVICE_PROGRAM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/program/program_table.h"
#include "runtime/src/program/run_shapes.h"
#include "runtime/src/program/trace.h"

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

  /// Runs the program once (see kiln_session_run): host tensors in, new host tensors out. Where
  /// `provided` is given (kiln_session_run_into), output i is written into `provided[i]` when
  /// that is not NULL: `outputs[i]` then receives a tensor over its memory, which the caller
  /// releases as usual (the memory stays provided[i]'s).
  virtual Status run(size_t input_count, const kiln_tensor_t* const* inputs, size_t output_count,
                     kiln_tensor_t** outputs, kiln_tensor_t* const* provided = nullptr) = 0;

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
/// symbols' `values`; where `provided[i]` is given, a tensor over its memory instead, which must
/// have the output's element type and the run's dims (INVALID_ARGUMENT naming the output
/// otherwise). On failure releases what it made, leaves `tensors` all NULL and returns the
/// status naming the output.
Status allocateOutputTensors(const LoadedArtifact& artifact, std::vector<kiln_tensor_t*>& tensors,
                             const RunShapes* shapes = nullptr,
                             const std::vector<int64_t>* values = nullptr,
                             kiln_tensor_t* const* provided = nullptr);

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

#endif  // KILN_RUNTIME_SRC_PROGRAM_DEVICE_PROGRAM_H_
