//===- onednn_kernels.h - oneDNN library calls of the CPU device -*- C++ -*-===//
//
// The "onednn.*" library calls: convolution and matmul with post-op epilogues, and pooling. The
// compiler pass kiln-select-cpu-library-calls (compiler/librarycalls) emits them; this header is
// the contract. Every tensor is f32, row-major (plain NCHW for convolutions and pooling), with
// static dims.
//
// onednn.convolution
//   bindings   src      N x C x D1..Dn (n = 1, 2 or 3)
//              weights  M x C/groups x K1..Kn
//              [bias]   M                       (present when the binding count says so)
//              extra    one operand per "add" post-op, in order (see below)
//              dst      N x M x O1..On, Oi = (Di + pb + pe - dil * (Ki - 1) - 1) / stride + 1
//   int        strides, dilations, pads_begin, pads_end   n values each; dilations count from 1
//                                                       (ONNX convention: 1 means dense)
//              groups       one value >= 1 (C and M are multiples of it), default 1
//
// onednn.matmul
//   bindings   a        [batch..] x M x K, or K x M with trans_a
//              b        [batch..] x K x N, or N x K with trans_b
//              [bias]   N
//              extra    one operand per "add" post-op
//              dst      [batch..] x M x N, the batch dims NumPy-broadcast from a's and b's
//   int        trans_a, trans_b   0 or 1 (transposes the last two dims), default 0
//              a_view, b_view, dst_view   [offset, dims..., strides...] (library_call_view.h):
//                           the operand or result is that strided view of its binding (applied
//                           before trans_a / trans_b); the binding is then the buffer the data
//                           lives in (attention's fused projection, the merged heads). No "add"
//                           post-op with dst_view.
//
// onednn.pooling
//   bindings   src      N x C x D1..Dn (n = 1, 2 or 3)
//              dst      N x C x O1..On, Oi = (Di + pb + pe - dil * (Ki - 1) - 1) / stride + 1
//   string     kind     one of "max", "avg_include_pad" (the padding counts as zeros in each
//                       window's mean), "avg_exclude_pad" (each mean is over the input elements
//                       its window covers); the padding is never read, and a max ignores it
//   int        kernel   n values >= 1
//              strides, dilations, pads_begin, pads_end   n values each, default 1, 1, 0, 0;
//                       dilations count from 1 (ONNX convention). A ceil-mode pooling is
//                       expressed by a larger pads_end.
//
// Post-ops (convolution and matmul), applied in order to the accumulated result (after the bias):
//   string     post_ops       each one of
//                "relu"       max(x, 0)                               no arguments
//                "gelu_erf"   x * (1 + erf(x / sqrt 2)) / 2           no arguments
//                "gelu_tanh"  its tanh approximation                  no arguments
//                "swish"      x * sigmoid(x) (SiLU)                   no arguments
//                "clip"       min(max(x, low), high)                  arguments low, high
//                "linear"     scale * x + shift                       arguments scale, shift
//                "add"        x + operand, the operand is the next extra binding; its dims
//                             broadcast to dst's (right-aligned, missing or 1 dims stretch)
//   float      post_op_args   the arguments of every post-op, concatenated in order
//
// Binding counts: 3 + (number of "add" post-ops) without bias, one more with a bias. A Constant
// weights binding is reordered once, at load time, into the layout oneDNN prefers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_KERNELS_H_
#define KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_KERNELS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "contract/artifact_generated.h"
#include "runtime/src/cpu/kernel/library_call_kernel.h"

namespace kiln::runtime::cpu {

/// Prepares a library call whose name starts with "onednn.": checks its bindings and parameters,
/// creates the oneDNN primitive and, for constant weights, reorders them from `constants` (the
/// base of Artifact.constants, may be null when no binding is Constant). Returns INVALID_ARGUMENT
/// naming the call for bad bindings or parameters, UNIMPLEMENTED for an unknown name or a
/// combination oneDNN cannot run.
Status createOneDnnKernel(const kiln::artifact::LibraryCall& call, const uint8_t* constants,
                          std::unique_ptr<LibraryCallKernel>* out,
                          const std::vector<std::vector<int64_t>>* run_dims = nullptr);

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_KERNELS_H_
