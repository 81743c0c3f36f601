//===- artifact_loading.cpp - Loading artifacts for this runtime's devices ===//
//
// kiln_artifact_load_file, kiln_artifact_load_file_mapped and kiln_artifact_load_memory: the
// artifact reader verifies the file and, through LibraryCallCheck, the library calls of its device
// by the rules of the devices this runtime was built with (the CUDA device's in a runtime built
// with CUDA, KILN_HAVE_CUDA), so a call no session could prepare is refused when the artifact
// loads. The reader itself
// (runtime/src/artifact/) depends on no device.
//
//===----------------------------------------------------------------------===//

#include <string_view>
#include <utility>

#include "kiln/runtime.h"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/artifact/artifact_verifier.h"
#include "runtime/src/status.h"
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
#include "runtime/src/cuda/cuda_library_call.h"
#endif

namespace {

/// The library-call rules of the devices this runtime has: the CUDA device checks its calls'
/// parameters (and cuDNN's attention graphs) without a GPU; the CPU device checks its calls
/// when a session prepares them.
kiln::Status checkDeviceLibraryCall(std::string_view device,
                                    const kiln::artifact::LibraryCall& call) {
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
  if (device == "cuda") return kiln::runtime::cuda::checkCudaLibraryCall(call);
#else
  (void)call;
#endif
  (void)device;
  return kiln::Status();
}

}  // namespace

using kiln::runtime::guardCApi;
using kiln::runtime::LoadedArtifact;

extern "C" {

kiln_status_t* kiln_artifact_load_file(const char* path, kiln_artifact_t** out_artifact) {
  return guardCApi("kiln_artifact_load_file", [&]() -> kiln::Status {
    if (path == nullptr || out_artifact == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_artifact_load_file: path and out_artifact must not be NULL");
    }
    auto artifact = LoadedArtifact::loadFile(path, checkDeviceLibraryCall);
    if (!artifact.ok()) return artifact.status();
    *out_artifact = new kiln_artifact_t{std::move(*artifact)};
    return kiln::Status();
  });
}

kiln_status_t* kiln_artifact_load_file_mapped(const char* path, kiln_artifact_t** out_artifact) {
  return guardCApi("kiln_artifact_load_file_mapped", [&]() -> kiln::Status {
    if (path == nullptr || out_artifact == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_artifact_load_file_mapped: path and out_artifact must not be NULL");
    }
    auto artifact = LoadedArtifact::loadFile(path, checkDeviceLibraryCall,
                                             LoadedArtifact::FileAccess::Map);
    if (!artifact.ok()) return artifact.status();
    *out_artifact = new kiln_artifact_t{std::move(*artifact)};
    return kiln::Status();
  });
}

kiln_status_t* kiln_artifact_load_memory(const void* data, size_t size, const char* name,
                                         kiln_artifact_t** out_artifact) {
  return guardCApi("kiln_artifact_load_memory", [&]() -> kiln::Status {
    if (out_artifact == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_artifact_load_memory: out_artifact is NULL");
    }
    auto artifact = LoadedArtifact::loadMemory(data, size, name ? name : "<memory>",
                                                checkDeviceLibraryCall);
    if (!artifact.ok()) return artifact.status();
    *out_artifact = new kiln_artifact_t{std::move(*artifact)};
    return kiln::Status();
  });
}

}  // extern "C"
