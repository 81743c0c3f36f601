//===- onednn_kernels.h - oneDNN library calls of the CPU device -*- C++ -*-===//
//
// The "onednn.*" library calls: convolution and matmul with post-op epilogues.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_KERNELS_H_
#define KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_KERNELS_H_

#include "runtime/src/cpu/library_call.h"

namespace kiln::runtime::cpu {

/// Prepares a library call whose name starts with "onednn.".
Status createOneDnnKernel(const kiln::artifact::LibraryCall& call,
                          std::unique_ptr<LibraryCallKernel>* out);

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_KERNELS_H_
