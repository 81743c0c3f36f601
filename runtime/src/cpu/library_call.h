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
#include <vector>

#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"

namespace kiln::runtime::cpu {

/// A library's own memory layout of an activation (e.g. oneDNN's channel-blocked nChw16c), which
/// two calls of that library can pass between them instead of the plain row-major layout of the
/// artifact.
class ActivationLayout {
 public:
  virtual ~ActivationLayout() = default;
  /// The library the layout belongs to; layouts of different libraries never match.
  virtual const char* library() const = 0;
  /// The bytes a tensor takes in this layout (at least its plain size).
  virtual uint64_t byteSize() const = 0;
};

/// A prepared library call. `run` may be called concurrently from several runs of one session,
/// each with its own buffers.
///
/// Layout negotiation happens once, when the program is prepared, before any run: when every
/// reader of a value one call writes is a call that can read it in the writer's own layout, the
/// value stays in that layout (CpuProgram::negotiateLayouts) and no call converts it.
class LibraryCallKernel {
 public:
  virtual ~LibraryCallKernel() = default;

  /// Runs the call; `buffers[i]` is the address of binding i of the step.
  virtual Status run(void* const* buffers) const = 0;

  /// Whether the call writes binding `binding` (the others it only reads).
  virtual bool writes(size_t binding) const = 0;
  /// The layout the call computes written binding `binding` in before converting it to the plain
  /// layout, or null when it writes it plainly.
  virtual std::shared_ptr<const ActivationLayout> nativeLayout(size_t binding) const {
    (void)binding;
    return nullptr;
  }
  /// Whether the call can take binding `binding` in `layout` instead of the plain layout.
  virtual bool accepts(size_t binding, const ActivationLayout& layout) const {
    (void)binding;
    (void)layout;
    return false;
  }
  /// Makes the call read or write binding `binding` in `layout` (one it accepts or computes
  /// natively) from now on.
  virtual void useLayout(size_t binding, const ActivationLayout& layout) {
    (void)binding;
    (void)layout;
  }
};

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
