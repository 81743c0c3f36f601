//===- onednn_kernels.cpp - oneDNN library calls of the CPU device ----------===//

#include "runtime/src/cpu/onednn/onednn_kernels.h"

#include <string>

namespace kiln::runtime::cpu {

Status createOneDnnKernel(const kiln::artifact::LibraryCall& call, const uint8_t* constants,
                          std::unique_ptr<LibraryCallKernel>* out) {
  (void)constants;
  (void)out;
  return Status(KILN_STATUS_UNIMPLEMENTED,
                "library call '" + call.name()->str() + "' is not available in this build");
}

}  // namespace kiln::runtime::cpu
