//===- cublaslt_matmul.cpp - The cublaslt.matmul library call --------------===//
//
// A cuBLASLt matmul over row-major buffers with its epilogue fused: alpha from a leading
// "linear", the "add" operand as C with beta 1, the bias and ReLU / GELU as cuBLASLt epilogues.
//
// Row-major without transposes: cuBLASLt is column-major, and a row-major R x C matrix is the
// column-major C x R matrix with the same bytes. So D = A B (row-major, M x N) is computed as
// D^T = B^T A^T in column-major: cuBLASLt's "A" is our b (N x K), its "B" our a (K x M), its D
// our d seen as N x M with leading dimension N. The bias runs along D's rows in cuBLASLt's view,
// which are our d's columns: the last axis, as the call's contract says.
//
// Batches: d's batch dims flatten into one strided batch. An operand carries all of d's batch
// dims or none of them (rank 2, or every batch dim 1); one without is broadcast with batch stride
// 0. A batched a against an unbatched b needs no batch at all: row-major [batch.., M, K] is
// [batch * M, K], so the batch folds into M (one larger GEMM, which also fills the GPU better).
//
// The algorithm comes from cublasLtMatmulAlgoGetHeuristic once per problem and architecture (a
// process-wide cache), with at most kMaxWorkspaceBytes of workspace. cuBLASLt's GELU epilogue is
// the tanh approximation of GELU; it differs from the erf form by at most about 5e-4 in absolute
// value, well under f16's resolution at the magnitudes where the two differ.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/cuda/cuda_status.h"
#include "runtime/src/element_type.h"

