//===- runtime.h - The Kiln runtime C API -------------------------*- C -*-===//
//
// The C API of the Kiln runtime: version queries, status objects, element
// types, host tensors with .npy file I/O, .kiln artifacts and the sessions
// that run them.
//
// Conventions
//   - Objects are opaque handles created by `kiln_<object>_create*` (or a
//     reader) and destroyed by `kiln_<object>_release`. Releasing NULL is a
//     no-op.
//   - Every fallible call returns a `kiln_status_t*`: NULL means success; a
//     non-NULL status carries a code and a message and is owned by the caller,
//     who releases it with `kiln_status_release`. Out-parameters come last and
//     are written only on success.
//   - No call terminates the process or lets a C++ exception escape on bad
//     input; out-of-memory is reported as KILN_STATUS_RESOURCE_EXHAUSTED.
//   - Functions that take no object (versions, status codes, element types)
//     are thread-safe; each object type states its own rules below.
//   - Strings are NUL-terminated UTF-8. Paths are passed to the C library as
//     they are.
//
// This header is valid C99 and C++. Its functions and structs keep their ABI
// from one version to the next (structs only grow, behind `struct_size`);
// kiln/inspect.h, which describes compiler output, does not.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INCLUDE_KILN_RUNTIME_H_
#define KILN_RUNTIME_INCLUDE_KILN_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

//===----------------------------------------------------------------------===//
// Export macro
//===----------------------------------------------------------------------===//

// KILN_API marks the functions of the C API. The library is built with hidden
// visibility, so these are its only exported symbols. On Windows, define
// KILN_RUNTIME_STATIC when linking the static library.
#if defined(_WIN32)
#if defined(KILN_RUNTIME_STATIC)
#define KILN_API
#elif defined(KILN_RUNTIME_BUILDING)
#define KILN_API __declspec(dllexport)
#else
#define KILN_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

// Every enum of the API is 32 bits wide. In C++ it has int32_t as its fixed
// underlying type, so any value a C caller passes is a well-defined value the
// library can reject; in C it is a plain enum of the same size.
#if defined(__cplusplus)
// Enums declared with it are kept out of clang-format, which does not parse the macro.
#define KILN_ENUM(name) enum name : int32_t
#else
#define KILN_ENUM(name) enum name
#endif

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Versions
//===----------------------------------------------------------------------===//

/// The version of the Kiln release this header belongs to.
#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0

/// The version of the C API this header declares. It grows whenever a function
/// or enumerator is added; existing declarations never change meaning within a
/// major release.
#define KILN_API_VERSION 13

/// Returns the release version of the loaded library as "MAJOR.MINOR.PATCH".
/// The string is static. Thread-safe.
KILN_API const char* kiln_version(void);

/// Returns the C API version the loaded library implements. A program built
/// against this header may use every declaration here when
/// `kiln_api_version() >= KILN_API_VERSION`. Thread-safe.
KILN_API uint32_t kiln_api_version(void);

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

/// The category of a failure. The values follow the canonical codes of gRPC,
/// Abseil and IREE and are stable.
// clang-format off
typedef KILN_ENUM(kiln_status_code_e) {
  /// Success; only ever seen as the code of a NULL status.
  KILN_STATUS_OK = 0,
  /// The operation was cancelled by its caller.
  KILN_STATUS_CANCELLED = 1,
  /// An error that fits no other category.
  KILN_STATUS_UNKNOWN = 2,
  /// The caller passed a bad argument or malformed input, whatever the state.
  KILN_STATUS_INVALID_ARGUMENT = 3,
  /// A deadline passed before the operation finished.
  KILN_STATUS_DEADLINE_EXCEEDED = 4,
  /// A named thing (a file, an input, a device) does not exist.
  KILN_STATUS_NOT_FOUND = 5,
  /// The thing an operation would create exists already (e.g. a file).
  KILN_STATUS_ALREADY_EXISTS = 6,
  /// The caller may not do this (e.g. a file's permissions).
  KILN_STATUS_PERMISSION_DENIED = 7,
  /// Memory, disk or another resource ran out.
  KILN_STATUS_RESOURCE_EXHAUSTED = 8,
  /// The system is not in the state the operation needs.
  KILN_STATUS_FAILED_PRECONDITION = 9,
  /// The operation was aborted (e.g. by a concurrent conflict).
  KILN_STATUS_ABORTED = 10,
  /// A value lies outside the range the operation supports (e.g. a size
  /// that overflows).
  KILN_STATUS_OUT_OF_RANGE = 11,
  /// The operation is valid but not implemented (e.g. an unsupported dtype).
  KILN_STATUS_UNIMPLEMENTED = 12,
  /// An invariant of the library broke: a bug in Kiln.
  KILN_STATUS_INTERNAL = 13,
  /// A resource (a device, a file system) is unavailable; retrying may help.
  KILN_STATUS_UNAVAILABLE = 14,
  /// Data is corrupt or truncated.
  KILN_STATUS_DATA_LOSS = 15,
} kiln_status_code_t;
// clang-format on

