//===- runtime.hpp - A C++ wrapper over the Kiln runtime C API --*- C++ -*-===//
//
// Header-only C++17 types over the C API in kiln/runtime.h: `Status` (a code
// and a message), `Error` (the exception that carries one), `Result<T>` (a
// value or a status), `Tensor` (an owning host tensor handle), `Artifact` (a
// loaded .kiln program) and `Session` (an artifact made ready to run).
//
// Calls that can fail return `Status` or `Result<T>`; `Result<T>::value()`
// and `Status::throwIfError()` turn a failure into an `Error` for code that
// prefers exceptions. Nothing here throws through the C API.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INCLUDE_KILN_RUNTIME_HPP_
#define KILN_RUNTIME_INCLUDE_KILN_RUNTIME_HPP_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/inspect.h"
#include "kiln/runtime.h"

namespace kiln {

/// Returns the release version of the loaded library ("MAJOR.MINOR.PATCH").
inline std::string version() { return kiln_version(); }

//===----------------------------------------------------------------------===//
// Status, Error, Result
//===----------------------------------------------------------------------===//

class Status;
[[noreturn]] inline void throwError(const Status& status);

/// The outcome of an operation: OK, or a code and a message. A plain value;
/// it owns no C object and may be copied and shared between threads.
class [[nodiscard]] Status {
 public:
  /// Makes an OK status.
  Status() = default;

  /// Makes a status with `code` and `message`; KILN_STATUS_OK drops the
  /// message.
  Status(kiln_status_code_t code, std::string message)
      : code_(code), message_(code == KILN_STATUS_OK ? std::string() : std::move(message)) {}

  /// Takes ownership of a status returned by the C API and releases it.
  static Status fromC(kiln_status_t* status) {
    if (status == nullptr) return Status();
    Status result(kiln_status_code(status), kiln_status_message(status));
    kiln_status_release(status);
    return result;
  }

  /// Returns a C status with this code and message for the caller to own;
  /// NULL when OK.
  kiln_status_t* toC() const {
    return ok() ? nullptr : kiln_status_create(code_, message_.c_str());
  }

  bool ok() const { return code_ == KILN_STATUS_OK; }
  kiln_status_code_t code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns "OK" or "CODE: message".
  std::string toString() const {
    if (ok()) return "OK";
    return std::string(kiln_status_code_string(code_)) + ": " + message_;
  }

  /// Throws an `Error` holding this status unless it is OK.
  void throwIfError() const {
    if (!ok()) throwError(*this);
  }

 private:
  kiln_status_code_t code_ = KILN_STATUS_OK;
  std::string message_;
};

/// The exception the wrapper throws for a failed status; `what()` is
/// `status().toString()`.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status)
      : std::runtime_error(status.toString()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

/// Throws `Error(status)`; without C++ exceptions, aborts instead, since the
/// caller asked for a value that does not exist.
[[noreturn]] inline void throwError(const Status& status) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
  throw Error(status);
#else
  (void)status;
  std::abort();
#endif
}

/// Either a value of type T or the failed status that explains its absence.
template <typename T>
class [[nodiscard]] Result {
 public:
  /// Holds `value`.
  Result(T value) : value_(std::move(value)) {}

  /// Holds the failure `status`. An OK status carries no value, so it is
  /// turned into an INTERNAL error rather than an empty success.
  Result(Status status)
      : status_(status.ok() ? Status(KILN_STATUS_INTERNAL, "Result built from an OK status")
                            : std::move(status)) {}

  bool ok() const { return value_.has_value(); }

  /// Returns the failure, or an OK status when a value is held.
  const Status& status() const { return status_; }

  /// Returns the value; throws `Error` when there is none.
  T& value() & {
    if (!ok()) throwError(status_);
    return *value_;
  }
  const T& value() const& {
    if (!ok()) throwError(status_);
    return *value_;
  }
  T&& value() && {
    if (!ok()) throwError(status_);
    return std::move(*value_);
  }

