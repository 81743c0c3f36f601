//===- library_reference.h - CPU references of the CUDA library calls -*- C++ -*-===//
//
// What the simulated CUDA device runs for a library call: cublaslt.matmul, cudnn.convolution and
// cudnn.attention
// computed on the CPU from the very problem structs the CUDA device builds for cuBLASLt and cuDNN
// (cuda_library_problem.h), implementing the libraries' documented semantics: row-major
// operands with optional transposes, batches with strides (0 broadcasts one matrix), alpha, the
// bias along the last axis (matmul) or the channel axis (convolution), the residual addend, and
// the ReLU or GELU (tanh form, cuBLASLt's) activation; convolutions with strides, dilations,
// asymmetric pads and groups. f32 accumulates in f32 (tf32 rounding of the operands when
// allowed); f16 and bf16 accumulate in f32 and round once at the end.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_SIM_LIBRARY_REFERENCE_H_
#define KILN_RUNTIME_SRC_CUDA_SIM_LIBRARY_REFERENCE_H_

#include "kiln/runtime.hpp"
#include "runtime/src/cuda/cuda_library_problem.h"

namespace kiln::runtime::cuda::sim {

/// Computes `problem` over `buffers` (the address of each binding, as CudaLibraryCall::enqueue
/// gets them), on up to std::thread::hardware_concurrency() threads when the work is large.
/// INVALID_ARGUMENT naming the call for what the problem cannot describe, an element type other
/// than f32, f16 or bf16, or an address less aligned than `problem.common.alignments` says.
/// Thread-safe: no state outlives a call. ReLU keeps NaN (a result computed from poisoned memory
/// stays NaN); a convolution reads its addend only when it has one (see the .cpp about cuDNN's z).
Status runMatmulReference(const MatmulProblem& problem, void* const* buffers);
Status runConvolutionReference(const ConvolutionProblem& problem, void* const* buffers);
/// cudnn.attention: scores, softmax and the weighted values in f32 per (batch, head) and row,
/// each result element rounded once; a row whose scores are all -inf gives NaN, as the softmax
/// of such a row does.
Status runAttentionReference(const AttentionProblem& problem, void* const* buffers);

}  // namespace kiln::runtime::cuda::sim

#endif  // KILN_RUNTIME_SRC_CUDA_SIM_LIBRARY_REFERENCE_H_