/// The result of a fallible call: NULL for success, otherwise a code and a
/// message.
///
/// Thread safety: a status is immutable; any thread may read it concurrently.
/// It must be released exactly once, by its owner, after all reads.
typedef struct kiln_status_t kiln_status_t;

/// Makes a status with `code` and a copy of `message` (NULL reads as "").
/// Returns NULL for KILN_STATUS_OK. If memory runs out, returns a shared
/// RESOURCE_EXHAUSTED status that is still released as usual. Lets code that
/// plugs into the runtime report errors the same way the runtime does.
KILN_API kiln_status_t* kiln_status_create(kiln_status_code_t code, const char* message);

/// Returns the code of `status`; KILN_STATUS_OK for NULL.
KILN_API kiln_status_code_t kiln_status_code(const kiln_status_t* status);

/// Returns the message of `status`; "" for NULL. The string lives as long as
/// the status.
KILN_API const char* kiln_status_message(const kiln_status_t* status);

/// Releases `status`. NULL is a no-op.
KILN_API void kiln_status_release(kiln_status_t* status);

/// Returns the name of `code` as spelled in the enum without its prefix
/// (e.g. "INVALID_ARGUMENT"), or "UNKNOWN_CODE" for a value outside the enum.
/// The string is static.
KILN_API const char* kiln_status_code_string(kiln_status_code_t code);

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// The element type of a tensor. The values are stable: artifacts store them.
/// Zero is never a valid element type, so a zero-initialized field reads as
/// "unset".
// clang-format off
typedef KILN_ENUM(kiln_element_type_e) {
  /// IEEE 754 binary32.
  KILN_ELEMENT_TYPE_F32 = 1,
  /// IEEE 754 binary16.
  KILN_ELEMENT_TYPE_F16 = 2,
  /// bfloat16: the upper 16 bits of a binary32.
  KILN_ELEMENT_TYPE_BF16 = 3,
  /// 8-bit float: 4 exponent and 3 mantissa bits, no infinities, NaN is S.1111.111.
  KILN_ELEMENT_TYPE_F8E4M3FN = 4,
  /// 8-bit float: 5 exponent and 2 mantissa bits, IEEE-style infinities and NaNs.
  KILN_ELEMENT_TYPE_F8E5M2 = 5,
  /// IEEE 754 binary64.
  KILN_ELEMENT_TYPE_F64 = 6,
  /// Signed two's-complement 64-bit integer.
  KILN_ELEMENT_TYPE_I64 = 7,
  /// Signed two's-complement 32-bit integer.
  KILN_ELEMENT_TYPE_I32 = 8,
  /// Signed two's-complement 16-bit integer.
  KILN_ELEMENT_TYPE_I16 = 9,
  /// Signed two's-complement 8-bit integer.
  KILN_ELEMENT_TYPE_I8 = 10,
  /// Unsigned 8-bit integer.
  KILN_ELEMENT_TYPE_U8 = 11,
  /// Boolean (i1), stored as one byte holding 0 or 1.
  KILN_ELEMENT_TYPE_BOOL = 12,
  /// Unsigned 16-bit integer (API version 5).
  KILN_ELEMENT_TYPE_U16 = 13,
  /// Unsigned 32-bit integer (API version 5).
  KILN_ELEMENT_TYPE_U32 = 14,
  /// Unsigned 64-bit integer (API version 5).
  KILN_ELEMENT_TYPE_U64 = 15,
  /// 8-bit float: 4 exponent and 3 mantissa bits, bias 8, no infinities and no negative zero:
  /// 0x80 is the only NaN (API version 8).
  KILN_ELEMENT_TYPE_F8E4M3FNUZ = 16,
  /// 8-bit float: 5 exponent and 2 mantissa bits, bias 16, no infinities and no negative zero:
  /// 0x80 is the only NaN (API version 8).
  KILN_ELEMENT_TYPE_F8E5M2FNUZ = 17,
} kiln_element_type_t;
// clang-format on

/// Returns the storage size in bytes of one element of `type`, or 0 when
/// `type` is not a valid element type.
KILN_API size_t kiln_element_type_size(kiln_element_type_t type);

/// Returns the canonical name of `type` ("f32", "f16", "bf16", "f8e4m3fn",
/// "f8e5m2", "f64", "i64", "i32", "i16", "i8", "u8", "bool", "u16", "u32",
/// "u64"), or NULL when `type` is not a valid element type. The string is
/// static.
KILN_API const char* kiln_element_type_name(kiln_element_type_t type);

/// Parses an element type name into `*out_type`. Accepts the canonical names,
/// the NumPy/PyTorch spellings ("float32", "float16", "bfloat16",
/// "float8_e4m3fn", "float8_e5m2", "float64", "int64", "int32", "int16",
/// "int8", "uint8", "uint16", "uint32", "uint64") and "i1" for bool; matching
/// is case-sensitive. Returns INVALID_ARGUMENT for any other name.
KILN_API kiln_status_t* kiln_element_type_parse(const char* name, kiln_element_type_t* out_type);

