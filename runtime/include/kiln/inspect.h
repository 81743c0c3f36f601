//===- inspect.h - Inspecting an artifact's code objects and steps -*- C -*-===//
//
// What the compiler put in a .kiln artifact, for `kiln inspect` and other
// tools: its code objects (targets, formats, kernel symbols) and each step of
// its program (kernels with their workgroups or CUDA blocks, library calls
// with their parameters, copies, and every binding).
//
// No ABI promise: these describe compiler internals and change with them, in
// any version. Programs that must keep working across runtime versions use
// kiln/runtime.h alone.
//
// This header is valid C99 and C++.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INCLUDE_KILN_INSPECT_H_
#define KILN_RUNTIME_INCLUDE_KILN_INSPECT_H_

#include "kiln/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Returns the number of code objects (0 for NULL).
KILN_API size_t kiln_artifact_code_object_count(const kiln_artifact_t* artifact);

/// The format of a code object; the values are those of the .kiln schema.
// clang-format off
typedef KILN_ENUM(kiln_code_format_e) {
  /// A position-independent ELF shared object for the host CPU.
  KILN_CODE_FORMAT_ELF_SHARED_OBJECT = 0,
  /// An NVIDIA cubin.
  KILN_CODE_FORMAT_CUBIN = 1,
  /// PTX text.
  KILN_CODE_FORMAT_PTX = 2,
} kiln_code_format_t;
// clang-format on

/// One code object of an artifact. Every pointer lives as long as the
/// artifact.
typedef struct kiln_code_object_info_t {
  /// sizeof(kiln_code_object_info_t), set by the caller before the query.
  size_t struct_size;
  /// The target it was compiled for (e.g. "x86_64", "sm_90").
  const char* target;
  kiln_code_format_t format;
  /// The size of its bytes.
  uint64_t byte_size;
  /// The exported symbols of its kernels, `kernel_count` of them.
  size_t kernel_count;
  const char* const* kernel_names;
} kiln_code_object_info_t;

/// Writes the description of code object `index` into `*out_info` (errors as
/// for `kiln_artifact_input_signature`).
KILN_API kiln_status_t* kiln_artifact_code_object_info(const kiln_artifact_t* artifact,
                                                       size_t index,
                                                       kiln_code_object_info_t* out_info);

/// Returns the number of steps of the program (0 for NULL).
KILN_API size_t kiln_artifact_step_count(const kiln_artifact_t* artifact);

/// What a step does.
// clang-format off
typedef KILN_ENUM(kiln_step_kind_e) {
  /// A generated kernel run over a grid of workgroups.
  KILN_STEP_KIND_DISPATCH = 1,
  /// A call into a vendor library (oneDNN, cuBLASLt, cuDNN).
  KILN_STEP_KIND_LIBRARY_CALL = 2,
  /// A byte copy from one buffer to another.
  KILN_STEP_KIND_COPY = 3,
} kiln_step_kind_t;
// clang-format on

/// Where a buffer lives while a program runs; the values are those of the
/// .kiln schema.
// clang-format off
typedef KILN_ENUM(kiln_buffer_kind_e) {
  /// A range of the run's arena.
  KILN_BUFFER_KIND_ARENA = 0,
  /// A range of the artifact's constants.
  KILN_BUFFER_KIND_CONSTANT = 1,
  /// One of the caller's inputs.
  KILN_BUFFER_KIND_INPUT = 2,
  /// One of the outputs handed back to the caller.
  KILN_BUFFER_KIND_OUTPUT = 3,
} kiln_buffer_kind_t;
// clang-format on

/// One buffer a step reads or writes, as the step sees it.
typedef struct kiln_binding_info_t {
  kiln_buffer_kind_t buffer_kind;
  /// The input or output index for those kinds; 0 otherwise.
  uint32_t buffer_index;
  /// The byte range of the buffer: in the arena, in the constants, or 0 and
  /// the tensor's size for inputs and outputs.
  uint64_t offset;
  uint64_t size;
  kiln_element_type_t element_type;
  size_t rank;
  const int64_t* dims;
} kiln_binding_info_t;

/// One step of a program, for `kiln inspect` and tools. Every pointer lives
/// as long as the artifact.
typedef struct kiln_step_info_t {
  /// sizeof(kiln_step_info_t), set by the caller before the query.
  size_t struct_size;
  kiln_step_kind_t kind;
  /// The kernel's symbol (dispatch), the library call's name ("onednn.matmul")
  /// or "copy".
  const char* name;
  /// What the step computes, as the compiler described it; "" when it did not.
  const char* description;
  /// For a dispatch: its code object and kernel index; 0 otherwise.
  uint32_t code_object;
  uint32_t kernel;
  /// For a dispatch: the workgroup grid (`workgroup_rank` counts) and the
  /// number of workgroups, their product. A rank of 0 and a total of 1 for
  /// other steps.
  size_t workgroup_rank;
  const uint32_t* workgroup_count;
  uint64_t workgroup_total;
  /// The step's bindings: a dispatch's or library call's in their parameter
  /// order (inputs first, then outputs); a copy's source, then destination.
  size_t binding_count;
  const kiln_binding_info_t* bindings;
  /// For a CUDA dispatch: the threads of a block and the work items its
  /// threads stride over (the runtime sizes the grid for the device); 0 for
  /// other steps, and for a launch whose work items each run's sizes give (a
  /// program for a range of shapes).
  uint32_t cuda_block_size;
  uint64_t cuda_work_items;
  /// For a library call: its parameters as text, `key=v1,v2` separated by
  /// spaces (e.g. "post_ops=add,relu strides=1,1"); "" for other steps.
  const char* parameters;
} kiln_step_info_t;

/// Writes the description of step `index` into `*out_info` (errors as for
/// `kiln_artifact_input_signature`).
KILN_API kiln_status_t* kiln_artifact_step_info(const kiln_artifact_t* artifact, size_t index,
                                                kiln_step_info_t* out_info);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_RUNTIME_INCLUDE_KILN_INSPECT_H_
