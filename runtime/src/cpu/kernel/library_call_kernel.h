//===- library_call_kernel.h - A prepared library call of the CPU -*- C++ -*-===//
//
// The interface every library call of the CPU device implements (the oneDNN calls in onednn/,
// attention, the collectives): prepared once when a program is set up, run on each run, and
// negotiating the layout of the activations it passes to the next call.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_KERNEL_LIBRARY_CALL_KERNEL_H_
#define KILN_RUNTIME_SRC_CPU_KERNEL_LIBRARY_CALL_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kiln/runtime.hpp"

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

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_KERNEL_LIBRARY_CALL_KERNEL_H_