//===----------------------------------------------------------------------===//
// Host tensors
//===----------------------------------------------------------------------===//

/// The largest rank a tensor may have (the limit NumPy 1.x has too).
#define KILN_TENSOR_MAX_RANK 32

/// The alignment, in bytes, of every host tensor's data.
#define KILN_TENSOR_ALIGNMENT 64

/// A dense, row-major (C order) tensor in host memory that owns its storage.
/// Its element type and dims are fixed at creation; its data is writable.
///
/// Thread safety: the accessors may be called from any number of threads at
/// once. Writing through `kiln_tensor_data` while another thread reads or
/// writes the same bytes needs the caller's synchronization. A tensor must not
/// be released while another thread still uses it.
typedef struct kiln_tensor_t kiln_tensor_t;

/// Creates a tensor of `type` with `rank` dims read from `dims` (which may be
/// NULL when `rank` is 0). Its storage is zero-filled and aligned to
/// KILN_TENSOR_ALIGNMENT; the data pointer is valid (never NULL) even when the
/// tensor has no elements.
///
/// Returns INVALID_ARGUMENT for an invalid type, a negative dim or NULL
/// arguments; OUT_OF_RANGE when `rank` exceeds KILN_TENSOR_MAX_RANK or the byte
/// size overflows; RESOURCE_EXHAUSTED when memory runs out.
KILN_API kiln_status_t* kiln_tensor_create(kiln_element_type_t type, size_t rank,
                                           const int64_t* dims, kiln_tensor_t** out_tensor);

/// Creates a tensor like `kiln_tensor_create` and copies its contents from
/// `data`, which holds `data_size` bytes in row-major order. `data_size` must
/// equal the tensor's byte size (INVALID_ARGUMENT otherwise), which catches a
/// mismatched buffer; `data` may be NULL only when that size is 0.
KILN_API kiln_status_t* kiln_tensor_create_copy(kiln_element_type_t type, size_t rank,
                                                const int64_t* dims, const void* data,
                                                size_t data_size, kiln_tensor_t** out_tensor);

/// Hands storage a tensor wraps back to its owner (kiln_tensor_wrap): called once, with the
/// data and the context given, when the tensor is released.
typedef void (*kiln_tensor_release_fn)(void* data, void* context);

/// Makes a tensor over `data_size` bytes at `data`, in row-major order, without copying them:
/// memory the caller owns (a NumPy array, a PyTorch tensor, a buffer of its own) is read by
/// `kiln_session_run` in place. `data` must be aligned to the element size and `data_size` must
/// be the tensor's byte size (INVALID_ARGUMENT otherwise); it stays the caller's, valid and
/// unchanged while the tensor is used. `release(data, release_context)` runs when the tensor is
/// released, if `release` is not NULL. Fails otherwise like `kiln_tensor_create`. Added in API
/// version 13.
KILN_API kiln_status_t* kiln_tensor_wrap(kiln_element_type_t type, size_t rank,
                                         const int64_t* dims, void* data, size_t data_size,
                                         kiln_tensor_release_fn release, void* release_context,
                                         kiln_tensor_t** out_tensor);

/// Releases `tensor` and its storage (or hands wrapped storage back, kiln_tensor_wrap). NULL is
/// a no-op.
KILN_API void kiln_tensor_release(kiln_tensor_t* tensor);

/// Returns the element type of `tensor` (0, an invalid type, for NULL).
KILN_API kiln_element_type_t kiln_tensor_element_type(const kiln_tensor_t* tensor);

/// Returns the rank of `tensor` (0 for NULL).
KILN_API size_t kiln_tensor_rank(const kiln_tensor_t* tensor);

/// Returns the `rank` dims of `tensor`, outermost first. The array lives as
/// long as the tensor and is never NULL for a non-NULL tensor.
KILN_API const int64_t* kiln_tensor_dims(const kiln_tensor_t* tensor);

/// Returns the number of elements of `tensor`: the product of its dims, 1 for
/// rank 0 (0 for NULL).
KILN_API size_t kiln_tensor_element_count(const kiln_tensor_t* tensor);

/// Returns the size of the data of `tensor` in bytes (0 for NULL).
KILN_API size_t kiln_tensor_byte_size(const kiln_tensor_t* tensor);

/// Returns the writable data of `tensor`: `kiln_tensor_byte_size` bytes,
/// aligned to KILN_TENSOR_ALIGNMENT. NULL only for a NULL tensor.
KILN_API void* kiln_tensor_data(kiln_tensor_t* tensor);

/// Returns the data of `tensor` for reading. NULL only for a NULL tensor.
KILN_API const void* kiln_tensor_const_data(const kiln_tensor_t* tensor);

//===----------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------===//

