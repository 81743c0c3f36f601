//===- library_call.h - Library calls of the CPU device ---------*- C++ -*-===//
//
// A LibraryCall step of a .kiln program names a vendor-library operation ("onednn.convolution",
// "onednn.matmul") with its bindings (operands first, then results) and parameters. The CPU device
// turns each such step into a LibraryCallKernel when the artifact loads, so that every check and
// every primitive creation happens once, and runs it on each run.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_LIBRARY_CALL_H_
#define KILN_RUNTIME_SRC_CPU_LIBRARY_CALL_H_

#include <cstdint>
#include <memory>

#include "kiln/runtime.hpp"
#include "runtime/schema/artifact_generated.h"

namespace kiln::runtime::cpu {

/// A prepared library call. `run` may be called concurrently from several runs of one session,
/// each with its own buffers.
class LibraryCallKernel {
 public:
  virtual ~LibraryCallKernel() = default;

  /// Runs the call; `buffers[i]` is the address of binding i of the step.
  virtual Status run(void* const* buffers) const = 0;
};

/// Prepares `call`, or returns INVALID_ARGUMENT / UNIMPLEMENTED naming the call and what is wrong
/// with its bindings or parameters (the artifact is then refused). `constants` is the base of
/// Artifact.constants (null when the artifact has none); the loader has checked that every
/// Constant binding lies inside it. A kernel may read its Constant bindings here to prepare them
/// once (e.g. reorder weights into the layout the library prefers); it keeps no pointer to them.
Status createLibraryCallKernel(const kiln::artifact::LibraryCall& call, const uint8_t* constants,
                               std::unique_ptr<LibraryCallKernel>* out);

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_LIBRARY_CALL_H_