namespace kiln::runtime::cuda {
namespace {

/// The most workspace a matmul may ask for: what NVIDIA recommends for cuBLASLt's best Hopper
/// kernels (older architectures ask for less).
constexpr uint64_t kMaxWorkspaceBytes = uint64_t{32} << 20;

cudaDataType_t cudaDataTypeOf(kiln_element_type_t type) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F16:
      return CUDA_R_16F;
    case KILN_ELEMENT_TYPE_BF16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

cublasLtEpilogue_t epilogueOf(const CudaEpilogue& epilogue) {
  bool bias = epilogue.bias_binding >= 0;
  switch (epilogue.activation) {
    case Activation::kRelu:
      return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::kGelu:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case Activation::kNone:
      break;
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

/// Everything the heuristic's answer depends on, as a cache key.
std::string problemKey(const MatmulProblem& problem, const CudaLibraryContext& context) {
  const CudaCallCommon& common = problem.common;
  std::ostringstream key;
  key << "sm" << context.compute_capability_major << context.compute_capability_minor << ' '
      << describeElementType(common.element_type) << " tf32=" << common.allow_tf32
      << " t=" << problem.trans_a << problem.trans_b << " m=" << problem.m << " n=" << problem.n
      << " k=" << problem.k << " batch=" << problem.batch << " strides=" << problem.a_batch_stride
      << ',' << problem.b_batch_stride << " epilogue=" << epilogueOf(common.epilogue)
      << " c=" << (common.epilogue.addend_binding >= 0) << " align=";
  for (uint32_t alignment : common.alignments) key << alignment << ',';
  return key.str();
}

class CublasLtMatmul : public CudaLibraryCall {
 public:
  ~CublasLtMatmul() override {
    // Destruction cannot report failures; these only free host memory.
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (lt_a_) cublasLtMatrixLayoutDestroy(lt_a_);
    if (lt_b_) cublasLtMatrixLayoutDestroy(lt_b_);
    if (lt_d_) cublasLtMatrixLayoutDestroy(lt_d_);
  }

  Status prepare(const MatmulProblem& problem, const CudaLibraryContext& context);
  /// The descriptors of `problem` (matmul descriptor, layouts), without a handle or GPU; checks
  /// each layout against cuBLASLt's column-major rule (ld >= rows) and its batch.
  Status describe(const MatmulProblem& problem);

  size_t workspaceSize() const override { return algorithm_.workspaceSize; }

  Status enqueue(cudaStream_t stream, void* const* buffers, void* workspace) const override {
    Status status = checkAlignments(common_, buffers);
    if (!status.ok()) return status;
    const CudaEpilogue& epilogue = common_.epilogue;
    void* d = buffers[common_.result_binding];
    const void* c = epilogue.addend_binding >= 0 ? buffers[epilogue.addend_binding] : d;
    // The bias pointer lives in the shared descriptor: runs that enqueue concurrently take turns,
    // and it is set again only when a run's bias buffer moved (never for the arena's).
    std::lock_guard<std::mutex> lock(mutex_);
    if (epilogue.bias_binding >= 0 && buffers[epilogue.bias_binding] != bias_pointer_) {
      const void* bias = buffers[epilogue.bias_binding];
      KILN_CUDA_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
      bias_pointer_ = bias;
    }
    // Column-major D^T = B^T A^T: cuBLASLt's A is our b, its B our a (see the file comment).
    KILN_CUDA_RETURN_IF_ERROR(cublasLtMatmul(handle_, desc_, &alpha_, buffers[1], lt_a_, buffers[0],
                                             lt_b_, &beta_, c, lt_d_, d, lt_d_, &algorithm_.algo,
                                             workspace, algorithm_.workspaceSize, stream));
    return Status();
  }

 private:
  CudaCallCommon common_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  /// cuBLASLt's A (our b), B (our a), and C = D (our addend and d).
  cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, lt_d_ = nullptr;
  cublasLtMatmulHeuristicResult_t algorithm_{};
  float alpha_ = 1.0f, beta_ = 0.0f;
  mutable std::mutex mutex_;
  mutable const void* bias_pointer_ = nullptr;
};

/// A column-major rows x cols layout with leading dimension `ld`, batched as `batch` matrices
/// `stride` elements apart.
Status createLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                    int64_t stride, cublasLtMatrixLayout_t* out) {
  KILN_CUDA_RETURN_IF_ERROR(cublasLtMatrixLayoutCreate(out, type, static_cast<uint64_t>(rows),
                                                       static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    KILN_CUDA_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(
        *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    KILN_CUDA_RETURN_IF_ERROR(cublasLtMatrixLayoutSetAttribute(
        *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return Status();
}

Status CublasLtMatmul::describe(const MatmulProblem& problem) {
  common_ = problem.common;
  const CudaEpilogue& epilogue = common_.epilogue;
  alpha_ = epilogue.alpha;
  beta_ = epilogue.addend_binding >= 0 ? 1.0f : 0.0f;

  cudaDataType_t type = cudaDataTypeOf(common_.element_type);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (common_.element_type == KILN_ELEMENT_TYPE_F32 && common_.allow_tf32)
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  KILN_CUDA_RETURN_IF_ERROR(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
  // cuBLASLt's A is our b: transposed for the column-major view exactly when b is stored
  // transposed (row-major N x K is column-major K x N), and likewise its B and our a.
  cublasOperation_t op_a = problem.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_b = problem.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  KILN_CUDA_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)));
  KILN_CUDA_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)));
  cublasLtEpilogue_t kind = epilogueOf(epilogue);
  KILN_CUDA_RETURN_IF_ERROR(
      cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &kind, sizeof(kind)));
  if (epilogue.bias_binding >= 0) {
    // The heuristic reads the bias pointer only for its alignment: give it an address with the
    // alignment the real one will have (enqueue sets the real one).
    const void* aligned = reinterpret_cast<const void*>(
        static_cast<uintptr_t>(common_.alignments[epilogue.bias_binding]));
    KILN_CUDA_RETURN_IF_ERROR(cublasLtMatmulDescSetAttribute(
        desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &aligned, sizeof(aligned)));
  }

  int64_t m = problem.m, n = problem.n, k = problem.k, batch = problem.batch;
  // Our b stored row-major: K x N (column-major N x K, ld N), or N x K when transposed; our a
  // likewise M x K (column-major K x M, ld K), or K x M when transposed.
  Status status = problem.trans_b
                      ? createLayout(type, k, n, k, batch, problem.b_batch_stride, &lt_a_)
                      : createLayout(type, n, k, n, batch, problem.b_batch_stride, &lt_a_);
  if (!status.ok()) return status;
  status = problem.trans_a ? createLayout(type, m, k, m, batch, problem.a_batch_stride, &lt_b_)
                           : createLayout(type, k, m, k, batch, problem.a_batch_stride, &lt_b_);
  if (!status.ok()) return status;
  status = createLayout(type, n, m, n, batch, m * n, &lt_d_);
  if (!status.ok()) return status;

  // cuBLASLt's column-major layouts need ld >= rows; it checks only when asked for an algorithm
  // (a GPU), so the rule is checked here, from what the layouts report.
  for (cublasLtMatrixLayout_t layout : {lt_a_, lt_b_, lt_d_}) {
    uint64_t rows = 0;
    int64_t ld = 0;
    size_t written = 0;
    KILN_CUDA_RETURN_IF_ERROR(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ROWS,
                                                               &rows, sizeof(rows), &written));
    KILN_CUDA_RETURN_IF_ERROR(cublasLtMatrixLayoutGetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_LD,
                                                               &ld, sizeof(ld), &written));
    if (ld < static_cast<int64_t>(rows))
      return Status(KILN_STATUS_INTERNAL, common_.label + ": a cuBLASLt layout has ld " +
                                              std::to_string(ld) + " below its " +
                                              std::to_string(rows) + " rows");
  }
  return Status();
}

