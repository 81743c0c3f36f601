//===- trace.cpp - A timeline of a session's runs ---------------------------===//

#include "runtime/src/program/trace.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <thread>

#include "runtime/src/program/program_table.h"
#include "runtime/src/status.h"

namespace kiln::runtime {
namespace {

int64_t steadyNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// `text` as a JSON string literal.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

/// Microseconds, as trace events count them, with nanosecond digits.
std::string microseconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(ns) / 1000.0);
  return text;
}

const char* kindName(StepKind kind) {
  switch (kind) {
    case StepKind::kDispatch:
      return "kernel";
    case StepKind::kLibraryCall:
      return "library call";
    case StepKind::kCopy:
      return "copy";
  }
  return "step";
}

}  // namespace

void TraceRecorder::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  slices_.clear();
  next_run_.store(0, std::memory_order_relaxed);
  epoch_ns_.store(steadyNanoseconds(), std::memory_order_relaxed);
  active_.store(true, std::memory_order_release);
}

int64_t TraceRecorder::now() const {
  return steadyNanoseconds() - epoch_ns_.load(std::memory_order_relaxed);
}

uint64_t TraceRecorder::beginRun() { return next_run_.fetch_add(1, std::memory_order_relaxed); }

uint32_t TraceRecorder::track() {
  uint64_t id = std::hash<std::thread::id>()(std::this_thread::get_id());
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [thread, track] : tracks_)
    if (thread == id) return track;
  tracks_.emplace_back(id, static_cast<uint32_t>(tracks_.size() + 1));
  return tracks_.back().second;
}

void TraceRecorder::add(const std::vector<TraceSlice>& slices) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!active_.load(std::memory_order_relaxed)) return;
  slices_.insert(slices_.end(), slices.begin(), slices.end());
}

std::vector<TraceSlice> TraceRecorder::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  active_.store(false, std::memory_order_release);
  std::vector<TraceSlice> slices;
  slices.swap(slices_);
  return slices;
}

Status writeChromeTrace(const std::string& path, const std::string& process,
                        const ProgramTable& table, const std::vector<TraceSlice>& slices) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return statusFromErrno(errno, "cannot write the trace '" + path + "'");
  const std::vector<ProgramStep>& steps = table.steps();
  const std::vector<ResolvedBinding>& bindings = table.bindings();
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":" << quoted(process)
      << "}}";
  std::vector<uint32_t> named;
  for (const TraceSlice& slice : slices) {
    bool seen = false;
    for (uint32_t tid : named) seen |= tid == slice.tid();
    if (seen) continue;
    named.push_back(slice.tid());
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << slice.tid()
        << ",\"args\":{\"name\":\"run thread " << slice.track;
    if (slice.stream != 0) out << ", stream " << slice.stream;
    out << "\"}}";
  }
  for (const TraceSlice& slice : slices) {
    out << ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":" << slice.tid()
        << ",\"ts\":" << microseconds(slice.begin_ns)
        << ",\"dur\":" << microseconds(slice.end_ns - slice.begin_ns);
    const ProgramStep& step = steps[slice.step];
    uint64_t bytes = 0;
    for (size_t b = 0; b < step.binding_count; ++b) bytes += bindings[step.first_binding + b].bytes;
    out << ",\"name\":" << quoted(step.name) << ",\"cat\":" << quoted(kindName(step.kind))
        << ",\"args\":{\"run\":" << slice.run << ",\"step\":" << slice.step
        << ",\"bytes\":" << bytes << ",\"stream\":" << step.stream;
    if (step.kind == StepKind::kDispatch) out << ",\"workgroups\":" << step.workgroups;
    out << "}}";
  }
  out << "\n]}\n";
  out.close();
  if (!out) return statusFromErrno(errno, "cannot write the trace '" + path + "'");
  return Status();
}

}  // namespace kiln::runtime