// Kiln reads and writes NumPy's .npy format, versions 1.0, 2.0 and 3.0.
//
// Reading accepts the dtypes f4 f2 f8 i8 i4 i2 (little- or big-endian; the
// data is byte-swapped to little-endian), |i1, |u1 and |b1 (bool bytes other
// than 0 are read as 1). Arrays with fortran_order=True are transposed into
// row-major order, so the tensor has the same shape and values NumPy shows.
// 0-d arrays and zero-size dims are supported. A file must hold exactly one
// array: data shorter than the shape needs is DATA_LOSS, and bytes after the
// data are INVALID_ARGUMENT. Every error message starts with the file's path.
//
// NumPy has no dtype for bf16 and float8, so Kiln stores them as raw bytes:
// bf16 is written with descr '<V2' and f8e4m3fn and f8e5m2 with '|V1' (NumPy
// loads these as void arrays; a `.view()` as uint16 or uint8 recovers the
// bits). When reading without an expected type, '<V2' and '|V2' read as
// bf16, and '|V1' is refused as ambiguous. `kiln_tensor_read_npy_as` resolves
// that: given bf16, f8e4m3fn or f8e5m2, it also reads raw bytes of the same
// width ('V', 'u' or 'i' descrs) as that type.
//
// Writing always produces version 1.0, little-endian, C order, with the same
// header bytes `numpy.save` writes.

/// Flags for `kiln_tensor_write_npy`.
// clang-format off
typedef KILN_ENUM(kiln_npy_write_flag_bits_e) {
  KILN_NPY_WRITE_FLAG_NONE = 0,
  /// Replace the file when it exists. Without this flag, an existing file is
  /// never touched and the call returns ALREADY_EXISTS.
  KILN_NPY_WRITE_FLAG_OVERWRITE = 1u << 0,
} kiln_npy_write_flag_bits_t;
// clang-format on

/// A bitwise OR of `kiln_npy_write_flag_bits_t` values.
typedef uint32_t kiln_npy_write_flags_t;

/// Reads the .npy file at `path` into a new tensor.
///
/// Returns NOT_FOUND or PERMISSION_DENIED when the file cannot be opened;
/// INVALID_ARGUMENT for a file that is not a well-formed .npy; UNIMPLEMENTED
/// for an unsupported format version or dtype; OUT_OF_RANGE when the shape
/// overflows; DATA_LOSS when the file is truncated.
KILN_API kiln_status_t* kiln_tensor_read_npy(const char* path, kiln_tensor_t** out_tensor);

/// Reads the .npy file at `path` into a new tensor of `expected_type`. The
/// file's dtype must be that type (INVALID_ARGUMENT otherwise, naming both),
/// except that raw bytes of the same width are accepted for bf16, f8e4m3fn
/// and f8e5m2 as described above.
KILN_API kiln_status_t* kiln_tensor_read_npy_as(const char* path, kiln_element_type_t expected_type,
                                                kiln_tensor_t** out_tensor);

/// Writes `tensor` to `path` as a .npy file. Unless `flags` holds
/// KILN_NPY_WRITE_FLAG_OVERWRITE, an existing file is left untouched and
/// ALREADY_EXISTS is returned. A failed write removes the partial file.
KILN_API kiln_status_t* kiln_tensor_write_npy(const kiln_tensor_t* tensor, const char* path,
                                              kiln_npy_write_flags_t flags);

//===----------------------------------------------------------------------===//
// Artifacts
//===----------------------------------------------------------------------===//

/// A compiled program loaded from a .kiln file: its input/output signature,
/// constants, code objects and the steps a run executes. Loading verifies the
/// whole file (its FlatBuffers structure, then Kiln's own checks: format
/// version, device, element types, dims, every buffer reference and kernel
/// index, workgroup counts, that every output is written) before anything can
/// run, so a session never reads out of bounds.
///
/// Trust: verification checks the artifact's structure, not its code. A CPU
/// artifact carries native machine code, which creating a session loads with
/// the dynamic loader (its constructors run then) and which every run executes
/// with the process's rights; a CUDA artifact carries GPU code. Load artifacts
/// only from sources trusted as much as a shared library would be.
///
/// Thread safety: an artifact is immutable once loaded; every query may be
/// called from any number of threads at once, and any number of sessions may
/// be created from it concurrently. Sessions keep what they need of it alive,
/// so it may be released while they still run.
typedef struct kiln_artifact_t kiln_artifact_t;

/// Loads and verifies the .kiln file at `path`, reading it into memory of the artifact's own:
/// what was verified is what sessions run, whatever later happens to the file.
///
/// Returns NOT_FOUND or PERMISSION_DENIED when the file cannot be opened;
/// DATA_LOSS "PATH: not a valid .kiln artifact (...)" for a truncated or
/// corrupt file; FAILED_PRECONDITION naming both versions for a format version
/// this library does not read (see kiln/artifact_format.h); INVALID_ARGUMENT
/// naming the step, binding or signature entry that breaks a rule of the
/// format. Every message starts with `path`.
KILN_API kiln_status_t* kiln_artifact_load_file(const char* path, kiln_artifact_t** out_artifact);

