//===- cuda_library_problem.h - The problems the CUDA library calls solve -*- C++ -*-===//
//
// Between cuda_library_call.cpp, which reads a LibraryCall (bindings, parameters, the post-op
// epilogue; cuda_library_call.h documents the encoding), and the two files that hand the result
// to a library: cublaslt_matmul.cpp and cudnn_convolution.cpp. A problem is everything a library
// needs to know about a call, checked, with no GPU involved; preparing it is the libraries' part.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_CUDA_LIBRARY_PROBLEM_H_
#define KILN_RUNTIME_SRC_CUDA_CUDA_LIBRARY_PROBLEM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/src/cuda/cuda_library_call.h"
#include "runtime/src/library_call_view.h"

namespace kiln::runtime::cuda {

/// The activation that ends an epilogue.
enum class Activation { kNone, kRelu, kGelu };

/// The fused epilogue of a call: result = activation(alpha * product + bias + addend).
struct CudaEpilogue {
  /// From a leading "linear" post-op (matmul only; never with a bias).
  float alpha = 1.0f;
  /// The binding index of the bias and of the "add" operand, or -1 when absent.
  int bias_binding = -1;
  int addend_binding = -1;
  Activation activation = Activation::kNone;
};

/// What both calls read the same way.
struct CudaCallCommon {
  /// "library call 'cublaslt.matmul' (description)", for messages.
  std::string label;
  /// The element type of every binding: f32, f16 or bf16.
  kiln_element_type_t element_type = KILN_ELEMENT_TYPE_F32;
  /// f32 only: whether tensor cores may round the operands to tf32.
  bool allow_tf32 = false;
  CudaEpilogue epilogue;
  /// The last binding.
  int result_binding = 0;
  /// The byte alignment each binding's address is assumed to have (see assumedAlignment); the
  /// libraries choose kernels for it and enqueue checks it.
  std::vector<uint32_t> alignments;
};

/// How a call names its operands and which post-ops its library fuses.
struct CudaCallShape {
  /// "a, b" or "x, w", for the binding-count message.
  const char* operands;
  /// Whether "linear" and "gelu" are taken (cuBLASLt's alpha and GELU epilogue).
  bool matmul;
};

/// Reads what every CUDA call has: its label, one element type for every binding, the result
/// binding (the last) and the alignments.
Status readCudaCallBindings(const LibraryCallView& view, CudaCallCommon* out);

/// Reads what the matmul and the convolution share: readCudaCallBindings, allow_tf32, the
/// binding count and the post-op epilogue. The call's own keys are checked by the caller.
Status readCudaCallCommon(const LibraryCallView& view, const CudaCallShape& shape,
                          CudaCallCommon* out);

/// The byte alignment the address of `binding` is assumed to have: arena and constant buffers are
/// cudaMalloc allocations (256-byte aligned) plus the binding's offset; inputs and outputs are
/// the caller's, assumed 16-byte aligned (what vectorized loads and TMA need).
uint32_t assumedAlignment(const LibraryCallBinding& binding);

/// Fails naming the call and the binding when an address of `buffers` is less aligned than
/// `common.alignments` assumed (the chosen kernels would fault or compute garbage).
Status checkAlignments(const CudaCallCommon& common, void* const* buffers);

/// A cublaslt.matmul: D = epilogue(op(A) op(B)), row-major matrices with leading dimensions,
/// batched over `batch`.
struct MatmulProblem {
  CudaCallCommon common;
  /// Whether a (M x K) is stored as its transpose (K x M), and b (K x N) as N x K.
  bool trans_a = false, trans_b = false;
  /// The product's sizes; with a batched `a` against an unbatched `b`, the batch is folded into
  /// m (row-major [batch.., m, k] is [batch * m, k]) and batch is 1.
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  /// Elements between consecutive rows of each stored matrix (its row-major leading dimension);
  /// 0 for a dense one (the stored row's length).
  int64_t lda = 0, ldb = 0, ldd = 0;
  /// Elements between consecutive batch entries of a and b; 0 broadcasts one matrix to all.
  int64_t a_batch_stride = 0, b_batch_stride = 0;
  /// Elements between consecutive batch entries of d; 0 for dense ones (m * n).
  int64_t d_batch_stride = 0;
  /// Where the views (a_view, b_view, dst_view) start in their bindings, in elements.
  int64_t a_offset = 0, b_offset = 0, d_offset = 0;

