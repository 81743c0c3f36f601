//===- session.cpp - The session C API ------------------------------------===//
//
// kiln_session_* over the device programs. The CPU is the only device a session runs on so far;
// a CUDA artifact or session options asking for CUDA are refused with UNIMPLEMENTED.
//
//===----------------------------------------------------------------------===//

#include <memory>
#include <string>
#include <utility>

#include "kiln/runtime.h"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/cpu/cpu_program.h"
#include "runtime/src/status.h"

/// The C session object.
struct kiln_session_t {
  std::unique_ptr<kiln::runtime::cpu::CpuProgram> program;
};

namespace {

/// The size of kiln_session_options_t in the first API version that has it.
constexpr size_t kSessionOptionsMinSize = sizeof(kiln_session_options_t);

const char* deviceKindName(kiln_device_kind_t kind) {
  switch (kind) {
    case KILN_DEVICE_KIND_CPU:
      return "cpu";
    case KILN_DEVICE_KIND_CUDA:
      return "cuda";
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
    }
    const char* device = deviceKindName(resolved.device_kind);
    if (device == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_create: unknown device kind " +
                              std::to_string(static_cast<int>(resolved.device_kind)));
    }
    const auto& loaded = artifact->artifact;
    std::string artifact_device = loaded->root().device()->str();
    if (artifact_device != device) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          loaded->name() + ": the artifact was compiled for device '" +
                              artifact_device + "', but the session asks for '" + device + "'");
    }
    if (resolved.device_kind != KILN_DEVICE_KIND_CPU) {
      return kiln::Status(KILN_STATUS_UNIMPLEMENTED, loaded->name() + ": sessions on device '" +
                                                         std::string(device) +
                                                         "' are not available in this runtime yet");
    }
    auto program = kiln::runtime::cpu::CpuProgram::create(loaded, resolved.num_threads);
    if (!program.ok()) return program.status();
    *out_session = new kiln_session_t{std::move(*program)};
    return kiln::Status();
  });
}

void kiln_session_release(kiln_session_t* session) { delete session; }

kiln_status_t* kiln_session_run(kiln_session_t* session, size_t input_count,
                                const kiln_tensor_t* const* inputs, size_t output_count,
                                kiln_tensor_t** outputs) {
  return guardCApi("kiln_session_run", [&]() -> kiln::Status {
    if (session == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_run: session is NULL");
    }
    return session->program->run(input_count, inputs, output_count, outputs);
  });
}

size_t kiln_session_input_count(const kiln_session_t* session) {
  return session ? session->program->artifact().inputs().size() : 0;
}

size_t kiln_session_output_count(const kiln_session_t* session) {
  return session ? session->program->artifact().outputs().size() : 0;
}

kiln_status_t* kiln_session_statistics(const kiln_session_t* session,
                                       kiln_session_statistics_t* out_statistics) {
  return guardCApi("kiln_session_statistics", [&]() -> kiln::Status {
    if (session == nullptr || out_statistics == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_statistics: session and out_statistics must not be NULL");
    }
    if (out_statistics->struct_size < sizeof(kiln_session_statistics_t)) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_session_statistics: struct_size " +
                              std::to_string(out_statistics->struct_size) +
                              " is smaller than sizeof(kiln_session_statistics_t) " +
                              std::to_string(sizeof(kiln_session_statistics_t)));
    }
    kiln::runtime::cpu::CpuProgramStatistics stats = session->program->statistics();
    kiln_session_statistics_t c{};
    c.struct_size = sizeof(c);
    c.num_threads = static_cast<uint32_t>(stats.num_threads);
    c.run_count = stats.run_count;
    c.arena_count = stats.arena_count;
    c.arena_size = stats.arena_size;
    c.arena_bytes_allocated = stats.arena_count * stats.arena_size;
    *out_statistics = c;
    return kiln::Status();
  });
}

}  // extern "C"
