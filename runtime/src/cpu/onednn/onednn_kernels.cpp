//===- onednn_kernels.cpp - oneDNN library calls of the CPU device ----------===//

#include "runtime/src/cpu/onednn/onednn_kernels.h"

#include <string>

#include "runtime/src/cpu/onednn/onednn_call.h"

namespace kiln::runtime::cpu {

Status createOneDnnKernel(const kiln::artifact::LibraryCall& call, const uint8_t* constants,
                          std::unique_ptr<LibraryCallKernel>* out,
                          const std::vector<std::vector<int64_t>>* run_dims) {
  onednn::CallView view;
  // bf16 where the compiler found the CPU computes it (kiln-select-cpu-library-calls'
  // native-bf16); f16 is widened to f32 around the call.
  Status status =
      onednn::CallView::create(call, {KILN_ELEMENT_TYPE_F32, KILN_ELEMENT_TYPE_BF16},
                               "oneDNN calls take f32 and bf16 tensors", &view, run_dims);
  if (!status.ok()) return status;
  namespace callee = contract::callee;
  if (view.name() == callee::kOneDnnConvolution)
    return createOneDnnConvolution(view, constants, out);
  if (view.name() == callee::kOneDnnMatmul) return createOneDnnMatmul(view, constants, out);
  if (view.name() == callee::kOneDnnPooling) return createOneDnnPooling(view, out);
  return Status(KILN_STATUS_UNIMPLEMENTED,
                view.label() +
                    " is not a oneDNN call; expected onednn.convolution, onednn.matmul or "
                    "onednn.pooling");
}

}  // namespace kiln::runtime::cpu