Status CublasLtMatmul::prepare(const MatmulProblem& problem, const CudaLibraryContext& context) {
  handle_ = context.cublaslt;
  Status status = describe(problem);
  if (!status.ok()) return status;
  const CudaEpilogue& epilogue = common_.epilogue;

  std::string key = problemKey(problem, context);
  auto& cache = ChoiceCache<cublasLtMatmulHeuristicResult_t>::instance();
  if (cache.find(key, &algorithm_)) return Status();

  cublasLtMatmulPreference_t preference = nullptr;
  KILN_CUDA_RETURN_IF_ERROR(cublasLtMatmulPreferenceCreate(&preference));
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(cublasLtMatmulPreference_t)>
      preference_owner(preference, cublasLtMatmulPreferenceDestroy);
  uint64_t max_workspace = kMaxWorkspaceBytes;
  KILN_CUDA_RETURN_IF_ERROR(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof(max_workspace)));
  int c_binding = epilogue.addend_binding >= 0 ? epilogue.addend_binding : common_.result_binding;
  const std::pair<cublasLtMatmulPreferenceAttributes_t, int> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, 1},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, 0},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, c_binding},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, common_.result_binding}};
  for (const auto& [attribute, binding] : alignments) {
    uint32_t alignment = common_.alignments[binding];
    KILN_CUDA_RETURN_IF_ERROR(
        cublasLtMatmulPreferenceSetAttribute(preference, attribute, &alignment, sizeof(alignment)));
  }

  int returned = 0;
  cublasStatus_t result = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, lt_a_, lt_b_, lt_d_, lt_d_,
                                                         preference, 1, &algorithm_, &returned);
  if (result == CUBLAS_STATUS_NOT_SUPPORTED || (result == CUBLAS_STATUS_SUCCESS && returned == 0))
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  common_.label + ": cuBLASLt has no algorithm for this problem (" + key + ")");
  status = cudaResultToStatus(result, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  if (!status.ok()) return status;
  cache.insert(key, algorithm_);
  return Status();
}

}  // namespace

