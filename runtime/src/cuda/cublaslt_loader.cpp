//===- cublaslt_loader.cpp - cuBLASLt, loaded on first use ----------------===//
//
// The runtime does not link cuBLASLt. Loading that library runs its initializers, which cost
// every process about 200 MiB of resident memory and 0.1 s at start-up: paid by each `kiln`
// command and by every application that embeds the runtime only for the CPU. Instead this file
// defines the cuBLASLt entry points the runtime calls; each loads the library on its first call
// (dlopen, once per process) and forwards to it. When the library cannot be loaded they return
// CUBLAS_STATUS_NOT_INITIALIZED, and cublasLtGetStatusString says why, so the status the caller
// reports (cuda_status.cpp) names the missing library.
//
// The definitions are hidden: libkiln_runtime.so exports only the C API, and an application that
// links cuBLASLt itself keeps its own.
//
//===----------------------------------------------------------------------===//

#include <cublasLt.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace {

/// The library's file name for the cuBLAS major version the runtime was built against.
#define KILN_STRINGIFY_(x) #x
#define KILN_STRINGIFY(x) KILN_STRINGIFY_(x)
constexpr const char* kLibraryName = "libcublasLt.so." KILN_STRINGIFY(CUBLAS_VER_MAJOR);

struct Library {
  void* handle = nullptr;
  /// Why the library did not load; empty when it did.
  std::string error;
};

const Library& library() {
  static Library loaded = [] {
    Library library;
    // The dynamic loader's search (LD_LIBRARY_PATH, the runtime's RUNPATH, ld.so.cache) first,
    // then the toolkit's directory the runtime was built against.
    library.handle = ::dlopen(kLibraryName, RTLD_NOW | RTLD_LOCAL);
    if (library.handle != nullptr) return library;
    const char* first = ::dlerror();
    library.error = first != nullptr ? first : kLibraryName;
#ifdef KILN_CUBLASLT_DIRECTORY
    const std::string path = std::string(KILN_CUBLASLT_DIRECTORY) + "/" + kLibraryName;
    library.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library.handle != nullptr) {
      library.error.clear();
      return library;
    }
    const char* second = ::dlerror();
    library.error += "; ";
    library.error += second != nullptr ? second : path;
#endif
    return library;
  }();
  return loaded;
}

/// The address of `name` in the loaded library, or NULL when the library or the symbol is
/// missing.
template <typename Function>
Function resolve(const char* name) {
  const Library& loaded = library();
  if (loaded.handle == nullptr) return nullptr;
  return reinterpret_cast<Function>(::dlsym(loaded.handle, name));
}

}  // namespace

// One forwarding definition per entry point: resolved once, NOT_INITIALIZED when unavailable.
#define KILN_CUBLASLT_FORWARD(name, parameters, arguments)                                       \
  extern "C" __attribute__((visibility("hidden"))) cublasStatus_t CUBLASWINAPI name parameters { \
    static const auto function = resolve<decltype(&::name)>(#name);                              \
    if (function == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                               \
    return function arguments;                                                                   \
  }

KILN_CUBLASLT_FORWARD(cublasLtCreate, (cublasLtHandle_t * handle), (handle))
KILN_CUBLASLT_FORWARD(cublasLtDestroy, (cublasLtHandle_t handle), (handle))
KILN_CUBLASLT_FORWARD(cublasLtMatmul,
                      (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                       const void* a, cublasLtMatrixLayout_t a_desc, const void* b,
                       cublasLtMatrixLayout_t b_desc, const void* beta, const void* c,
                       cublasLtMatrixLayout_t c_desc, void* d, cublasLtMatrixLayout_t d_desc,
                       const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_size,
                       cudaStream_t stream),
                      (handle, desc, alpha, a, a_desc, b, b_desc, beta, c, c_desc, d, d_desc, algo,
                       workspace, workspace_size, stream))
KILN_CUBLASLT_FORWARD(cublasLtMatmulAlgoGetHeuristic,
                      (cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                       cublasLtMatrixLayout_t a_desc, cublasLtMatrixLayout_t b_desc,
                       cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
                       cublasLtMatmulPreference_t preference, int requested,
                       cublasLtMatmulHeuristicResult_t results[], int* returned),
                      (handle, desc, a_desc, b_desc, c_desc, d_desc, preference, requested, results,
                       returned))
KILN_CUBLASLT_FORWARD(cublasLtMatmulDescCreate,
                      (cublasLtMatmulDesc_t * desc, cublasComputeType_t compute,
                       cudaDataType_t scale),
                      (desc, compute, scale))
KILN_CUBLASLT_FORWARD(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t desc), (desc))
KILN_CUBLASLT_FORWARD(cublasLtMatmulDescSetAttribute,
                      (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                       const void* buffer, size_t size),
                      (desc, attribute, buffer, size))
KILN_CUBLASLT_FORWARD(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t * preference),
                      (preference))
KILN_CUBLASLT_FORWARD(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t preference),
                      (preference))
KILN_CUBLASLT_FORWARD(cublasLtMatmulPreferenceSetAttribute,
                      (cublasLtMatmulPreference_t preference,
                       cublasLtMatmulPreferenceAttributes_t attribute, const void* buffer,
                       size_t size),
                      (preference, attribute, buffer, size))
KILN_CUBLASLT_FORWARD(cublasLtMatrixLayoutCreate,
                      (cublasLtMatrixLayout_t * layout, cudaDataType type, uint64_t rows,
                       uint64_t cols, int64_t ld),
                      (layout, type, rows, cols, ld))
KILN_CUBLASLT_FORWARD(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t layout), (layout))
KILN_CUBLASLT_FORWARD(cublasLtMatrixLayoutGetAttribute,
                      (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                       void* buffer, size_t size, size_t* written),
                      (layout, attribute, buffer, size, written))
KILN_CUBLASLT_FORWARD(cublasLtMatrixLayoutSetAttribute,
                      (cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                       const void* buffer, size_t size),
                      (layout, attribute, buffer, size))

#undef KILN_CUBLASLT_FORWARD

// The status names come from the library when it is loaded; otherwise a status can only be
// NOT_INITIALIZED from the definitions above, and the string says why.
extern "C" __attribute__((visibility("hidden"))) const char* CUBLASWINAPI
cublasLtGetStatusName(cublasStatus_t status) {
  static const auto function = resolve<decltype(&::cublasLtGetStatusName)>("cublasLtGetStatusName");
  if (function != nullptr) return function(status);
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS"
                                         : "CUBLAS_STATUS_NOT_INITIALIZED";
}

extern "C" __attribute__((visibility("hidden"))) const char* CUBLASWINAPI
cublasLtGetStatusString(cublasStatus_t status) {
  static const auto function =
      resolve<decltype(&::cublasLtGetStatusString)>("cublasLtGetStatusString");
  if (function != nullptr) return function(status);
  static const std::string message =
      "cuBLASLt (" + std::string(kLibraryName) + ") cannot be loaded: " + library().error;
  return message.c_str();
}
