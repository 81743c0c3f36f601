//===- cuda_library_call.h - Library calls of the CUDA device ---*- C++ -*-===//
//
// A LibraryCall step of a CUDA .kiln program names a vendor-library operation,
// "cublaslt.matmul", "cudnn.convolution" or "cudnn.attention" (the CPU's
// kiln.attention encoding, runtime/src/cpu/attention.h; cuda_library_problem.h
// says what cuDNN takes of it), with its bindings (operands first,
// then the result) and parameters. The parameters are those of the CPU's
// oneDNN calls (compiler/librarycalls, kiln-select-library-calls):
//
//   cublaslt.matmul    operands a, b, [bias], [addend]; result d
//                      int trans_a, trans_b (0 or 1); int a_view, b_view,
//                      dst_view (strided views, as oneDNN's, where cuBLASLt's
//                      layouts express them: unit stride along one of the last
//                      two dims, batch dims nesting as one stride);
//                      string post_ops, float post_op_args (see below)
//   cudnn.convolution  operands x (N C spatial...), w (K C/groups spatial...),
//                      [bias (K)], [addend (the result's shape)]; result y
//                      int strides, dilations, pads_begin, pads_end, groups;
//                      int channels_last (0 or 1): x, the addend and y
//                      stored N spatial... C, w as K spatial... C/groups
//
// post_ops is the epilogue in order; each of "linear" takes two post_op_args
// (alpha, beta: x -> alpha * x + beta), the others none:
//   "linear"  only first, with beta 0: scales the product (cuBLASLt's alpha),
//             not the bias, which is added after it
//   "add"     at most one: a tensor of the result's shape (cuBLASLt's C with
//             beta 1; cuDNN's pointwise add)
//   "relu"    last
//   "gelu"    last (cublaslt.matmul only; cuBLASLt's tanh approximation, which the
//             compiler does not select for the erf form ONNX models use)
// The bias broadcasts along the last axis (matmul) or the channel axis
// (convolution) and is added before "add". Element types: every binding f32
// (fp32 math; tf32 tensor cores when the int param "allow_tf32" is 1), f16 or
// bf16 (fp32 accumulation).
//
// The CUDA device turns each step into a CudaLibraryCall when the session is
// created, so that parameter checks, descriptor creation and algorithm choice
// (cuBLASLt's heuristic, cuDNN's execution plan, each cached per problem) happen
// once; runs only enqueue work.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_CUDA_LIBRARY_CALL_H_
#define KILN_RUNTIME_SRC_CUDA_CUDA_LIBRARY_CALL_H_

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include <cstddef>
#include <memory>

#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"

namespace kiln::runtime::cuda {

/// The per-device library handles a session's calls share. The session owns
/// them and outlives its calls.
struct CudaLibraryContext {
  int device = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  cublasLtHandle_t cublaslt = nullptr;
  cudnnHandle_t cudnn = nullptr;
  /// The communicator of a split model's GPUs (created with the first collective), or null.
  ncclComm_t nccl = nullptr;
};

/// A prepared library call.
class CudaLibraryCall {
 public:
  virtual ~CudaLibraryCall() = default;

  /// The bytes of device workspace `enqueue` needs; the session allocates the
  /// largest once.
  virtual size_t workspaceSize() const = 0;

  /// Enqueues the call on `stream`. `buffers[i]` is the device address of
  /// binding i. Allocates nothing and never synchronizes, so it may be
  /// captured into a CUDA graph. Every failing library call becomes a status
  /// naming it (KILN_CUDA_RETURN_IF_ERROR).
  virtual Status enqueue(cudaStream_t stream, void* const* buffers, void* workspace) const = 0;
};

/// Checks `call`'s name, bindings and parameters without touching a GPU:
/// INVALID_ARGUMENT or UNIMPLEMENTED naming the call and what is wrong, OK
/// when createCudaLibraryCall would accept it. A cudnn.attention is also
/// validated by the cuDNN frontend for sm_80 and sm_90.
Status checkCudaLibraryCall(const kiln::artifact::LibraryCall& call);

/// Prepares `call` on `context`'s device (descriptors, algorithm choice); for one shape of a
/// program compiled for a range of shapes where `run_dims` (each binding's dimensions) is given.
Status createCudaLibraryCall(const kiln::artifact::LibraryCall& call,
                             const CudaLibraryContext& context,
                             std::unique_ptr<CudaLibraryCall>* out,
                             const std::vector<std::vector<int64_t>>* run_dims = nullptr);

}  // namespace kiln::runtime::cuda

#endif  // KILN_RUNTIME_SRC_CUDA_CUDA_LIBRARY_CALL_H_
