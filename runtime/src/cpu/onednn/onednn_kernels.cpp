//===- onednn_kernels.cpp - oneDNN library calls of the CPU device ----------===//

#include "runtime/src/cpu/onednn/onednn_kernels.h"

#include <string>

#include "runtime/src/cpu/onednn/onednn_call.h"

namespace kiln::runtime::cpu {

Status createOneDnnKernel(const kiln::artifact::LibraryCall& call, const uint8_t* constants,
                          std::unique_ptr<LibraryCallKernel>* out) {
  onednn::CallView view;
  Status status = onednn::CallView::create(call, {KILN_ELEMENT_TYPE_F32},
                                           "oneDNN calls take f32 tensors only", &view);
  if (!status.ok()) return status;
  if (view.name() == "onednn.convolution") return createOneDnnConvolution(view, constants, out);
  if (view.name() == "onednn.matmul") return createOneDnnMatmul(view, constants, out);
  return Status(
      KILN_STATUS_UNIMPLEMENTED,
      view.label() + " is not a oneDNN call; expected onednn.convolution or " + "onednn.matmul");
}

}  // namespace kiln::runtime::cpu
