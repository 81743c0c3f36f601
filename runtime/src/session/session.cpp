//===- session.cpp - The session C API ------------------------------------===//
//
// kiln_session_* over the device programs: a session holds the DeviceProgram of its device, the
// CPU's CpuProgram or, in a runtime built with CUDA (KILN_HAVE_CUDA), the CudaProgram of the GPU
// the options name or of the simulated CUDA device. A runtime built without CUDA refuses CUDA
// sessions with UNIMPLEMENTED, and so does a program that does not link the simulator
// (kiln_cuda_sim) its cuda-sim sessions.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/runtime.h"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/cpu/cpu_program.h"
#include "runtime/src/program/device_program.h"
#include "runtime/src/status.h"
#include "runtime/src/program/trace.h"
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
#include "runtime/src/cuda/cuda_api.h"
#include "runtime/src/cuda/cuda_program.h"
#endif

/// The C session object.
struct kiln_session_t {
  std::unique_ptr<kiln::runtime::DeviceProgram> program;
  /// The device's name ("cpu", "cuda", "cuda-sim"), for the trace.
  std::string device;
  /// Whether kiln_session_trace_start was called since the last write.
  std::atomic<bool> tracing{false};
};

namespace {

/// The size of kiln_session_statistics_t when it was added, every field through
/// `arena_bytes_allocated`; later versions may only append fields.
constexpr size_t kStatisticsMinSize =
    offsetof(kiln_session_statistics_t, arena_bytes_allocated) + sizeof(uint64_t);

/// The size of kiln_session_options_t in the first API version that has it (before
/// device_ordinal); callers built against it keep working.
constexpr size_t kSessionOptionsMinSize = offsetof(kiln_session_options_t, device_ordinal);

/// Creates the program of a session on `options.device_kind`, which matches the artifact's.
kiln::Result<std::unique_ptr<kiln::runtime::DeviceProgram>> createProgram(
    const std::shared_ptr<const kiln::runtime::LoadedArtifact>& artifact,
    const kiln_session_options_t& options) {
#if !(defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA)
  if (options.device_kind != KILN_DEVICE_KIND_CPU)
    return kiln::Status(
        KILN_STATUS_UNIMPLEMENTED,
        artifact->name() + ": cannot run on device '" +
            (options.device_kind == KILN_DEVICE_KIND_CUDA_SIM ? "cuda-sim" : "cuda") +
            "': this runtime was built without CUDA");
#endif
  // A split model's devices meet on the host (Gloo), whatever they are: CPU devices run their
  // collectives over it; GPUs set up NCCL through it; simulated GPUs carry NCCL's calls out on it.
  std::shared_ptr<kiln::runtime::cpu::Collectives> collectives;
  if (artifact->deviceCount() > 1) {
    auto joined = kiln::runtime::cpu::Collectives::connect(
        artifact->deviceRank(), artifact->deviceCount(), options.rendezvous,
        std::chrono::milliseconds(options.rendezvous_timeout_ms ? options.rendezvous_timeout_ms
                                                                : 60000));
    if (!joined.ok()) return joined.status();
    collectives = std::move(*joined);
  }
  if (options.device_kind == KILN_DEVICE_KIND_CPU) {
    auto program = kiln::runtime::cpu::CpuProgram::create(artifact, options.num_threads,
                                                          std::move(collectives));
    if (!program.ok()) return program.status();
    return std::unique_ptr<kiln::runtime::DeviceProgram>(std::move(*program));
  }
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
  // The simulator is not part of the runtime: a program that links kiln_cuda_sim installs it.
  std::unique_ptr<kiln::runtime::cuda::CudaApi> api;
  if (options.device_kind == KILN_DEVICE_KIND_CUDA_SIM) {
    auto simulated = kiln::runtime::cuda::createSimulatedCudaApi();
    if (!simulated.ok())
      return kiln::Status(
          simulated.status().code(),
          artifact->name() + ": cannot run on device 'cuda-sim': " + simulated.status().message());
    api = std::move(*simulated);
  } else {
    api = kiln::runtime::cuda::createRealCudaApi();
  }
  auto program = kiln::runtime::cuda::CudaProgram::create(artifact, options.device_ordinal,
                                                          std::move(api), std::move(collectives));
  if (!program.ok()) return program.status();
  return std::unique_ptr<kiln::runtime::DeviceProgram>(std::move(*program));
#else
  return kiln::Status(KILN_STATUS_INTERNAL, "unreachable: CUDA sessions are refused above");
#endif
}

const char* deviceKindName(kiln_device_kind_t kind) {
  switch (kind) {
    case KILN_DEVICE_KIND_CPU:
      return "cpu";
    case KILN_DEVICE_KIND_CUDA:
      return "cuda";
    case KILN_DEVICE_KIND_CUDA_SIM:
      return "cuda-sim";
  }
  return nullptr;
}

}  // namespace

using kiln::runtime::guardCApi;

