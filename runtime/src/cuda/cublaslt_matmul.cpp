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
// Views: a_view, b_view and dst_view (library_call_view.h) become leading dimensions, batch
// strides and pointer offsets where cuBLASLt's layouts express them (unit stride along one of the
// last two dims, the batch dims nesting as one stride); anything else is UNIMPLEMENTED, and the
// compiler selects only what is expressible.
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

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/cuda/cuda_status.h"
#include "runtime/src/element_type.h"
#include "contract/matrix_layout.h"

namespace kiln::runtime::cuda {

namespace param = contract::param;
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
      << " k=" << problem.k << " batch=" << problem.batch << " ld=" << problem.leadingA() << ','
      << problem.leadingB() << ',' << problem.leadingD() << " strides=" << problem.a_batch_stride
      << ',' << problem.b_batch_stride << ',' << problem.batchStrideD()
      << " epilogue=" << epilogueOf(common.epilogue)
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
    size_t element = kiln_element_type_size(common_.element_type);
    auto at = [&](void* buffer, int64_t offset) {
      return static_cast<char*>(buffer) + offset * static_cast<int64_t>(element);
    };
    void* a = at(buffers[0], offsets_[0]);
    void* b = at(buffers[1], offsets_[1]);
    void* d = at(buffers[common_.result_binding], offsets_[2]);
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
    KILN_CUDA_RETURN_IF_ERROR(cublasLtMatmul(handle_, desc_, &alpha_, b, lt_a_, a, lt_b_, &beta_, c,
                                             lt_d_, d, lt_d_, &algorithm_.algo, workspace,
                                             algorithm_.workspaceSize, stream));
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
  /// Where a, b and d start in their bindings, in elements.
  int64_t offsets_[3] = {0, 0, 0};
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
  offsets_[0] = problem.a_offset;
  offsets_[1] = problem.b_offset;
  offsets_[2] = problem.d_offset;
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
  // Our b stored row-major: K x N (column-major N x K, ld ldb), or N x K when transposed; our a
  // likewise M x K (column-major K x M, ld lda), or K x M when transposed; our d M x N.
  Status status =
      problem.trans_b
          ? createLayout(type, k, n, problem.leadingB(), batch, problem.b_batch_stride, &lt_a_)
          : createLayout(type, n, k, problem.leadingB(), batch, problem.b_batch_stride, &lt_a_);
  if (!status.ok()) return status;
  status =
      problem.trans_a
          ? createLayout(type, m, k, problem.leadingA(), batch, problem.a_batch_stride, &lt_b_)
          : createLayout(type, k, m, problem.leadingA(), batch, problem.a_batch_stride, &lt_b_);
  if (!status.ok()) return status;
  status = createLayout(type, n, m, problem.leadingD(), batch, problem.batchStrideD(), &lt_d_);
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

namespace {

/// One operand or the result as cuBLASLt sees it: a row-major matrix, or its transpose, with a
/// leading dimension, and one strided batch.
struct MatrixLayout {
  int64_t rows = 0, cols = 0;
  bool transposed = false;
  int64_t ld = 0;
  bool batched = false;
  int64_t batch_stride = 0;
};

/// `view` padded to the result's rank, its last two dims swapped when `trans`, as a matrix
/// layout: unit stride along one of the last two dims (only the last for the result, which
/// cuBLASLt writes row-major here), the batch dims of more than one entry nesting as one stride,
/// and all of the result's batch dims or none.
Status matrixLayout(const LibraryCallView& call, const char* name, StridedView view, bool trans,
                    bool is_result, const std::vector<int64_t>& result, MatrixLayout* out) {
  size_t rank = result.size();
  view.dims.insert(view.dims.begin(), rank - view.dims.size(), 1);
  view.strides.insert(view.strides.begin(), rank - view.strides.size(), 0);
  if (trans) {
    std::swap(view.dims[rank - 1], view.dims[rank - 2]);
    std::swap(view.strides[rank - 1], view.strides[rank - 2]);
  }
  MatrixLayout layout;
  layout.rows = view.dims[rank - 2];
  layout.cols = view.dims[rank - 1];
  const int64_t row_stride = view.strides[rank - 2], col_stride = view.strides[rank - 1];
  std::optional<contract::StridedMatrix> matrix =
      contract::stridedMatrix(layout.rows, layout.cols, row_stride, col_stride, /*transposable=*/!is_result);
  if (!matrix && is_result &&
      contract::stridedMatrix(layout.rows, layout.cols, row_stride, col_stride, /*transposable=*/true))
    return call.unimplemented(
        "the result's dst_view is column-major; cuBLASLt writes D with "
        "unit stride along its last dim here");
  if (!matrix)
    return call.unimplemented(std::string(name) + " (dims " + formatTypeDims(view.dims) +
                              ") has no unit stride along its last two dims, or rows that "
                              "overlap; cuBLASLt's matrix layouts need both");
  layout.transposed = matrix->transposed;
  layout.ld = matrix->ld;
  int64_t inner = -1;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (view.dims[i] != 1 && view.dims[i] != result[i])
      return call.invalid("batch dimension " + std::to_string(i) + " of " + name + " (" +
                          std::to_string(view.dims[i]) + ") does not broadcast to the result's " +
                          std::to_string(result[i]));
    if (view.dims[i] == 1) continue;
    if (inner >= 0 && view.strides[inner] != view.strides[i] * view.dims[i])
      return call.unimplemented(std::string(name) + "'s batch dims (" + formatTypeDims(view.dims) +
                                ") do not nest as one stride; cuBLASLt takes one strided batch");
    inner = static_cast<int64_t>(i);
    layout.batched = true;
  }
  if (layout.batched) {
    layout.batch_stride = view.strides[inner];
    for (size_t i = 0; i + 2 < rank; ++i)
      if (view.dims[i] != result[i])
        return call.unimplemented(
            std::string(name) + " (" + formatTypeDims(view.dims) +
            ") broadcasts only some batch dimensions; cuBLASLt's strided batches take an "
            "operand with all of the result's batch dimensions or none");
  }
  *out = layout;
  return Status();
}

/// The lowest set bit of `bytes`, capped at `alignment`: what an address `bytes` past one aligned
/// to `alignment` is aligned to.
uint32_t offsetAlignment(uint32_t alignment, int64_t bytes) {
  if (bytes == 0) return alignment;
  uint64_t lowest = static_cast<uint64_t>(bytes) & (~static_cast<uint64_t>(bytes) + 1);
  return static_cast<uint32_t>(std::min<uint64_t>(alignment, lowest));
}

}  // namespace

