//===- library_call.h - Library calls of the CPU device ---------*- C++ -*-===//
//
// A LibraryCall step of a .kiln program names a vendor-library operation ("onednn.convolution",
// "onednn.matmul") with its bindings (operands first, then results) and parameters. The CPU device
// turns each such step into a LibraryCallKernel (kernel/library_call_kernel.h) when the artifact
// loads, so that every check and every primitive creation happens once, and runs it on each run;
// createLibraryCallKernel routes a call to the library that implements it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_LIBRARY_CALL_H_
#define KILN_RUNTIME_SRC_CPU_LIBRARY_CALL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"
#include "runtime/src/cpu/kernel/library_call_kernel.h"

namespace kiln::runtime::cpu {

/// Prepares `call`, or returns INVALID_ARGUMENT / UNIMPLEMENTED naming the call and what is wrong
/// with its bindings or parameters (the artifact is then refused). `constants` is the base of
/// Artifact.constants (null when the artifact has none); the loader has checked that every
/// Constant binding lies inside it. A kernel may read its Constant bindings here to prepare them
/// once (e.g. reorder weights into the layout the library prefers); it keeps no pointer to them.
/// `collectives` joins the devices of a partitioned program ("gloo.all_reduce"); null for a
/// single device.
/// `run_dims` (oneDNN calls only) sets the call up for one shape of a program compiled for a
/// range of shapes: each binding's dimensions for the run (LibraryCallView::create).
Status createLibraryCallKernel(const kiln::artifact::LibraryCall& call, const uint8_t* constants,
                               const std::shared_ptr<class Collectives>& collectives,
                               std::unique_ptr<LibraryCallKernel>* out,
                               const std::vector<std::vector<int64_t>>* run_dims = nullptr);

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_LIBRARY_CALL_H_