  /// The leading dimensions and d's batch stride in effect.
  int64_t leadingA() const { return lda != 0 ? lda : (trans_a ? m : k); }
  int64_t leadingB() const { return ldb != 0 ? ldb : (trans_b ? k : n); }
  int64_t leadingD() const { return ldd != 0 ? ldd : n; }
  int64_t batchStrideD() const { return d_batch_stride != 0 ? d_batch_stride : m * n; }
};

/// A cudnn.convolution over NCHW (NCDHW) row-major buffers, or, with `channels_last`, NHWC
/// (NDHWC) ones: x, the addend and y stored as N spatial... C, w as K spatial... C/groups. The
/// dims are the logical (N, C, spatial...) ones either way; tensorStrides gives each buffer's.
/// A 1-D convolution is described to cuDNN as 2-D with a unit height, so the dims here have rank
/// 4 or 5.
struct ConvolutionProblem {
  CudaCallCommon common;
  std::vector<int64_t> x_dims, w_dims, y_dims;
  bool channels_last = false;
  /// One entry per spatial dimension (2 or 3); dilations count from 1.
  std::vector<int64_t> strides, dilations, pads_begin, pads_end;
  int64_t groups = 1;
};

/// The strides of a convolution tensor of logical `dims` (N, C, spatial...): row-major, or with
/// `channels_last` row-major over (N, spatial..., C).
std::vector<int64_t> tensorStrides(const std::vector<int64_t>& dims, bool channels_last);

/// One algorithm that the legacy cuDNN API's heuristics (cudnnGetConvolutionForwardAlgorithm_v7)
/// propose for a convolution, in their order.
struct LegacyAlgorithmCandidate {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  size_t workspace = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

/// How the legacy path (cudnn_convolution.cpp) computes the epilogue.
enum class LegacyEpilogue {
  /// cudnnConvolutionBiasActivationForward: conv, bias, addend and ReLU in one call. Without ReLU
  /// its identity activation runs with IMPLICIT_PRECOMP_GEMM only.
  kBiasActivation,
  /// cudnnConvolutionForward, then one cudnnAddTensor each for the bias and the addend; never
  /// with ReLU.
  kSeparate,
};

/// An algorithm of the legacy API with the math type to set and the way to run the epilogue.
struct LegacyConvolutionChoice {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  LegacyEpilogue epilogue = LegacyEpilogue::kBiasActivation;
};

/// UNIMPLEMENTED naming the call and the reason when the legacy cuDNN API cannot express
/// `problem`: asymmetric pads (it pads both ends alike), or sizes beyond its int dims and strides.
Status checkLegacyConvolution(const ConvolutionProblem& problem);

/// The math type the legacy convolution descriptor is given for `problem`: FMA for f32 without
/// allow_tf32 (cuDNN's default math may use tf32 tensor cores), tensor ops otherwise.
cudnnMathType_t legacyMathType(const ConvolutionProblem& problem);

/// The legacy choices for `problem`, best first, from the heuristics' `candidates`: those that
/// succeeded, fit `max_workspace` bytes and compute in the numerics the call allows. With ReLU,
/// each runs as kBiasActivation; without, IMPLICIT_PRECOMP_GEMM as kBiasActivation (one pass
/// over y) comes first when there is a bias or addend, then every candidate as kSeparate.
std::vector<LegacyConvolutionChoice> rankLegacyChoices(
    const ConvolutionProblem& problem, const std::vector<LegacyAlgorithmCandidate>& candidates,
    size_t max_workspace);

/// A cudnn.attention: scaled dot-product attention over f16 or bf16 tensors (every binding of
/// one type), the encoding of the CPU's kiln.attention (AttentionCall, runtime/src/cpu/
/// attention.h), run by cuDNN's fused flash-attention engines through the cuDNN frontend's SDPA
/// graph. cuDNN takes 4-D tensors [B, H, rows, cols] with unit stride along the last dim, so the
/// call's batch dims become (B, H) (none: (1, 1); one: (1, B1); two: (B1, B2)), K is read as
/// [B, H, Skv, D] (Kᵀ's view with its last two dims swapped) and the mask as [B|1, H|1, Sq|1, Skv]
/// (a dim of 1 where its view broadcasts).
struct AttentionProblem {
  CudaCallCommon common;
  AttentionCall call;
  /// The 4-D views cuDNN is given (offsets in elements from each binding's start).
  StridedView q, k, v, mask, o;
};

/// A collective between the GPUs of a split model: "nccl.all_reduce" (the sum over every device
/// of an f32, f16 or bf16 tensor, written to a result of the same type) or "nccl.all_gather"
/// (every device's operand, device after device, in a result `devices` times its size, of any
/// element type).
struct CollectiveProblem {
  CudaCallCommon common;
  bool gather = false;
  /// The devices of the split model (the call's `devices`).
  int64_t devices = 0;
  /// Elements and bytes of the operand.
  uint64_t count = 0;
  uint64_t bytes = 0;
};

/// Read and check each call (cublaslt_matmul.cpp, cudnn_convolution.cpp, cudnn_attention.cpp,
/// nccl_collective.cpp).
Status readCollectiveProblem(const LibraryCallView& view, CollectiveProblem* out);
Status readMatmulProblem(const LibraryCallView& view, MatmulProblem* out);
Status readConvolutionProblem(const LibraryCallView& view, ConvolutionProblem* out);
Status readAttentionProblem(const LibraryCallView& view, AttentionProblem* out);

/// How a device prepares the problems it is given: cuBLASLt and cuDNN on a GPU, the CPU
/// references on the simulated device. `view` is the call the problem was read from.
struct CudaLibraryFactory {
  std::function<Status(const LibraryCallView& view, const MatmulProblem& problem,
                       std::unique_ptr<CudaLibraryCall>* out)>
      matmul;
  std::function<Status(const LibraryCallView& view, const ConvolutionProblem& problem,
                       std::unique_ptr<CudaLibraryCall>* out)>
      convolution;
  std::function<Status(const LibraryCallView& view, const AttentionProblem& problem,
                       std::unique_ptr<CudaLibraryCall>* out)>
      attention;
  std::function<Status(const LibraryCallView& view, const CollectiveProblem& problem,
                       std::unique_ptr<CudaLibraryCall>* out)>
      collective;
};

/// Reads and checks `call` (as checkCudaLibraryCall) and prepares it with `factory`, for
/// `run_dims` where given (createCudaLibraryCall).
Status createCudaLibraryCall(const kiln::artifact::LibraryCall& call,
                             const CudaLibraryFactory& factory,
                             std::unique_ptr<CudaLibraryCall>* out,
                             const std::vector<std::vector<int64_t>>* run_dims = nullptr);

/// Build and finalize each call's descriptors without a handle or a GPU: cuBLASLt's matmul
/// descriptor and matrix layouts (checked against its column-major rule), cuDNN's backend tensor,
/// convolution and operation descriptors of the fused graph (cuDNN validates them when they are
/// finalized). The status of the call the library refuses.
Status checkCublasLtDescriptors(const MatmulProblem& problem);
Status checkCudnnConvolutionDescriptors(const ConvolutionProblem& problem);
/// The cuDNN frontend's SDPA graph of `problem` validated for a GPU of `sm_version` (80, 90, ...)
/// without one: the frontend's support checks for the installed cuDNN (head dims, strides and
/// their alignment, the bias's shape). Engines are found only on a GPU.
Status checkCudnnAttentionGraph(const AttentionProblem& problem, int sm_version);

/// Prepare each call on `context`'s device.
Status createCublasLtMatmul(const MatmulProblem& problem, const CudaLibraryContext& context,
                            std::unique_ptr<CudaLibraryCall>* out);
Status createCudnnConvolution(const ConvolutionProblem& problem, const CudaLibraryContext& context,
                              std::unique_ptr<CudaLibraryCall>* out);
Status createCudnnAttention(const AttentionProblem& problem, const CudaLibraryContext& context,
                            std::unique_ptr<CudaLibraryCall>* out);
/// NCCL on context.nccl (FAILED_PRECONDITION when the session has no communicator: a single
/// device's).
Status createNcclCollective(const CollectiveProblem& problem, const CudaLibraryContext& context,
                            std::unique_ptr<CudaLibraryCall>* out);

/// A process-wide cache of what a library chose for each problem, keyed by a text that names
/// the problem (shapes, types, epilogue, architecture): cuBLASLt's heuristic result, cuDNN's
/// engine or legacy algorithm. One instance per Choice type; thread-safe.
template <typename Choice>
class ChoiceCache {
 public:
  static ChoiceCache& instance() {
    static ChoiceCache cache;
    return cache;
  }
  bool find(const std::string& key, Choice* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    *out = it->second;
    return true;
  }
  void insert(const std::string& key, const Choice& choice) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.emplace(key, choice);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Choice> entries_;
};

}  // namespace kiln::runtime::cuda

#endif  // KILN_RUNTIME_SRC_CUDA_CUDA_LIBRARY_PROBLEM_H_