/// Loads and verifies the .kiln file at `path` like `kiln_artifact_load_file`, but maps it
/// read-only instead of reading it: pages are read as sessions use them (a device of a split
/// model touches its own weights only), which starts large models sooner. The file must not be
/// rewritten in place while the artifact or a session of it lives (`cp` over it, `rsync
/// --inplace`): the mapping would then show bytes that were never verified, or raise SIGBUS
/// where the file shrank. Replacing the file by renaming another over it (what `kiln compile`
/// does) is safe. Added in API version 13.
KILN_API kiln_status_t* kiln_artifact_load_file_mapped(const char* path,
                                                       kiln_artifact_t** out_artifact);

/// Loads and verifies an artifact from the `size` bytes at `data`, which are
/// copied (the caller may free them when the call returns). `name` (NULL
/// reads as "<memory>") stands for the file in messages. Fails like
/// `kiln_artifact_load_file`.
KILN_API kiln_status_t* kiln_artifact_load_memory(const void* data, size_t size, const char* name,
                                                  kiln_artifact_t** out_artifact);

/// Releases `artifact`. NULL is a no-op. Sessions created from it stay valid.
KILN_API void kiln_artifact_release(kiln_artifact_t* artifact);

/// Returns the name the artifact was loaded under (its path, or the `name`
/// given to `kiln_artifact_load_memory`). The string lives as long as the
/// artifact; "" for NULL.
KILN_API const char* kiln_artifact_name(const kiln_artifact_t* artifact);

/// Returns the device the program was compiled for ("cpu" or "cuda"); "" for
/// NULL. The string lives as long as the artifact.
KILN_API const char* kiln_artifact_device(const kiln_artifact_t* artifact);

/// Returns the tool that wrote the artifact (e.g. "kiln 0.1.0") and the model
/// it was compiled from; "" when the file does not say, or for NULL.
KILN_API const char* kiln_artifact_producer(const kiln_artifact_t* artifact);
KILN_API const char* kiln_artifact_source(const kiln_artifact_t* artifact);

/// Returns the artifact's format version (0 for NULL).
KILN_API uint32_t kiln_artifact_format_version(const kiln_artifact_t* artifact);

/// A model split over devices (`kiln compile --devices N`) is one file: device
/// 0's artifact, carrying the other devices'. Returns how many devices run the
/// artifact's model (1 when it is not split, 0 for NULL) and which of them its
/// own program is (0 when not split or NULL). Added in API version 10.
KILN_API uint32_t kiln_artifact_device_count(const kiln_artifact_t* artifact);
KILN_API uint32_t kiln_artifact_device_rank(const kiln_artifact_t* artifact);

/// How a split model shares its devices: "tensor" (each device holds a part
/// of every split block), "pipeline" (each device runs a stage) or "batch"
/// (each device runs the whole model on its share of the batch); "" when
/// the model is not split, or for NULL. The string lives as long as the
/// artifact. Added in API version 10.
KILN_API const char* kiln_artifact_partition(const kiln_artifact_t* artifact);

/// Opens the artifact of device `rank` of a split model, for inspection (a
/// session picks its device's by itself): device 0's file carries every one.
/// The new artifact shares the file's bytes and must be released. Returns
/// OUT_OF_RANGE for a rank past the devices and INVALID_ARGUMENT when the
/// artifact does not carry that device's (another device's artifact carries
/// none). Added in API version 10.
KILN_API kiln_status_t* kiln_artifact_open_device(const kiln_artifact_t* artifact, uint32_t rank,
                                                  kiln_artifact_t** out_artifact);

/// Returns the number of inputs / outputs of the program (0 for NULL).
KILN_API size_t kiln_artifact_input_count(const kiln_artifact_t* artifact);
KILN_API size_t kiln_artifact_output_count(const kiln_artifact_t* artifact);

/// One input or output of a program. Every pointer lives as long as the
/// artifact.
typedef struct kiln_tensor_signature_t {
  /// sizeof(kiln_tensor_signature_t), set by the caller before the query.
  size_t struct_size;
  /// The name of the input or output in the model.
  const char* name;
  kiln_element_type_t element_type;
  size_t rank;
  /// `rank` dims, outermost first (the compiled, static sizes); -1 for one that
  /// varies from run to run in an artifact compiled for a range of shapes
  /// (kiln_artifact_symbol_count).
  const int64_t* dims;
  /// `rank` strings: "" for a dim that was static in the model, otherwise the
  /// model's symbolic name for it (e.g. "batch"), bound to `dims[i]`, or, for a
  /// dim of -1, the name of its symbol.
  const char* const* dim_symbols;
  /// The size of the tensor's data in bytes (at the largest shape of a range).
  uint64_t byte_size;
} kiln_tensor_signature_t;

/// Writes the signature of input / output `index` into `*out_signature`,
/// whose `struct_size` the caller has set. Returns OUT_OF_RANGE for an index
/// past the count, INVALID_ARGUMENT for NULL arguments or a `struct_size`
/// smaller than the first release of the struct.
KILN_API kiln_status_t* kiln_artifact_input_signature(const kiln_artifact_t* artifact, size_t index,
                                                      kiln_tensor_signature_t* out_signature);
KILN_API kiln_status_t* kiln_artifact_output_signature(const kiln_artifact_t* artifact,
                                                       size_t index,
                                                       kiln_tensor_signature_t* out_signature);

