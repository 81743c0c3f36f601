//===- attention.h - Kiln's fused attention on the CPU -----------*- C++ -*-===//
//
// The "kiln.attention" library call: scaled dot-product attention as one step that never stores
// the score matrix. The compiler pass kiln-select-cpu-library-calls (compiler/librarycalls) emits
// it for `softmax(scale * Q Kᵀ [+ mask]) V` as exporters write it; this header is the contract.
// Every tensor is f32.
//
// kiln.attention
//   bindings   q       the buffer Q is read from
//              k       the buffer Kᵀ is read from
//              v       the buffer V is read from
//              [mask]  the buffer the additive mask is read from (present with 5 bindings)
//              dst     the buffer the result is written to
//   int        q_view     [offset, B1..Bn, Sq, D, strides...]    Q, per batch index
//              k_view     [offset, B1..Bn, D, Skv, strides...]   Kᵀ
//              v_view     [offset, B1..Bn, Skv, Dv, strides...]  V
//              mask_view  [offset, B1..Bn, Sq, Skv, strides...]  with a mask
//              dst_view   [offset, B1..Bn, Sq, Dv, strides...]
//              (library_call_view.h). Every view has the batch dims B1..Bn of dst (n >= 0;
//              Kᵀ and V with Bn / kv_group); a stride of 0 broadcasts. Q, Kᵀ and V have unit
//              stride along one of their last two dims (each is a matrix a GEMM reads as it
//              lies, or transposed). Either every view is given or none: without views (a
//              call over dynamic shapes, set up per shape) each binding is read as it lies,
//              its leading dims aligned with dst's and its dims of 1 broadcast.
//   float      scale      one value
//   int        zero_masked_rows  [0 or 1], optional: 1 makes a row whose scores are all -inf
//              zero (the ONNX Attention operator's rule) rather than NaN
//   int        kv_group   [g], optional (1): grouped-query attention. Kᵀ's and V's views have
//              the batch dims of dst with the last (the heads) divided by g; query head h reads
//              key and value head h / g (Llama's repeated K and V, read where they lie)
//
//   dst[b] = softmax(scale * Q[b] Kᵀ[kv(b)] + mask[b], along Skv) V[kv(b)],
//   kv(b) = b with its last index h as h / g
//
// The keys are taken in blocks (online softmax): each block's scores are computed by oneDNN's
// GEMM, the running row maximum and sum are updated, and the block's weighted values are
// accumulated; only a block of scores exists at a time, per thread. A row whose scores are all
// -inf gives NaN, as the softmax of such a row does, or zero with zero_masked_rows.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_ATTENTION_H_
#define KILN_RUNTIME_SRC_CPU_ATTENTION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "contract/artifact_generated.h"
#include "runtime/src/cpu/kernel/library_call_kernel.h"

namespace kiln::runtime::cpu {

/// Prepares a "kiln.attention" call: checks its bindings, views and scale. Returns
/// INVALID_ARGUMENT naming the call for a malformed one, UNIMPLEMENTED for views the GEMM cannot
/// read (no unit stride in the last two dims).
/// `run_dims`, when given, are the bindings' dims for one shape of a program compiled for a
/// range of shapes (the call then has no views: each binding is read as it lies).
Status createAttentionKernel(const kiln::artifact::LibraryCall& call,
                             std::unique_ptr<LibraryCallKernel>* out,
                             const std::vector<std::vector<int64_t>>* run_dims = nullptr);

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_ATTENTION_H_