extern "C" {

void kiln_session_options_initialize(kiln_session_options_t* options) {
  if (options == nullptr) return;
  *options = kiln_session_options_t{};
  options->struct_size = sizeof(kiln_session_options_t);
  options->device_kind = KILN_DEVICE_KIND_CPU;
  options->num_threads = 0;
  options->device_ordinal = 0;
}

kiln_status_t* kiln_session_create(const kiln_artifact_t* artifact,
                                   const kiln_session_options_t* options,
                                   kiln_session_t** out_session) {
  return guardCApi("kiln_session_create", [&]() -> kiln::Status {
    if (artifact == nullptr || out_session == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_create: artifact and out_session must not be NULL");
    }
    kiln_session_options_t resolved;
    kiln_session_options_initialize(&resolved);
    if (options != nullptr) {
      if (options->struct_size < kSessionOptionsMinSize) {
        return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_session_create: options->struct_size " +
                                std::to_string(options->struct_size) +
                                " is too small; call kiln_session_options_initialize first");
      }
      resolved.device_kind = options->device_kind;
      resolved.num_threads = options->num_threads;
      if (options->struct_size >=
          offsetof(kiln_session_options_t, device_ordinal) + sizeof(options->device_ordinal)) {
        resolved.device_ordinal = options->device_ordinal;
      }
      if (options->struct_size >= offsetof(kiln_session_options_t, rendezvous_timeout_ms) +
                                      sizeof(options->rendezvous_timeout_ms)) {
        resolved.device_rank = options->device_rank;
        resolved.rendezvous = options->rendezvous;
        resolved.rendezvous_timeout_ms = options->rendezvous_timeout_ms;
      }
    }
    const char* device = deviceKindName(resolved.device_kind);
    if (device == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_create: unknown device kind " +
                              std::to_string(static_cast<int>(resolved.device_kind)));
    }
    std::shared_ptr<const kiln::runtime::LoadedArtifact> loaded = artifact->artifact;
    if (loaded->deviceCount() > 1) {
      // A split model: this session runs one device's program, meeting the others.
      auto device_artifact = loaded->deviceArtifact(resolved.device_rank);
      if (!device_artifact.ok()) return device_artifact.status();
      if (resolved.rendezvous == nullptr || *resolved.rendezvous == '\0') {
        return kiln::Status(
            KILN_STATUS_INVALID_ARGUMENT,
            loaded->name() + ": the model is split over " + std::to_string(loaded->deviceCount()) +
                " devices; each device's session needs options.rendezvous (a directory they "
                "share) and options.device_rank");
      }
      loaded = std::move(*device_artifact);
    } else if (resolved.device_rank != 0) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          loaded->name() + ": device_rank " + std::to_string(resolved.device_rank) +
                              " given for a model that is not split over devices");
    }
    std::string artifact_device = loaded->root().device()->str();
    // The simulated CUDA device runs cuda artifacts.
    const std::string runs = resolved.device_kind == KILN_DEVICE_KIND_CUDA_SIM ? "cuda" : device;
    if (artifact_device != runs) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          loaded->name() + ": the artifact was compiled for device '" +
                              artifact_device + "', but the session asks for '" + device + "'");
    }
    auto program = createProgram(loaded, resolved);
    if (!program.ok()) return program.status();
    auto* session = new kiln_session_t;
    session->program = std::move(*program);
    session->device = device;
    *out_session = session;
    return kiln::Status();
  });
}

void kiln_session_release(kiln_session_t* session) { delete session; }

namespace {

/// Runs `program`, whose artifact may hold checks after the caller's outputs: they are made
/// into tensors of their own, read and released; the first that does not hold fails the run
/// (the caller's outputs released) with its message.
kiln::Status runChecked(kiln::runtime::DeviceProgram& program, size_t input_count,
                        const kiln_tensor_t* const* inputs, size_t output_count,
                        kiln_tensor_t** outputs, kiln_tensor_t* const* provided = nullptr) {
  const kiln::runtime::LoadedArtifact& artifact = program.artifact();
  const size_t callers = artifact.callerOutputCount();
  if (callers == artifact.outputs().size()) {
    return program.run(input_count, inputs, output_count, outputs, provided);
  }
  if (kiln::Status s = kiln::runtime::checkOutputRoom(artifact, callers, output_count, outputs);
      !s.ok()) {
    return s;
  }
  std::vector<kiln_tensor_t*> all(artifact.outputs().size(), nullptr);
  // The checks' flags are the runtime's own outputs, never written into the caller's tensors.
  std::vector<kiln_tensor_t*> given;
  if (provided != nullptr) {
    given.assign(provided, provided + callers);
    given.resize(all.size(), nullptr);
  }
  if (kiln::Status s = program.run(input_count, inputs, all.size(), all.data(),
                                   provided != nullptr ? given.data() : nullptr);
      !s.ok()) {
    return s;
  }
  std::string failed;
  for (size_t i = callers; i < all.size(); ++i) {
    const auto* flags = static_cast<const uint8_t*>(kiln_tensor_const_data(all[i]));
    size_t count = kiln_tensor_element_count(all[i]);
    if (failed.empty() && std::find(flags, flags + count, uint8_t{0}) != flags + count) {
      failed = artifact.checkMessages()[i - callers];
    }
    kiln_tensor_release(all[i]);
  }
  if (!failed.empty()) {
    for (size_t i = 0; i < callers; ++i) kiln_tensor_release(all[i]);
    return kiln::Status(KILN_STATUS_INVALID_ARGUMENT, "the run's inputs fail a check: " + failed);
  }
  std::copy(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(callers), outputs);
  return kiln::Status();
}

}  // namespace