/// A dimension that varies from run to run in an artifact compiled for a range
/// of shapes (kiln compile --shape-range): dimension `dim` of input `input`,
/// named `name`, within [min, max]. Inputs sharing a symbol must agree on it.
/// `max` is INT64_MAX for a dimension without an upper bound (kiln compile
/// --shape NAME=?x...). Added in API version 12.
typedef struct kiln_dim_symbol_t {
  const char* name;
  size_t input;
  size_t dim;
  int64_t min;
  int64_t max;
} kiln_dim_symbol_t;

/// Returns the number of symbols (0 for an artifact of one shape, or NULL).
/// Added in API version 12.
KILN_API size_t kiln_artifact_symbol_count(const kiln_artifact_t* artifact);

/// Writes symbol `index` into `*out_symbol` (its name lives as long as the
/// artifact). OUT_OF_RANGE past the count; INVALID_ARGUMENT for NULL.
/// Added in API version 12.
KILN_API kiln_status_t* kiln_artifact_symbol(const kiln_artifact_t* artifact, size_t index,
                                             kiln_dim_symbol_t* out_symbol);

/// Returns the number of checks every run makes (0 for NULL): an operand known
/// only at run time that decides a shape the model declares (a Reshape's shape
/// input, Unsqueeze's axes, ...) is checked against it, and a run whose inputs
/// disagree fails with INVALID_ARGUMENT and the check's message. The outputs
/// (kiln_artifact_output_count) do not include them. Added in API version 11.
KILN_API size_t kiln_artifact_check_count(const kiln_artifact_t* artifact);

/// Returns the message of check `index` (naming the node and the operand), which
/// lives as long as the artifact; NULL past the count or for NULL. Added in API
/// version 11.
KILN_API const char* kiln_artifact_check_message(const kiln_artifact_t* artifact, size_t index);

/// Returns the bytes of the arena one run needs: the peak of the static memory
/// plan (0 for NULL). An artifact with a dimension without an upper bound plans
/// its memory per run: this is then the plan at the nominal shape its types
/// give that dimension, and each run's arena is that run's plan.
KILN_API uint64_t kiln_artifact_arena_size(const kiln_artifact_t* artifact);

/// Returns the sum of the sizes of all intermediate buffers, as if none were
/// reused: what the memory plan saved compared to (0 for NULL).
KILN_API uint64_t kiln_artifact_naive_intermediate_size(const kiln_artifact_t* artifact);

/// Returns the largest sum of intermediate buffers live at one step: the lower
/// bound no arena can go below, for judging the plan (0 for NULL, and for
/// artifacts that do not record it).
KILN_API uint64_t kiln_artifact_peak_live_size(const kiln_artifact_t* artifact);

/// Returns the bytes the generated kernels read and write in one run, as the
/// compiler's cost model counted them when it planned fusion (library calls
/// not included; 0 for NULL and for artifacts that do not record it).
KILN_API uint64_t kiln_artifact_modeled_kernel_bytes(const kiln_artifact_t* artifact);

/// Returns the arena limit the artifact was compiled to (`kiln compile
/// --memory-limit`), 0 when none (and for NULL). Added in API version 7.
KILN_API uint64_t kiln_artifact_memory_limit(const kiln_artifact_t* artifact);

/// Returns the arena the program would take without its memory limit: what
/// recomputing values saved (0 when compiled without a limit, and for NULL).
/// Added in API version 7.
KILN_API uint64_t kiln_artifact_unlimited_arena_size(const kiln_artifact_t* artifact);

/// Returns the streams the program's steps run on (`kiln compile --streams`;
/// 1 for a program on one stream, 0 for NULL). Added in API version 7.
KILN_API uint32_t kiln_artifact_stream_count(const kiln_artifact_t* artifact);

/// Returns the arena the program would take with every step on one stream:
/// what running steps at the same time costs in memory (0 when the program has
/// one stream, and for NULL). Added in API version 7.
KILN_API uint64_t kiln_artifact_serial_arena_size(const kiln_artifact_t* artifact);

/// Returns the stream step `index` runs on (0 for NULL or an index past the
/// steps). Added in API version 7.
KILN_API uint32_t kiln_artifact_step_stream(const kiln_artifact_t* artifact, size_t index);

/// Returns the bytes of constants (weights) the artifact holds; a session
/// keeps them once, shared by all its runs (0 for NULL).
KILN_API uint64_t kiln_artifact_constants_size(const kiln_artifact_t* artifact);

/// Returns the peak memory one run allocates beyond the session's fixed
/// memory: its arena plus its outputs (0 for NULL). Inputs belong to the
/// caller and constants to the session; neither is counted.
KILN_API uint64_t kiln_artifact_run_peak_memory(const kiln_artifact_t* artifact);

// The artifact's code objects and steps, for tools (`kiln inspect`): kiln/inspect.h, which
// makes no ABI promise.

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

