//===- attention.cpp - The kiln.attention library call ----------------------===//
//
// Scaled dot-product attention in blocks (attention.h has the contract). The work is split over
// OpenMP threads (the runtime's oneDNN calls run on the same OpenMP runtime) by batch index and
// block of query rows; each task walks the keys in blocks: S = scale * Q Kᵀ by oneDNN's GEMM, the
// mask added, the online softmax update of the row maxima m and sums l (the accumulated output
// rescaled by exp(m_old - m_new)), then O += exp(S - m) V by the GEMM again. The row operations
// are compiled for AVX-512, AVX2 and the baseline, picked when the library loads.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cpu/attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.h"
#include "runtime/src/library_call_view.h"
#include "contract/matrix_layout.h"

namespace kiln::runtime::cpu {
namespace {

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define KILN_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KILN_VECTOR_CLONES
#endif

/// Query rows and keys per block: a block of scores (64 x 256 floats, 64 KiB) stays in L2.
constexpr int64_t kBlockQ = 64;
constexpr int64_t kBlockK = 256;

/// e^x for x <= 0 (softmax's arguments after the maximum is subtracted): x = n ln 2 + r with
/// |r| <= ln 2 / 2 (Cody-Waite), e^r by Cephes' polynomial (about 1 ulp), 2^n by the exponent
/// bits. Below -87 (2^-125) the result is 0, as for -inf. Written without branches or library
/// calls so that the loops around it vectorize.
inline float expNonPositive(float x) {
  float clamped = std::max(x, -87.0f);
  // Round to the nearest integer by adding 1.5 * 2^23 (no floor call in the loop).
  float shifted = clamped * 1.44269504088896341f + 12582912.0f;
  float n = shifted - 12582912.0f;
  float r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float e = p * r * r + r + 1.0f;
  int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float power;
  std::memcpy(&power, &bits, sizeof(power));
  return x < -87.0f ? 0.0f : e * power;
}

KILN_VECTOR_CLONES
void addRow(float* __restrict row, const float* __restrict mask, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) row[j] += mask[j];
}

KILN_VECTOR_CLONES
float rowMax(const float* row, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : max)
  for (int64_t j = 0; j < n; ++j) max = std::max(max, row[j]);
  return max;
}

/// row[j] = e^(row[j] - max); returns their sum.
KILN_VECTOR_CLONES
float expRow(float* row, int64_t n, float max) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) {
    float e = expNonPositive(row[j] - max);
    row[j] = e;
    sum += e;
  }
  return sum;
}

KILN_VECTOR_CLONES
void scaleRow(float* row, int64_t n, float factor) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) row[j] *= factor;
}

/// A view's last two dims as a matrix and its batch strides (0 where it broadcasts).
struct Operand {
  int64_t offset = 0;
  std::vector<int64_t> batch_strides;
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  /// How the GEMM reads it: as it lies ('N', leading dimension = row stride) or transposed ('T',
  /// leading dimension = column stride).
  char trans = 'N';
  int64_t ld = 0;

  /// Query heads per head of this operand (Kᵀ and V of grouped-query attention), else 1.
  int64_t group = 1;

  /// The element offset of batch index `batch` (row-major over `batch_dims`, dst's), its last
  /// index divided by the group.
  int64_t batchOffset(int64_t batch, const std::vector<int64_t>& batch_dims) const {
    int64_t at = offset;
    for (size_t d = batch_dims.size(); d-- > 0;) {
      int64_t index = batch % batch_dims[d];
      if (d + 1 == batch_dims.size()) index /= group;
      at += index * batch_strides[d];
      batch /= batch_dims[d];
    }
    return at;
  }
  /// Where the block starting at (row, col) begins.
  int64_t blockOffset(int64_t row, int64_t col) const {
    return row * row_stride + col * col_stride;
  }
};

/// Whether a GEMM reads `operand` as it lies or transposed (the BLAS rule of matrix_layout.h,
/// which the compiler's selection checks too); sets trans and ld.
bool gemmLayout(Operand* operand) {
  std::optional<contract::StridedMatrix> matrix =
      contract::stridedMatrix(operand->rows, operand->cols, operand->row_stride, operand->col_stride,
                    /*transposable=*/true);
  if (!matrix) return false;
  operand->trans = matrix->transposed ? 'T' : 'N';
  operand->ld = matrix->ld;
  return true;
}

