//===- artifact_verifier.h - Verifying .kiln artifacts ----------*- C++ -*-===//
//
// The checks a .kiln file passes before the runtime reads any of it: the FlatBuffers structure
// (identifier "KILN", every offset and vector in bounds), then Kiln's semantic rules, so that a
// session can trust every index and byte range without checking it again on each run.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_ARTIFACT_ARTIFACT_VERIFIER_H_
#define KILN_RUNTIME_SRC_ARTIFACT_ARTIFACT_VERIFIER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"

namespace kiln::runtime {

/// A device's own rules for the library calls of an artifact compiled for it, checked when the
/// artifact loads and without the device (the CUDA device's are cuda::checkCudaLibraryCall):
/// OK, or INVALID_ARGUMENT / UNIMPLEMENTED saying what is wrong with `call`. The runtime's
/// C API passes the check of every device it was built with; the reader itself knows none.
using LibraryCallCheck = Status (*)(std::string_view device,
                                    const kiln::artifact::LibraryCall& call);

/// Verifies the `size` bytes at `data`, which must be 64-byte aligned, as a .kiln artifact.
/// Every message starts with `name` (the file's path or the caller's name for it):
///   - DATA_LOSS "NAME: not a valid .kiln artifact (...)" for a truncated or corrupt buffer or
///     a wrong file identifier;
///   - FAILED_PRECONDITION naming both versions for a format version other than
///     KILN_ARTIFACT_FORMAT_VERSION;
///   - UNIMPLEMENTED for a device other than "cpu" and "cuda";
///   - INVALID_ARGUMENT naming the signature entry, code object, step and binding that breaks a
///     rule: element types, dims, buffer ranges and alignment, kernel indices, workgroup counts,
///     copies, that every output is written by some step, and the device's rules: a cpu
///     artifact holds ELF code and no CUDA launch parameters; in a cuda artifact every code
///     object is a cubin or PTX with the same kernel list, every dispatch names code object 0
///     and has launch parameters (block size 1..1024, work items > 0), and every library call
///     passes `check_library_call` where one is given (which may also answer UNIMPLEMENTED),
///     its message prefixed with NAME and the step.
Status verifyArtifact(const uint8_t* data, size_t size, const std::string& name,
                      LibraryCallCheck check_library_call = nullptr);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_ARTIFACT_ARTIFACT_VERIFIER_H_