/// The kind of device a session runs on.
// clang-format off
typedef KILN_ENUM(kiln_device_kind_e) {
  /// The host CPU: generated kernels on a thread pool, oneDNN library calls.
  KILN_DEVICE_KIND_CPU = 1,
  /// An NVIDIA GPU: generated kernels, cuBLASLt and cuDNN library calls, CUDA
  /// graphs. UNIMPLEMENTED in a runtime built without CUDA.
  KILN_DEVICE_KIND_CUDA = 2,
  /// The simulated CUDA device: a "cuda" artifact compiled with the `cuda-sim`
  /// GPU architecture, run on the CPU through the CUDA device's code with GPU
  /// semantics and checks (out-of-bounds accesses, uninitialized memory,
  /// divergent barriers, races). For testing the CUDA path without a GPU.
  /// UNIMPLEMENTED in a runtime built without CUDA, and in a program that does
  /// not link the simulator (kiln_cuda_sim, which libkiln_runtime.so never
  /// holds). Added in API version 4.
  KILN_DEVICE_KIND_CUDA_SIM = 3,
} kiln_device_kind_t;
// clang-format on

/// How a session runs. Fill it with `kiln_session_options_initialize`, then
/// change what differs from the defaults.
typedef struct kiln_session_options_t {
  /// sizeof(kiln_session_options_t); set by `kiln_session_options_initialize`.
  size_t struct_size;
  /// The device; it must match the artifact's. Default: KILN_DEVICE_KIND_CPU.
  kiln_device_kind_t device_kind;
  /// The threads that run a dispatch's workgroups, counting the thread that
  /// called `kiln_session_run`. 0 (the default) means the hardware
  /// concurrency; 1 runs everything on the caller's thread. CPU only.
  uint32_t num_threads;
  /// The CUDA device a KILN_DEVICE_KIND_CUDA session runs on, as numbered by
  /// cudaSetDevice (after CUDA_VISIBLE_DEVICES). Default: 0. Added in API
  /// version 3: a caller whose `struct_size` ends before it gets device 0.
  int32_t device_ordinal;
  /// A model split over N devices (`kiln compile --devices N`) runs as one
  /// session per device, in this process or in others on this machine: the
  /// device this session runs (0 to N - 1). The session runs that device's
  /// program from device 0's artifact; its runs take turns (every device makes
  /// its collective calls in the same order). Default: 0. Added in API version
  /// 10.
  uint32_t device_rank;
  /// For a split model: the directory where the devices' sessions meet (Gloo
  /// rendezvous over loopback TCP), the same new, empty directory for all of
  /// them. Creating the session waits until every device has joined. Required
  /// for a split model, ignored otherwise. Default: NULL. Added in API version
  /// 10.
  const char* rendezvous;
  /// How long creating a split model's session waits for the other devices,
  /// in milliseconds (0: 60000). Added in API version 10.
  uint32_t rendezvous_timeout_ms;
} kiln_session_options_t;

/// Fills `options` with the defaults, including `struct_size`. NULL is a
/// no-op.
KILN_API void kiln_session_options_initialize(kiln_session_options_t* options);

/// A program made ready to run on a device: its code objects loaded and every
/// kernel resolved, its library calls prepared, and the memory runs reuse.
/// On the CPU: a thread pool and a pool of arenas. On CUDA: one arena, the
/// constants, device buffers for the inputs and outputs and pinned host
/// staging for them, all allocated at creation, and one stream. The first run
/// launches the steps one by one and checks each; the second captures the
/// whole run into a CUDA graph, which every later run replays (the
/// environment variable KILN_CUDA_GRAPHS=0 turns graphs off; a step that
/// cannot be captured turns them off for the session).
///
/// Thread safety: `kiln_session_run` and the queries may be called from any
/// number of threads at once. On the CPU, concurrent runs each get their own
/// arena and share the thread pool. On CUDA, runs of one session take turns
/// (they share its arena, buffers, stream and graph); create a session per
/// concurrent caller to overlap them on the GPU. A session must not be
/// released while a run is in progress.
typedef struct kiln_session_t kiln_session_t;

/// Creates a session for `artifact` with `options` (NULL for the defaults).
/// The session keeps what it needs of the artifact alive.
///
/// Returns INVALID_ARGUMENT for bad options, a device kind other than the
/// artifact's, a CUDA device ordinal past the devices, a code object that does
/// not load or a kernel symbol it does not export (naming the artifact, code
/// object and symbol), or a library call whose bindings or parameters are
/// wrong; UNIMPLEMENTED for a device or library call this build cannot run, or
/// a CUDA artifact without code for the GPU's architecture; UNAVAILABLE for a
/// CUDA session on a machine without a usable GPU or driver, naming why.
KILN_API kiln_status_t* kiln_session_create(const kiln_artifact_t* artifact,
                                            const kiln_session_options_t* options,
                                            kiln_session_t** out_session);

/// Releases `session`, its thread pool, arenas and loaded code. NULL is a
/// no-op.
KILN_API void kiln_session_release(kiln_session_t* session);