class AttentionKernel : public LibraryCallKernel {
 public:
  Status run(void* const* buffers) const override {
    const float* q = static_cast<const float*>(buffers[0]);
    const float* k = static_cast<const float*>(buffers[1]);
    const float* v = static_cast<const float*>(buffers[2]);
    const float* mask = has_mask ? static_cast<const float*>(buffers[3]) : nullptr;
    float* dst = static_cast<float*>(buffers[dst_binding]);
    const int64_t q_blocks = (sq + kBlockQ - 1) / kBlockQ;
    const int64_t tasks = batches * q_blocks;
    const int64_t block_k = std::min(skv, kBlockK);
    const size_t scratch_floats =
        static_cast<size_t>(kBlockQ * block_k + kBlockQ * dv + 2 * kBlockQ);
    std::atomic<int> gemm_failure{0};
    std::atomic<bool> out_of_memory{false};
#pragma omp parallel
    {
      std::unique_ptr<float[]> scratch(new (std::nothrow) float[scratch_floats]);
      if (!scratch) out_of_memory = true;
#pragma omp for schedule(static)
      for (int64_t task = 0; task < tasks; ++task) {
        if (!scratch || gemm_failure.load(std::memory_order_relaxed) != 0) continue;
        if (dnnl_status_t s = runTask(task, q_blocks, q, k, v, mask, dst, scratch.get());
            s != dnnl_success)
          gemm_failure = static_cast<int>(s);
      }
    }
    if (out_of_memory)
      return Status(KILN_STATUS_RESOURCE_EXHAUSTED, label + ": out of memory for its blocks");
    if (int failure = gemm_failure.load(); failure != 0)
      return Status(KILN_STATUS_INTERNAL, label + ": oneDNN's GEMM failed (dnnl_status_t " +
                                              std::to_string(failure) + ")");
    return Status();
  }

  bool writes(size_t binding) const override { return binding == dst_binding; }

  std::string label;
  size_t dst_binding = 0;
  bool has_mask = false;
  /// zero_masked_rows: a row whose scores are all -inf is zero rather than 0 / 0.
  bool zero_masked_rows = false;
  float scale = 1.0f;
  std::vector<int64_t> batch_dims;
  int64_t batches = 1, sq = 0, skv = 0, d = 0, dv = 0;
  Operand q_op, k_op, v_op, mask_op, dst_op;

 private:
  /// One batch index and block of query rows.
  dnnl_status_t runTask(int64_t task, int64_t q_blocks, const float* q, const float* k,
                        const float* v, const float* mask, float* dst, float* scratch) const {
    const int64_t batch = task / q_blocks;
    const int64_t row0 = (task % q_blocks) * kBlockQ;
    const int64_t rows = std::min(kBlockQ, sq - row0);
    const int64_t block_k = std::min(skv, kBlockK);
    float* scores = scratch;
    float* acc = scores + kBlockQ * block_k;
    float* row_max = acc + kBlockQ * dv;
    float* row_sum = row_max + kBlockQ;
    std::fill(acc, acc + rows * dv, 0.0f);
    std::fill(row_max, row_max + rows, -std::numeric_limits<float>::infinity());
    std::fill(row_sum, row_sum + rows, 0.0f);

    const float* q_rows = q + q_op.batchOffset(batch, batch_dims) + q_op.blockOffset(row0, 0);
    const int64_t k_base = k_op.batchOffset(batch, batch_dims);
    const int64_t v_base = v_op.batchOffset(batch, batch_dims);
    const int64_t mask_base = has_mask ? mask_op.batchOffset(batch, batch_dims) : 0;
    for (int64_t key0 = 0; key0 < skv; key0 += block_k) {
      const int64_t keys = std::min(block_k, skv - key0);
      // scores = scale * Q[rows] Kᵀ[:, keys]
      dnnl_status_t status =
          dnnl_sgemm(q_op.trans, k_op.trans, rows, keys, d, scale, q_rows, q_op.ld,
                     k + k_base + k_op.blockOffset(0, key0), k_op.ld, 0.0f, scores, keys);
      if (status != dnnl_success) return status;
      for (int64_t i = 0; i < rows; ++i) {
        float* row = scores + i * keys;
        if (has_mask) {
          const float* mask_row = mask + mask_base + mask_op.blockOffset(row0 + i, key0);
          if (mask_op.col_stride == 1) {
            addRow(row, mask_row, keys);
          } else {
            for (int64_t j = 0; j < keys; ++j) row[j] += mask_row[j * mask_op.col_stride];
          }
        }
        const float block_max = rowMax(row, keys);
        const float new_max = std::max(row_max[i], block_max);
        if (new_max == -std::numeric_limits<float>::infinity()) {
          // Every score so far is -inf: the block adds nothing (a row that stays so ends 0/0).
          std::fill(row, row + keys, 0.0f);
          continue;
        }
        const float correction = expNonPositive(row_max[i] - new_max);
        row_sum[i] = row_sum[i] * correction + expRow(row, keys, new_max);
        if (correction != 1.0f) scaleRow(acc + i * dv, dv, correction);
        row_max[i] = new_max;
      }
      // acc += e^(scores - max) V[keys]
      status = dnnl_sgemm('N', v_op.trans, rows, dv, keys, 1.0f, scores, keys,
                          v + v_base + v_op.blockOffset(key0, 0), v_op.ld, 1.0f, acc, dv);
      if (status != dnnl_success) return status;
    }
    float* out = dst + dst_op.batchOffset(batch, batch_dims) + dst_op.blockOffset(row0, 0);
    for (int64_t i = 0; i < rows; ++i) {
      const float inverse = 1.0f / row_sum[i];
      const float* from = acc + i * dv;
      float* to = out + i * dst_op.row_stride;
      if (dst_op.col_stride == 1 && row_sum[i] != 0.0f) {
        for (int64_t c = 0; c < dv; ++c) to[c] = from[c] * inverse;
      } else if (row_sum[i] == 0.0f && zero_masked_rows) {
        // No key to attend (zero_masked_rows).
        for (int64_t c = 0; c < dv; ++c) to[c * dst_op.col_stride] = 0.0f;
      } else {
        // A row with every score -inf: 0 / 0, as the softmax gives.
        for (int64_t c = 0; c < dv; ++c) to[c * dst_op.col_stride] = from[c] / row_sum[i];
      }
    }
    return dnnl_success;
  }
};

}  // namespace

