//===- trace.h - A timeline of a session's runs ------------------*- C++ -*-===//
//
// While a trace is on (kiln_session_trace_start), a device program records one slice per step
// of every run (the CPU by its clock, CUDA by timed events around each step) into the session's
// TraceRecorder; kiln_session_trace_write turns the slices into Chrome trace-event JSON, which
// Perfetto (ui.perfetto.dev) and chrome://tracing open: a track per thread that ran the program,
// each step named by its kernel or library call and the model nodes it holds, with its kind,
// the bytes of its bindings and its workgroups.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_PROGRAM_TRACE_H_
#define KILN_RUNTIME_SRC_PROGRAM_TRACE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln::runtime {

class ProgramTable;

/// One timed step of one run.
struct TraceSlice {
  uint64_t run = 0;
  size_t step = 0;
  /// The track: the thread that called the run, numbered from 1 in the order threads first ran.
  uint32_t track = 0;
  /// Nanoseconds since the trace started.
  int64_t begin_ns = 0, end_ns = 0;
  /// The stream the step ran on: each stream of a run thread is a track of its own.
  uint32_t stream = 0;

  /// The trace's thread id of the slice's track: the run thread's number, and for a stream
  /// other than 0, 1000 times the stream added.
  uint32_t tid() const { return track + 1000 * stream; }
};

/// The slices of the runs of one session while a trace is on. Thread-safe: concurrent runs
/// record into it together.
class TraceRecorder {
 public:
  /// Drops what was recorded and starts recording runs that begin from now on.
  void start();
  /// Whether runs should record (a relaxed read: a run that starts as the trace stops may
  /// record or not).
  bool active() const { return active_.load(std::memory_order_relaxed); }
  /// Nanoseconds since start().
  int64_t now() const;
  /// A new run's number and the calling thread's track.
  uint64_t beginRun();
  uint32_t track();
  /// Adds the slices of one run (one lock per run, not per step).
  void add(const std::vector<TraceSlice>& slices);
  /// Stops recording and returns the slices, in the order runs finished.
  std::vector<TraceSlice> stop();

 private:
  std::atomic<bool> active_{false};
  std::atomic<int64_t> epoch_ns_{0};
  std::atomic<uint64_t> next_run_{0};
  std::mutex mutex_;
  std::vector<TraceSlice> slices_;
  std::vector<std::pair<uint64_t, uint32_t>> tracks_;  // thread id hash -> track
};

/// Writes `slices` of a program as Chrome trace-event JSON to `path` (replacing the file):
/// `process` names the timeline (the artifact and device), `table` names each step. Fails
/// naming the path when it cannot be written.
Status writeChromeTrace(const std::string& path, const std::string& process,
                        const ProgramTable& table, const std::vector<TraceSlice>& slices);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_PROGRAM_TRACE_H_