/// Runs the program once. `inputs` holds `input_count` tensors in the order of
/// the artifact's inputs, each with exactly the signature's element type and
/// dims. On success, `outputs` (an array of `output_count` pointers, as many
/// as the artifact's outputs) receives new tensors that the caller owns and
/// releases; on failure it is left untouched.
///
/// Returns INVALID_ARGUMENT for a wrong count, a NULL tensor or a mismatched
/// input, naming it and what was expected, e.g.
/// "input 'x': expected f32[1,3,224,224], got f32[1,3,224,225]";
/// RESOURCE_EXHAUSTED when memory runs out; the status of a failed library
/// call. Thread-safe (see kiln_session_t).
KILN_API kiln_status_t* kiln_session_run(kiln_session_t* session, size_t input_count,
                                         const kiln_tensor_t* const* inputs, size_t output_count,
                                         kiln_tensor_t** outputs);

/// Runs the program once like `kiln_session_run`, writing output i into
/// `outputs[i]`, a tensor the caller made (`kiln_tensor_create`, or
/// `kiln_tensor_wrap` over memory of its own: preallocated outputs, reused
/// across runs), which must have exactly the output's element type and this
/// run's dims. On the CPU the program's last steps write into them directly;
/// on CUDA the download lands in them. `output_count` must be the number of
/// outputs. Returns INVALID_ARGUMENT for a wrong count, a NULL tensor or one
/// of another type or shape, naming the output and what the run writes; fails
/// otherwise like `kiln_session_run`, after which the tensors' contents are
/// unspecified. Thread-safe as `kiln_session_run` is, for runs into different
/// tensors. Added in API version 13.
KILN_API kiln_status_t* kiln_session_run_into(kiln_session_t* session, size_t input_count,
                                              const kiln_tensor_t* const* inputs,
                                              size_t output_count, kiln_tensor_t* const* outputs);

/// Returns the number of inputs / outputs a run takes and makes, those of the
/// session's artifact (0 for NULL). Thread-safe.
KILN_API size_t kiln_session_input_count(const kiln_session_t* session);
KILN_API size_t kiln_session_output_count(const kiln_session_t* session);

/// What a session has done and holds, for monitoring and tests.
typedef struct kiln_session_statistics_t {
  /// sizeof(kiln_session_statistics_t), set by the caller before the query.
  size_t struct_size;
  /// The threads of the session's pool, counting the caller's thread (1 for
  /// CUDA sessions, whose caller's thread enqueues the GPU's work).
  uint32_t num_threads;
  /// The runs that finished, successfully or not.
  uint64_t run_count;
  /// The arenas allocated so far: at most the largest number of concurrent
  /// runs, since a finished run's arena is reused by the next one (always 1
  /// for CUDA sessions, which allocate theirs at creation).
  uint64_t arena_count;
  /// The bytes of each arena, and of all of them together (an artifact planned
  /// per run: the largest arena a run has taken so far).
  uint64_t arena_size;
  uint64_t arena_bytes_allocated;
} kiln_session_statistics_t;

/// Writes the session's statistics into `*out_statistics`, whose
/// `struct_size` the caller has set. Thread-safe.
KILN_API kiln_status_t* kiln_session_statistics(const kiln_session_t* session,
                                                kiln_session_statistics_t* out_statistics);

/// Times the program's steps on the device alone, `iterations` times, writing
/// each time in milliseconds to `out_ms` (an array of `iterations` doubles):
/// on CUDA, the steps without the upload of the inputs and the download of the
/// outputs, replayed as one CUDA graph between two timed events on the
/// session's stream, on the inputs of the last run. That is what a framework
/// whose tensors stay on the GPU times; kiln_session_run's wall time adds the
/// copies to and from host memory. Returns FAILED_PRECONDITION before the
/// session's first run, UNIMPLEMENTED for a CPU session (its runs read and
/// write host memory in place, so kiln_session_run is the figure). Runs and
/// timings of one session wait for each other. Added in API version 9.
KILN_API kiln_status_t* kiln_session_time_device(kiln_session_t* session, size_t iterations,
                                                 double* out_ms);

/// Starts a trace of the session's runs: every run that starts from now on
/// records a slice per step (on the CPU: each kernel, library call and copy,
/// timed on its own; on CUDA, whose steps run as one CUDA graph: one slice per
/// run, from staging the inputs to the outputs back on the host). Recording
/// costs two clock reads per step. Starting again drops what was recorded.
/// Thread-safe. Added in API version 6.
KILN_API kiln_status_t* kiln_session_trace_start(kiln_session_t* session);

/// Stops the trace and writes what it recorded to `path` (replacing the file)
/// as Chrome trace-event JSON, which Perfetto and chrome://tracing open: a
/// track per thread that called kiln_session_run, a slice per step named by
/// its kernel or library call and the model nodes it holds, with its kind, the
/// bytes of its bindings, its workgroups, and the run and step numbers.
/// Returns FAILED_PRECONDITION when no trace was started, and the error of
/// the file system naming `path`. Thread-safe. Added in API version 6.
KILN_API kiln_status_t* kiln_session_trace_write(kiln_session_t* session, const char* path);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_RUNTIME_INCLUDE_KILN_RUNTIME_H_