kiln_status_t* kiln_session_run(kiln_session_t* session, size_t input_count,
                                const kiln_tensor_t* const* inputs, size_t output_count,
                                kiln_tensor_t** outputs) {
  return guardCApi("kiln_session_run", [&]() -> kiln::Status {
    if (session == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_run: session is NULL");
    }
    return runChecked(*session->program, input_count, inputs, output_count, outputs);
  });
}

kiln_status_t* kiln_session_run_into(kiln_session_t* session, size_t input_count,
                                     const kiln_tensor_t* const* inputs, size_t output_count,
                                     kiln_tensor_t* const* outputs) {
  return guardCApi("kiln_session_run_into", [&]() -> kiln::Status {
    if (session == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_run_into: session is NULL");
    }
    const size_t expected = session->program->artifact().callerOutputCount();
    if (output_count != expected || (output_count != 0 && outputs == nullptr)) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_run_into: the model has " + std::to_string(expected) +
                              " outputs; " + std::to_string(output_count) + " tensors were given");
    }
    for (size_t i = 0; i < output_count; ++i) {
      if (outputs[i] == nullptr) {
        return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                            "kiln_session_run_into: output tensor " + std::to_string(i) +
                                " is NULL");
      }
    }
    // The run's outputs are tensors over the given ones' memory: written in place, then let go.
    std::vector<kiln_tensor_t*> written(output_count, nullptr);
    kiln::Status status = runChecked(*session->program, input_count, inputs, output_count,
                                     written.data(), outputs);
    for (kiln_tensor_t* tensor : written) kiln_tensor_release(tensor);
    return status;
  });
}

size_t kiln_session_input_count(const kiln_session_t* session) {
  return session ? session->program->artifact().inputs().size() : 0;
}

size_t kiln_session_output_count(const kiln_session_t* session) {
  return session ? session->program->artifact().callerOutputCount() : 0;
}

kiln_status_t* kiln_session_time_device(kiln_session_t* session, size_t iterations,
                                        double* out_ms) {
  return guardCApi("kiln_session_time_device", [&]() -> kiln::Status {
    if (session == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_time_device: session is NULL");
    }
    return session->program->timeDevice(iterations, out_ms);
  });
}

kiln_status_t* kiln_session_trace_start(kiln_session_t* session) {
  return guardCApi("kiln_session_trace_start", [&]() -> kiln::Status {
    if (session == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_trace_start: session is NULL");
    }
    session->program->trace().start();
    session->tracing = true;
    return kiln::Status();
  });
}

kiln_status_t* kiln_session_trace_write(kiln_session_t* session, const char* path) {
  return guardCApi("kiln_session_trace_write", [&]() -> kiln::Status {
    if (session == nullptr || path == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_trace_write: session and path must not be NULL");
    }
    kiln::runtime::DeviceProgram& program = *session->program;
    if (!session->tracing.exchange(false)) {
      return kiln::Status(KILN_STATUS_FAILED_PRECONDITION,
                          "kiln_session_trace_write: no trace was started on this session "
                          "(kiln_session_trace_start)");
    }
    std::vector<kiln::runtime::TraceSlice> slices = program.trace().stop();
    const auto& artifact = program.artifact();
    return kiln::runtime::writeChromeTrace(path, artifact.name() + " on " + session->device,
                                           program.table(), slices);
  });
}

kiln_status_t* kiln_session_statistics(const kiln_session_t* session,
                                       kiln_session_statistics_t* out_statistics) {
  return guardCApi("kiln_session_statistics", [&]() -> kiln::Status {
    if (session == nullptr || out_statistics == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_statistics: session and out_statistics must not be NULL");
    }
    // A caller built against an older header passes a shorter struct: it gets the fields it
    // knows (every field's offset stays where it was when it was added).
    if (out_statistics->struct_size < kStatisticsMinSize) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_statistics: struct_size " +
                              std::to_string(out_statistics->struct_size) +
                              " is smaller than the first kiln_session_statistics_t (" +
                              std::to_string(kStatisticsMinSize) + " bytes)");
    }
    kiln::runtime::ProgramStatistics stats = session->program->statistics();
    kiln_session_statistics_t c{};
    c.struct_size = sizeof(c);
    c.num_threads = static_cast<uint32_t>(stats.num_threads);
    c.run_count = stats.run_count;
    c.arena_count = stats.arena_count;
    c.arena_size = stats.arena_size;
    c.arena_bytes_allocated = stats.arena_count * stats.arena_size;
    size_t size = std::min(out_statistics->struct_size, sizeof(c));
    c.struct_size = size;
    std::memcpy(out_statistics, &c, size);
    return kiln::Status();
  });
}

}  // extern "C"