  /// Unchecked access; the caller has tested `ok()`.
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Returns the canonical name of `type`, or "" when it is not valid.
inline std::string elementTypeName(kiln_element_type_t type) {
  const char* name = kiln_element_type_name(type);
  return name ? name : "";
}

/// Returns the size in bytes of one element of `type`, or 0 when it is not
/// valid.
inline size_t elementTypeSize(kiln_element_type_t type) { return kiln_element_type_size(type); }

/// Parses an element type name (see `kiln_element_type_parse`).
inline Result<kiln_element_type_t> parseElementType(const std::string& name) {
  kiln_element_type_t type{};
  Status status = Status::fromC(kiln_element_type_parse(name.c_str(), &type));
  if (!status.ok()) return status;
  return type;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

/// An owning handle to a `kiln_tensor_t`: a dense row-major host tensor.
/// Move-only; `clone()` copies the data. Thread safety is that of
/// `kiln_tensor_t`.
class Tensor {
 public:
  /// Makes an empty handle.
  Tensor() = default;

  /// Adopts `handle`, which this object releases.
  explicit Tensor(kiln_tensor_t* handle) : handle_(handle) {}

  Tensor(Tensor&& other) noexcept : handle_(other.release()) {}
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { kiln_tensor_release(handle_); }

  /// Creates a zero-filled tensor (see `kiln_tensor_create`).
  static Result<Tensor> create(kiln_element_type_t type, const std::vector<int64_t>& dims) {
    kiln_tensor_t* handle = nullptr;
    Status status = Status::fromC(kiln_tensor_create(type, dims.size(), dims.data(), &handle));
    if (!status.ok()) return status;
    return Tensor(handle);
  }

  /// Makes a tensor over `size` bytes at `data` that the caller owns, without a copy (see
  /// `kiln_tensor_wrap`); `release(data, context)` runs when the tensor goes.
  static Result<Tensor> wrap(kiln_element_type_t type, const std::vector<int64_t>& dims,
                             void* data, size_t size, kiln_tensor_release_fn release = nullptr,
                             void* context = nullptr) {
    kiln_tensor_t* handle = nullptr;
    Status status = Status::fromC(kiln_tensor_wrap(type, dims.size(), dims.data(), data, size,
                                                   release, context, &handle));
    if (!status.ok()) return status;
    return Tensor(handle);
  }

  /// Creates a tensor holding a copy of `size` bytes at `data` (see
  /// `kiln_tensor_create_copy`).
  static Result<Tensor> fromData(kiln_element_type_t type, const std::vector<int64_t>& dims,
                                 const void* data, size_t size) {
    kiln_tensor_t* handle = nullptr;
    Status status =
        Status::fromC(kiln_tensor_create_copy(type, dims.size(), dims.data(), data, size, &handle));
    if (!status.ok()) return status;
    return Tensor(handle);
  }

  /// Reads a .npy file (see `kiln_tensor_read_npy`).
  static Result<Tensor> readNpy(const std::string& path) {
    kiln_tensor_t* handle = nullptr;
    Status status = Status::fromC(kiln_tensor_read_npy(path.c_str(), &handle));
    if (!status.ok()) return status;
    return Tensor(handle);
  }

  /// Reads a .npy file that must hold `expected_type` (see
  /// `kiln_tensor_read_npy_as`).
  static Result<Tensor> readNpy(const std::string& path, kiln_element_type_t expected_type) {
    kiln_tensor_t* handle = nullptr;
    Status status = Status::fromC(kiln_tensor_read_npy_as(path.c_str(), expected_type, &handle));
    if (!status.ok()) return status;
    return Tensor(handle);
  }

  /// Writes this tensor as a .npy file; an existing file is replaced only
  /// when `overwrite` is true.
  Status writeNpy(const std::string& path, bool overwrite = false) const {
    return Status::fromC(kiln_tensor_write_npy(
        handle_, path.c_str(),
        overwrite ? KILN_NPY_WRITE_FLAG_OVERWRITE : KILN_NPY_WRITE_FLAG_NONE));
  }

  /// Returns a new tensor with the same type, dims and data.
  Result<Tensor> clone() const { return fromData(elementType(), dims(), data(), byteSize()); }

  kiln_element_type_t elementType() const { return kiln_tensor_element_type(handle_); }
  size_t rank() const { return kiln_tensor_rank(handle_); }
  std::vector<int64_t> dims() const {
    const int64_t* dims = kiln_tensor_dims(handle_);
    return dims ? std::vector<int64_t>(dims, dims + rank()) : std::vector<int64_t>();
  }
  size_t elementCount() const { return kiln_tensor_element_count(handle_); }
  size_t byteSize() const { return kiln_tensor_byte_size(handle_); }
  void* data() { return kiln_tensor_data(handle_); }
  const void* data() const { return kiln_tensor_const_data(handle_); }

  /// Returns the data as T; the caller picks a T whose size matches the
  /// element type.
  template <typename T>
  T* dataAs() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* dataAs() const {
    return static_cast<const T*>(data());
  }

  /// Returns the C handle, still owned by this object.
  kiln_tensor_t* get() const { return handle_; }

  /// Gives up ownership of the C handle and returns it.
  kiln_tensor_t* release() {
    kiln_tensor_t* handle = handle_;
    handle_ = nullptr;
    return handle;
  }

  /// Releases the current handle and adopts `handle`.
  void reset(kiln_tensor_t* handle = nullptr) {
    kiln_tensor_release(handle_);
    handle_ = handle;
  }

  explicit operator bool() const { return handle_ != nullptr; }

 private:
  kiln_tensor_t* handle_ = nullptr;
};

//===----------------------------------------------------------------------===//
// Artifact
//===----------------------------------------------------------------------===//

/// An input or output of a program, copied out of the artifact.
struct TensorSignature {
  std::string name;
  kiln_element_type_t elementType{};
  std::vector<int64_t> dims;
  /// One per dim: "" for a static dim, else its symbolic name in the model.
  std::vector<std::string> dimSymbols;
  uint64_t byteSize = 0;
};

/// An owning handle to a `kiln_artifact_t`. Move-only; thread safety is that
/// of `kiln_artifact_t` (immutable, shared freely).
class Artifact {
 public:
  Artifact() = default;
  explicit Artifact(kiln_artifact_t* handle) : handle_(handle) {}
  Artifact(Artifact&& other) noexcept : handle_(other.release()) {}
  Artifact& operator=(Artifact&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;
  ~Artifact() { kiln_artifact_release(handle_); }

  /// Loads and verifies a .kiln file (see `kiln_artifact_load_file`); `mapped` maps it instead
  /// of reading it, for a file nothing rewrites in place (see `kiln_artifact_load_file_mapped`).
  static Result<Artifact> loadFile(const std::string& path, bool mapped = false) {
    kiln_artifact_t* handle = nullptr;
    Status status = Status::fromC(mapped ? kiln_artifact_load_file_mapped(path.c_str(), &handle)
                                         : kiln_artifact_load_file(path.c_str(), &handle));
    if (!status.ok()) return status;
    return Artifact(handle);
  }

  /// Loads and verifies an artifact from a copy of `size` bytes at `data`;
  /// `name` stands for the file in messages (see `kiln_artifact_load_memory`).
  static Result<Artifact> loadMemory(const void* data, size_t size,
                                     const std::string& name = "<memory>") {
    kiln_artifact_t* handle = nullptr;
    Status status = Status::fromC(kiln_artifact_load_memory(data, size, name.c_str(), &handle));
    if (!status.ok()) return status;
    return Artifact(handle);
  }

  std::string name() const { return kiln_artifact_name(handle_); }
  std::string device() const { return kiln_artifact_device(handle_); }
  std::string producer() const { return kiln_artifact_producer(handle_); }
  std::string source() const { return kiln_artifact_source(handle_); }
  uint32_t formatVersion() const { return kiln_artifact_format_version(handle_); }
  /// A model split over devices: how many, and which one this artifact's program is.
  uint32_t deviceCount() const { return kiln_artifact_device_count(handle_); }
  uint32_t deviceRank() const { return kiln_artifact_device_rank(handle_); }
  /// "tensor" or "pipeline" for a split model, "" otherwise.
  std::string partition() const { return kiln_artifact_partition(handle_); }
  /// Device `rank`'s artifact of a split model (see `kiln_artifact_open_device`).
  Result<Artifact> openDevice(uint32_t rank) const {
    kiln_artifact_t* handle = nullptr;
    Status status = Status::fromC(kiln_artifact_open_device(handle_, rank, &handle));
    if (!status.ok()) return status;
    return Artifact(handle);
  }
  size_t inputCount() const { return kiln_artifact_input_count(handle_); }
  size_t outputCount() const { return kiln_artifact_output_count(handle_); }
  /// The dimensions that vary from run to run (see kiln_artifact_symbol), in order; empty for
  /// an artifact of one shape.
  std::vector<kiln_dim_symbol_t> symbols() const {
    std::vector<kiln_dim_symbol_t> result(kiln_artifact_symbol_count(handle_));
    for (size_t i = 0; i < result.size(); ++i) {
      if (!Status::fromC(kiln_artifact_symbol(handle_, i, &result[i])).ok()) {
        result.resize(i);  // Only past the count, which the loop never reaches.
        break;
      }
    }
    return result;
  }
  /// The checks every run makes (see kiln_artifact_check_count): their messages.
  std::vector<std::string> checkMessages() const {
    std::vector<std::string> messages;
    for (size_t i = 0; i < kiln_artifact_check_count(handle_); ++i)
      messages.emplace_back(kiln_artifact_check_message(handle_, i));
    return messages;
  }
  uint64_t arenaSize() const { return kiln_artifact_arena_size(handle_); }
  uint64_t naiveIntermediateSize() const { return kiln_artifact_naive_intermediate_size(handle_); }
  uint64_t peakLiveSize() const { return kiln_artifact_peak_live_size(handle_); }
  uint64_t modeledKernelBytes() const { return kiln_artifact_modeled_kernel_bytes(handle_); }
  uint64_t memoryLimit() const { return kiln_artifact_memory_limit(handle_); }
  uint64_t unlimitedArenaSize() const { return kiln_artifact_unlimited_arena_size(handle_); }
  uint32_t streamCount() const { return kiln_artifact_stream_count(handle_); }
  uint64_t serialArenaSize() const { return kiln_artifact_serial_arena_size(handle_); }
  uint32_t stepStream(size_t index) const { return kiln_artifact_step_stream(handle_, index); }
  uint64_t constantsSize() const { return kiln_artifact_constants_size(handle_); }
  uint64_t runPeakMemory() const { return kiln_artifact_run_peak_memory(handle_); }
  size_t codeObjectCount() const { return kiln_artifact_code_object_count(handle_); }
  size_t stepCount() const { return kiln_artifact_step_count(handle_); }

  /// Returns the signature of input / output `index`.
  Result<TensorSignature> input(size_t index) const {
    return signature(kiln_artifact_input_signature, index);
  }
  Result<TensorSignature> output(size_t index) const {
    return signature(kiln_artifact_output_signature, index);
  }

  /// Returns the description of code object / step `index`; its pointers live
  /// as long as this artifact.
  Result<kiln_code_object_info_t> codeObject(size_t index) const {
    kiln_code_object_info_t info{};
    info.struct_size = sizeof(info);
    Status status = Status::fromC(kiln_artifact_code_object_info(handle_, index, &info));
    if (!status.ok()) return status;
    return info;
  }
  Result<kiln_step_info_t> step(size_t index) const {
    kiln_step_info_t info{};
    info.struct_size = sizeof(info);
    Status status = Status::fromC(kiln_artifact_step_info(handle_, index, &info));
    if (!status.ok()) return status;
    return info;
  }

  kiln_artifact_t* get() const { return handle_; }
  kiln_artifact_t* release() {
    kiln_artifact_t* handle = handle_;
    handle_ = nullptr;
    return handle;
  }
  void reset(kiln_artifact_t* handle = nullptr) {
    kiln_artifact_release(handle_);
    handle_ = handle;
  }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  using SignatureQuery = kiln_status_t* (*)(const kiln_artifact_t*, size_t,
                                            kiln_tensor_signature_t*);

  Result<TensorSignature> signature(SignatureQuery query, size_t index) const {
    kiln_tensor_signature_t c{};
    c.struct_size = sizeof(c);
    Status status = Status::fromC(query(handle_, index, &c));
    if (!status.ok()) return status;
    TensorSignature signature;
    signature.name = c.name;
    signature.elementType = c.element_type;
    signature.dims.assign(c.dims, c.dims + c.rank);
    for (size_t i = 0; i < c.rank; ++i) signature.dimSymbols.emplace_back(c.dim_symbols[i]);
    signature.byteSize = c.byte_size;
    return signature;
  }

  kiln_artifact_t* handle_ = nullptr;
};

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

/// Options of `Session::create`, with the defaults of
/// `kiln_session_options_initialize`.
struct SessionOptions {
  kiln_device_kind_t deviceKind = KILN_DEVICE_KIND_CPU;
  /// 0: the hardware concurrency.
  uint32_t numThreads = 0;
  /// The CUDA device of a KILN_DEVICE_KIND_CUDA session.
  int32_t deviceOrdinal = 0;
  /// A split model: the device this session runs, the directory the devices meet in, and how
  /// long to wait for them (0: 60 s).
  uint32_t deviceRank = 0;
  std::string rendezvous;
  uint32_t rendezvousTimeoutMs = 0;
};

/// An owning handle to a `kiln_session_t`. Move-only; `run` may be called
/// from many threads at once (see `kiln_session_t`).
class Session {
 public:
  Session() = default;
  explicit Session(kiln_session_t* handle) : handle_(handle) {}
  Session(Session&& other) noexcept : handle_(other.release()) {}
  Session& operator=(Session&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { kiln_session_release(handle_); }

  /// Creates a session for `artifact` (see `kiln_session_create`).
  static Result<Session> create(const Artifact& artifact,
                                const SessionOptions& options = SessionOptions()) {
    kiln_session_options_t c;
    kiln_session_options_initialize(&c);
    c.device_kind = options.deviceKind;
    c.num_threads = options.numThreads;
    c.device_ordinal = options.deviceOrdinal;
    c.device_rank = options.deviceRank;
    c.rendezvous = options.rendezvous.empty() ? nullptr : options.rendezvous.c_str();
    c.rendezvous_timeout_ms = options.rendezvousTimeoutMs;
    kiln_session_t* handle = nullptr;
    Status status = Status::fromC(kiln_session_create(artifact.get(), &c, &handle));
    if (!status.ok()) return status;
    return Session(handle);
  }

  /// Runs the program on `inputs` (in signature order) and returns its
  /// outputs (see `kiln_session_run`).
  Result<std::vector<Tensor>> run(const std::vector<const Tensor*>& inputs) const {
    std::vector<const kiln_tensor_t*> c_inputs;
    c_inputs.reserve(inputs.size());
    for (const Tensor* input : inputs) c_inputs.push_back(input ? input->get() : nullptr);
    std::vector<kiln_tensor_t*> outputs(outputCount(), nullptr);
    Status status = Status::fromC(kiln_session_run(handle_, c_inputs.size(), c_inputs.data(),
                                                   outputs.size(), outputs.data()));
    if (!status.ok()) return status;
    std::vector<Tensor> result;
    result.reserve(outputs.size());
    for (kiln_tensor_t* output : outputs) result.emplace_back(output);
    return result;
  }

  /// Runs the program on `inputs`, writing its outputs into `outputs`, tensors the caller made
  /// of the outputs' types and this run's dims (see `kiln_session_run_into`).
  Status runInto(const std::vector<const Tensor*>& inputs,
                 const std::vector<Tensor*>& outputs) const {
    std::vector<const kiln_tensor_t*> c_inputs;
    c_inputs.reserve(inputs.size());
    for (const Tensor* input : inputs) c_inputs.push_back(input ? input->get() : nullptr);
    std::vector<kiln_tensor_t*> c_outputs;
    c_outputs.reserve(outputs.size());
    for (Tensor* output : outputs) c_outputs.push_back(output ? output->get() : nullptr);
    return Status::fromC(kiln_session_run_into(handle_, c_inputs.size(), c_inputs.data(),
                                               c_outputs.size(), c_outputs.data()));
  }

  size_t inputCount() const { return kiln_session_input_count(handle_); }
  size_t outputCount() const { return kiln_session_output_count(handle_); }

  /// Times the program's steps on the device alone, `iterations` times, in milliseconds (see
  /// `kiln_session_time_device`).
  Result<std::vector<double>> timeDevice(size_t iterations) const {
    std::vector<double> milliseconds(iterations);
    Status status =
        Status::fromC(kiln_session_time_device(handle_, iterations, milliseconds.data()));
    if (!status.ok()) return status;
    return milliseconds;
  }

  /// Starts a trace of the runs from now on (see `kiln_session_trace_start`).
  Status startTrace() const { return Status::fromC(kiln_session_trace_start(handle_)); }
  /// Stops the trace and writes it to `path` as Chrome trace-event JSON (see
  /// `kiln_session_trace_write`).
  Status writeTrace(const std::string& path) const {
    return Status::fromC(kiln_session_trace_write(handle_, path.c_str()));
  }

  /// Returns the session's statistics (see `kiln_session_statistics`).
  Result<kiln_session_statistics_t> statistics() const {
    kiln_session_statistics_t stats{};
    stats.struct_size = sizeof(stats);
    Status status = Status::fromC(kiln_session_statistics(handle_, &stats));
    if (!status.ok()) return status;
    return stats;
  }

  kiln_session_t* get() const { return handle_; }
  kiln_session_t* release() {
    kiln_session_t* handle = handle_;
    handle_ = nullptr;
    return handle;
  }
  void reset(kiln_session_t* handle = nullptr) {
    kiln_session_release(handle_);
    handle_ = handle;
  }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  kiln_session_t* handle_ = nullptr;
};

}  // namespace kiln

#endif  // KILN_RUNTIME_INCLUDE_KILN_RUNTIME_HPP_