Status createAttentionKernel(const kiln::artifact::LibraryCall& call,
                             std::unique_ptr<LibraryCallKernel>* out,
                             const std::vector<std::vector<int64_t>>* run_dims) {
  LibraryCallView view;
  Status status = LibraryCallView::create(call, {KILN_ELEMENT_TYPE_F32},
                                          "kiln.attention takes f32 tensors only", &view, run_dims);
  if (!status.ok()) return status;
  AttentionCall attention;
  if (!(status = readAttentionCall(view, &attention)).ok()) return status;
  const StridedView &q = attention.q, &k = attention.k, &v = attention.v, &mask = attention.mask,
                    &dst = attention.dst;
  const bool has_mask = attention.has_mask;
  const size_t rank = dst.dims.size();
  const std::vector<int64_t>& batch_dims = attention.batch_dims;
  const int64_t sq = attention.sq, d = attention.d, skv = attention.skv, dv = attention.dv;
  auto kernel = std::make_unique<AttentionKernel>();
  auto operand = [&](const StridedView& from) {
    Operand op;
    op.offset = from.offset;
    op.batch_strides.assign(from.strides.begin(), from.strides.end() - 2);
    op.rows = from.dims[rank - 2];
    op.cols = from.dims[rank - 1];
    op.row_stride = from.strides[rank - 2];
    op.col_stride = from.strides[rank - 1];
    return op;
  };
  kernel->q_op = operand(q);
  kernel->k_op = operand(k);
  kernel->v_op = operand(v);
  kernel->k_op.group = kernel->v_op.group = attention.kv_group;
  kernel->dst_op = operand(dst);
  if (has_mask) kernel->mask_op = operand(mask);
  for (auto [op, name] :
       {std::pair{&kernel->q_op, "q"}, {&kernel->k_op, "k"}, {&kernel->v_op, "v"}})
    if (!gemmLayout(op))
      return view.unimplemented(std::string(name) +
                                "'s view has no unit stride along its last two dims (strides " +
                                std::to_string(op->row_stride) + ", " +
                                std::to_string(op->col_stride) + "); a GEMM cannot read it");
  kernel->label = view.label();
  kernel->dst_binding = view.bindings().size() - 1;
  kernel->has_mask = has_mask;
  kernel->zero_masked_rows = attention.zero_masked_rows;
  kernel->scale = attention.scale;
  kernel->batch_dims = batch_dims;
  for (int64_t b : batch_dims) kernel->batches *= b;
  kernel->sq = sq;
  kernel->skv = skv;
  kernel->d = d;
  kernel->dv = dv;
  *out = std::move(kernel);
  return Status();
}

}  // namespace kiln::runtime::cpu
