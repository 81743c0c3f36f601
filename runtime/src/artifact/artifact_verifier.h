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

#include "kiln/runtime.hpp"

namespace kiln::runtime {

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
///     and has launch parameters (block size 1..1024, work items > 0), and in a runtime built
///     with CUDA every library call passes checkCudaLibraryCall (which may also answer
///     UNIMPLEMENTED).
Status verifyArtifact(const uint8_t* data, size_t size, const std::string& name);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_ARTIFACT_ARTIFACT_VERIFIER_H_