Status readMatmulProblem(const LibraryCallView& view, MatmulProblem* out) {
  Status status = view.checkKeys({"trans_a", "trans_b", "post_ops", "post_op_args", "allow_tf32"});
  if (!status.ok()) return status;
  MatmulProblem problem;
  if (!(status = readCudaCallCommon(view, {"a, b", /*matmul=*/true}, &problem.common)).ok())
    return status;
  int64_t trans_a = 0, trans_b = 0;
  if (!(status = view.intScalar("trans_a", 0, &trans_a)).ok() ||
      !(status = view.intScalar("trans_b", 0, &trans_b)).ok())
    return status;
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1))
    return view.invalid("trans_a and trans_b must be 0 or 1");

  const std::vector<LibraryCallBinding>& bindings = view.bindings();
  std::vector<int64_t> a = bindings[0].dims, b = bindings[1].dims;
  const std::vector<int64_t>& d = bindings.back().dims;
  size_t rank = d.size();
  if (a.size() < 2 || b.size() < 2 || rank != std::max(a.size(), b.size()))
    return view.invalid("a (" + formatTypeDims(a) + ") and b (" + formatTypeDims(b) +
                        ") must have rank >= 2 and the result (" + formatTypeDims(d) +
                        ") the larger of their ranks");
  if ((trans_a && a.size() != 2) || (trans_b && b.size() != 2))
    return view.invalid("trans_a and trans_b apply to rank-2 operands only");
  problem.trans_a = trans_a == 1;
  problem.trans_b = trans_b == 1;
  int64_t m = problem.trans_a ? a[1] : a[a.size() - 2];
  int64_t k = problem.trans_a ? a[0] : a[a.size() - 1];
  int64_t b_rows = problem.trans_b ? b[1] : b[b.size() - 2];
  int64_t n = problem.trans_b ? b[0] : b[b.size() - 1];
  if (b_rows != k)
    return view.invalid("a's contraction size " + std::to_string(k) + " differs from b's " +
                        std::to_string(b_rows));
  if (d[rank - 2] != m || d[rank - 1] != n)
    return view.invalid("the result (" + formatTypeDims(d) + ") must end in " + std::to_string(m) +
                        " x " + std::to_string(n));

  // Batch dims, right-aligned: each operand has all of the result's or none.
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  int64_t batch = 1;
  bool a_batched = false, b_batched = false;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if ((a[i] != 1 && a[i] != d[i]) || (b[i] != 1 && b[i] != d[i]) || d[i] != std::max(a[i], b[i]))
      return view.invalid("batch dimension " + std::to_string(i) + " of a (" +
                          std::to_string(a[i]) + ") and b (" + std::to_string(b[i]) +
                          ") does not broadcast to the result's " + std::to_string(d[i]));
    batch *= d[i];
    a_batched |= a[i] != 1;
    b_batched |= b[i] != 1;
  }
  for (size_t i = 0; i + 2 < rank; ++i)
    if ((a_batched && a[i] != d[i]) || (b_batched && b[i] != d[i]))
      return view.unimplemented(
          "a (" + formatTypeDims(bindings[0].dims) + ") and b (" +
          formatTypeDims(bindings[1].dims) +
          ") broadcast only some batch dimensions; cuBLASLt's strided batches take an operand "
          "with all of the result's batch dimensions or none");
  if (batch > INT32_MAX)
    return view.unimplemented("batch count " + std::to_string(batch) +
                              " is above cuBLASLt's limit");
  if (problem.common.epilogue.bias_binding >= 0 &&
      bindings[problem.common.epilogue.bias_binding].dims != std::vector<int64_t>{n})
    return view.invalid("the bias (" +
                        formatTypeDims(bindings[problem.common.epilogue.bias_binding].dims) +
                        ") must have dims " + std::to_string(n));

  problem.n = n;
  problem.k = k;
  if (a_batched && !b_batched) {
    problem.m = m * batch;  // row-major [batch.., m, k] is [batch * m, k]
    problem.batch = 1;
  } else {
    problem.m = m;
    problem.batch = batch;
    problem.a_batch_stride = a_batched ? m * k : 0;
    problem.b_batch_stride = b_batched ? k * n : 0;
  }
  *out = std::move(problem);
  return Status();
}

Status checkCublasLtDescriptors(const MatmulProblem& problem) {
  CublasLtMatmul call;
  return call.describe(problem);
}

Status createCublasLtMatmul(const MatmulProblem& problem, const CudaLibraryContext& context,
                            std::unique_ptr<CudaLibraryCall>* out) {
  // The heuristic asks the current device what it is.
  KILN_CUDA_RETURN_IF_ERROR(cudaSetDevice(context.device));
  auto call = std::make_unique<CublasLtMatmul>();
  Status status = call->prepare(problem, context);
  if (!status.ok()) return status;
  *out = std::move(call);
  return Status();
}

}  // namespace kiln::runtime::cuda