Status readMatmulProblem(const LibraryCallView& view, MatmulProblem* out) {
  Status status;
  MatmulProblem problem;
  if (!(status = readCudaCallCommon(view, {"a, b", /*matmul=*/true}, &problem.common)).ok())
    return status;
  bool trans_a = false, trans_b = false;
  if (!(status = view.flag(param::kTransA, false, &trans_a)).ok() ||
      !(status = view.flag(param::kTransB, false, &trans_b)).ok())
    return status;

  const std::vector<LibraryCallBinding>& bindings = view.bindings();
  const int result_binding = problem.common.result_binding;
  StridedView a, b, d;
  if (!(status = view.view(param::kAView, 0, false, &a)).ok() ||
      !(status = view.view(param::kBView, 1, false, &b)).ok() ||
      !(status = view.view(param::kDstView, result_binding, true, &d)).ok())
    return status;
  size_t rank = d.dims.size();
  if (a.dims.size() < 2 || b.dims.size() < 2 || rank != std::max(a.dims.size(), b.dims.size()))
    return view.invalid("a (" + formatTypeDims(a.dims) + ") and b (" + formatTypeDims(b.dims) +
                        ") must have rank >= 2 and the result (" + formatTypeDims(d.dims) +
                        ") the larger of their ranks");
  if (d.given && problem.common.epilogue.addend_binding >= 0)
    return view.invalid("takes no 'add' post-op with a dst_view (the addend is row-major)");

  MatrixLayout la, lb, ld;
  if (!(status = matrixLayout(view, "a", a, trans_a, false, d.dims, &la)).ok() ||
      !(status = matrixLayout(view, "b", b, trans_b, false, d.dims, &lb)).ok() ||
      !(status = matrixLayout(view, "the result", d, false, true, d.dims, &ld)).ok())
    return status;
  int64_t m = la.rows, k = la.cols, n = lb.cols;
  if (lb.rows != k)
    return view.invalid("a's contraction size " + std::to_string(k) + " differs from b's " +
                        std::to_string(lb.rows));
  if (ld.rows != m || ld.cols != n)
    return view.invalid("the result (" + formatTypeDims(d.dims) + ") must end in " +
                        std::to_string(m) + " x " + std::to_string(n));
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < rank; ++i) batch *= d.dims[i];
  if (batch > INT32_MAX)
    return view.unimplemented("batch count " + std::to_string(batch) +
                              " is above cuBLASLt's limit");
  if (problem.common.epilogue.bias_binding >= 0 &&
      bindings[problem.common.epilogue.bias_binding].dims != std::vector<int64_t>{n})
    return view.invalid("the bias (" +
                        formatTypeDims(bindings[problem.common.epilogue.bias_binding].dims) +
                        ") must have dims " + std::to_string(n));

  problem.trans_a = la.transposed;
  problem.trans_b = lb.transposed;
  problem.n = n;
  problem.k = k;
  problem.lda = la.ld;
  problem.ldb = lb.ld;
  problem.ldd = ld.ld;
  problem.a_offset = a.offset;
  problem.b_offset = b.offset;
  problem.d_offset = d.offset;
  if (la.batched && !lb.batched && !la.transposed && la.batch_stride == m * la.ld &&
      ld.batch_stride == m * ld.ld) {
    problem.m = m * batch;  // row-major [batch.., m, k] is [batch * m, k]
    problem.batch = 1;
  } else {
    problem.m = m;
    problem.batch = batch;
    problem.a_batch_stride = la.batched ? la.batch_stride : 0;
    problem.b_batch_stride = lb.batched ? lb.batch_stride : 0;
    problem.d_batch_stride = batch > 1 ? ld.batch_stride : 0;
  }
  // An address `offset` elements past the binding's is aligned to less than the binding.
  size_t element = kiln_element_type_size(problem.common.element_type);
  std::vector<uint32_t>& alignments = problem.common.alignments;
  alignments[0] = offsetAlignment(alignments[0], a.offset * static_cast<int64_t>(element));
  alignments[1] = offsetAlignment(alignments[1], b.offset * static_cast<int64_t>(element));
  alignments[result_binding] =
      offsetAlignment(alignments[result_binding], d.offset * static_cast<int64_t>(element));
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
