//===- library_reference.cpp - CPU references of the CUDA library calls ---===//
//
// Numerics: every element is read as a float (f16 and bf16 exactly; f32 operands rounded to tf32
// first when the call allows tf32, as cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32 and cuDNN's tensor
// op math may), products accumulate in f32 in the order of the contraction, and the epilogue runs
// in f32: ((alpha * product + bias) + addend), then the activation, then one rounding to the
// result's type (round to nearest even). The tf32 rounding is to nearest with ties away from zero,
// what cvt.rna.tf32.f32 does. ReLU propagates NaN (cuDNN is told CUDNN_PROPAGATE_NAN; for cuBLASLt
// it is the stricter choice): a result computed from poisoned memory stays NaN.
//
// The convolution's epilogue is conv + bias + addend, then ReLU. cuDNN's legacy fallback computes
// y = act(alpha1 * conv(x) + alpha2 * z + bias) with z the addend and alpha2 = 1, or, without an
// addend, z = y itself and alpha2 = 0, relying on cuDNN not reading z when alpha2 is 0 (XLA does
// the same and says cuDNN promises it). The problem says neither which path runs nor alpha2, so
// there is no alpha2 * z here: z is read only when it is the addend.
//
// Speed (the simulated device runs whole models through these): both calls are one kernel, a
// GEMM over packed panels. The right-hand operand (the matmul's op(B); the convolution's im2col
// matrix, built straight into panels for a tile of output pixels) is stored as panels of
// kPanelWidth columns, each depth x kPanelWidth contiguous; a block of kRowBlock rows of the
// left-hand operand (op(A); the weights) against one panel keeps its kRowBlock x kPanelWidth sums
// in registers, over depth blocks of kDepthBlock that keep the panel in L1. Work is split into
// independent units (a batch entry's rows; an image, group, pixel tile and channel chunk) taken
// by up to hardware_concurrency std::threads when there are more than about a million
// multiply-adds.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/sim/library_reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "runtime/src/element_type.h"
#include "contract/half_conversions.h"
#include "runtime/src/library_call_view.h"

namespace kiln::runtime::cuda::sim {
namespace {

// ---------------------------------------------------------------------------------------------
// Element conversions
// ---------------------------------------------------------------------------------------------

/// `value` with 10 mantissa bits, rounded to nearest with ties away from zero (cvt.rna.tf32.f32);
/// Inf and NaN unchanged.
float roundToTf32(float value) {
  uint32_t bits = contract::floatBits(value);
  if ((bits & 0x7f800000u) == 0x7f800000u) return value;
  return contract::bitsFloat((bits + 0x1000u) & 0xffffe000u);
}

size_t elementSize(kiln_element_type_t type) { return type == KILN_ELEMENT_TYPE_F32 ? 4 : 2; }

const void* elementAt(kiln_element_type_t type, const void* base, int64_t index) {
  return static_cast<const char*>(base) + index * static_cast<int64_t>(elementSize(type));
}

void* elementAt(kiln_element_type_t type, void* base, int64_t index) {
  return static_cast<char*>(base) + index * static_cast<int64_t>(elementSize(type));
}

/// Reads `count` elements of `type` from `source` as floats, rounded to tf32 when `tf32`.
void loadFloats(kiln_element_type_t type, const void* source, int64_t count, bool tf32,
                float* out) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F16: {
      const auto* in = static_cast<const uint16_t*>(source);
      for (int64_t i = 0; i < count; ++i) out[i] = contract::halfToFloat(in[i]);
      return;
    }
    case KILN_ELEMENT_TYPE_BF16: {
      const auto* in = static_cast<const uint16_t*>(source);
      for (int64_t i = 0; i < count; ++i) out[i] = contract::bf16ToFloat(in[i]);
      return;
    }
    default: {
      const auto* in = static_cast<const float*>(source);
      if (tf32) {
        for (int64_t i = 0; i < count; ++i) out[i] = roundToTf32(in[i]);
      } else {
        std::memcpy(out, in, static_cast<size_t>(count) * sizeof(float));
      }
      return;
    }
  }
}

/// Writes `count` floats to `target` as elements of `type`, each rounded to nearest even.
void storeFloats(kiln_element_type_t type, const float* values, int64_t count, void* target) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F16: {
      auto* out = static_cast<uint16_t*>(target);
      for (int64_t i = 0; i < count; ++i) out[i] = contract::floatToHalf(values[i]);
      return;
    }
    case KILN_ELEMENT_TYPE_BF16: {
      auto* out = static_cast<uint16_t*>(target);
      for (int64_t i = 0; i < count; ++i) out[i] = contract::floatToBf16(values[i]);
      return;
    }
    default:
      std::memcpy(target, values, static_cast<size_t>(count) * sizeof(float));
      return;
  }
}

/// A whole operand as floats: the buffer itself for f32 without tf32, otherwise a converted copy.
class FloatOperand {
 public:
  FloatOperand(kiln_element_type_t type, const void* data, int64_t count, bool tf32) {
    if (type == KILN_ELEMENT_TYPE_F32 && !tf32) {
      data_ = static_cast<const float*>(data);
      return;
    }
    copy_.resize(static_cast<size_t>(count));
    loadFloats(type, data, count, tf32, copy_.data());
    data_ = copy_.data();
  }
  const float* data() const { return data_; }

 private:
  std::vector<float> copy_;
  const float* data_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// The epilogue
// ---------------------------------------------------------------------------------------------

/// The tanh form of GELU, cuBLASLt's: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
float geluTanh(float x) {
  constexpr float kSqrtTwoOverPi = 0.7978845608028654f;
  return 0.5f * x * (1.0f + std::tanh(kSqrtTwoOverPi * (x + 0.044715f * x * x * x)));
}

void activate(Activation activation, float* values, int64_t count) {
  switch (activation) {
    case Activation::kRelu:
      // NaN < 0 is false: NaN propagates.
      for (int64_t i = 0; i < count; ++i) values[i] = values[i] < 0.0f ? 0.0f : values[i];
      return;
    case Activation::kGelu:
      for (int64_t i = 0; i < count; ++i) values[i] = geluTanh(values[i]);
      return;
    case Activation::kNone:
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------------------------

/// Multiply-adds below which one more thread does not pay for itself.
constexpr double kMultiplyAddsPerThread = 1 << 20;

/// Scratch memory of one thread, reused across the units it runs.
struct Workspace {
  std::vector<float> lhs, panels, sums, row;
};

int64_t threadBudget(double multiply_adds) {
  int64_t hardware = std::max<int64_t>(1, std::thread::hardware_concurrency());
  auto useful = static_cast<int64_t>(multiply_adds / kMultiplyAddsPerThread);
  return std::max<int64_t>(1, std::min(hardware, useful));
}

/// Calls `body(unit, workspace)` for every unit in [0, units), on the calling thread and up to
/// threadBudget(multiply_adds) - 1 more, each taking the next unit until none is left. An
/// exception (std::bad_alloc for scratch memory) stops the others and is rethrown here.
template <typename Body>
void forEachUnit(int64_t units, double multiply_adds, const Body& body) {
  int64_t thread_count = std::min(units, threadBudget(multiply_adds));
  if (thread_count <= 1) {
    Workspace workspace;
    for (int64_t unit = 0; unit < units; ++unit) body(unit, workspace);
    return;
  }
  std::atomic<int64_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&]() {
    try {
      Workspace workspace;
      for (int64_t unit; (unit = next.fetch_add(1)) < units;) body(unit, workspace);
    } catch (...) {
      next.store(units);
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<size_t>(thread_count - 1));
  for (int64_t i = 1; i < thread_count; ++i) {
    try {
      helpers.emplace_back(work);
    } catch (...) {
      break;  // no more threads to be had: the ones started (and this one) do all the units
    }
  }
  work();
  for (std::thread& helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
}

// ---------------------------------------------------------------------------------------------
// The GEMM over packed panels
// ---------------------------------------------------------------------------------------------

/// Columns per panel of the right-hand operand, rows per block of the left-hand one, and the
/// depth a panel is taken in at a time (kDepthBlock x kPanelWidth floats stay in L1).
constexpr int64_t kPanelWidth = 8;
constexpr int kRowBlock = 6;
constexpr int64_t kDepthBlock = 128;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Four floats in one register: the vector extension of GCC and Clang (SSE on x86-64, NEON on
/// Arm), which keeps the sums of a block in registers where plain loops may not.
typedef float Float4 __attribute__((vector_size(16)));
constexpr int kVectorsPerPanel = kPanelWidth / 4;

Float4 loadFloat4(const float* address) {
  Float4 value;
  std::memcpy(&value, address, sizeof(value));
  return value;
}

void storeFloat4(float* address, Float4 value) { std::memcpy(address, &value, sizeof(value)); }

/// sums[Rows x kPanelWidth] (+)= lhs[Rows x depth] * panel[depth x kPanelWidth]; the sums stay
/// in registers over the whole depth, each lane adding its products in the order of d.
template <int Rows>
void multiplyBlock(const float* lhs, int64_t lhs_stride, const float* panel, int64_t depth,
                   float* sums, int64_t sums_stride, bool accumulate) {
  Float4 block[Rows][kVectorsPerPanel];
  for (int r = 0; r < Rows; ++r)
    for (int v = 0; v < kVectorsPerPanel; ++v)
      block[r][v] = accumulate ? loadFloat4(sums + r * sums_stride + 4 * v) : Float4{};
  for (int64_t d = 0; d < depth; ++d) {
    Float4 column[kVectorsPerPanel];
    for (int v = 0; v < kVectorsPerPanel; ++v)
      column[v] = loadFloat4(panel + d * kPanelWidth + 4 * v);
    for (int r = 0; r < Rows; ++r) {
      float factor = lhs[r * lhs_stride + d];
      Float4 broadcast = {factor, factor, factor, factor};
      for (int v = 0; v < kVectorsPerPanel; ++v) block[r][v] += broadcast * column[v];
    }
  }
  for (int r = 0; r < Rows; ++r)
    for (int v = 0; v < kVectorsPerPanel; ++v)
      storeFloat4(sums + r * sums_stride + 4 * v, block[r][v]);
}

/// multiplyBlock for the `rows` (at most Rows) left after the full blocks.
template <int Rows>
void multiplyPartialBlock(int64_t rows, const float* lhs, int64_t lhs_stride, const float* panel,
                          int64_t depth, float* sums, int64_t sums_stride, bool accumulate) {
  if (rows == Rows) {
    multiplyBlock<Rows>(lhs, lhs_stride, panel, depth, sums, sums_stride, accumulate);
  } else if constexpr (Rows > 1) {
    multiplyPartialBlock<Rows - 1>(rows, lhs, lhs_stride, panel, depth, sums, sums_stride,
                                   accumulate);
  }
}

/// sums[rows x panel_count * kPanelWidth] = lhs[rows x depth] * panels, where panel p holds
/// columns [p * kPanelWidth, (p + 1) * kPanelWidth) as depth x kPanelWidth floats.
void multiplyPanels(const float* lhs, int64_t lhs_stride, int64_t rows, const float* panels,
                    int64_t depth, int64_t panel_count, float* sums, int64_t sums_stride) {
  if (depth == 0) {
    for (int64_t i = 0; i < rows; ++i)
      std::fill(sums + i * sums_stride, sums + i * sums_stride + panel_count * kPanelWidth, 0.0f);
    return;
  }
  for (int64_t d0 = 0; d0 < depth; d0 += kDepthBlock) {
    int64_t block_depth = std::min(kDepthBlock, depth - d0);
    bool accumulate = d0 > 0;
    for (int64_t p = 0; p < panel_count; ++p) {
      const float* panel = panels + (p * depth + d0) * kPanelWidth;
      float* out = sums + p * kPanelWidth;
      const float* in = lhs + d0;
      int64_t i = 0;
      for (; i + kRowBlock <= rows; i += kRowBlock)
        multiplyBlock<kRowBlock>(in + i * lhs_stride, lhs_stride, panel, block_depth,
                                 out + i * sums_stride, sums_stride, accumulate);
      if (i < rows)
        multiplyPartialBlock<kRowBlock - 1>(rows - i, in + i * lhs_stride, lhs_stride, panel,
                                            block_depth, out + i * sums_stride, sums_stride,
                                            accumulate);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

Status invalid(const CudaCallCommon& common, const std::string& what) {
  return Status(KILN_STATUS_INVALID_ARGUMENT, common.label + ": " + what);
}

/// What both calls need of `common` and `buffers`: a supported element type, bindings in range
/// and present, and the addresses as aligned as the call assumed.
Status checkCommon(const CudaCallCommon& common, void* const* buffers) {
  kiln_element_type_t type = common.element_type;
  if (type != KILN_ELEMENT_TYPE_F32 && type != KILN_ELEMENT_TYPE_F16 &&
      type != KILN_ELEMENT_TYPE_BF16)
    return invalid(
        common, "the CPU reference computes f32, f16 and bf16, not " + describeElementType(type));
  const CudaEpilogue& epilogue = common.epilogue;
  if (common.result_binding < 2)
    return invalid(common, "the result binding " + std::to_string(common.result_binding) +
                               " must follow the two operands");
  for (int binding : {epilogue.bias_binding, epilogue.addend_binding})
    if (binding != -1 && (binding < 2 || binding >= common.result_binding))
      return invalid(common, "epilogue binding " + std::to_string(binding) +
                                 " is not between the operands and the result");
  if (!buffers) return invalid(common, "no buffers");
  for (int binding = 0; binding <= common.result_binding; ++binding)
    if (!buffers[binding])
      return invalid(common, "binding " + std::to_string(binding) + " is null");
  if (!std::isfinite(epilogue.alpha))
    return invalid(common, "alpha " + std::to_string(epilogue.alpha) + " is not finite");
  return checkAlignments(common, buffers);
}

/// The bias as floats, or empty without one.
std::vector<float> loadBias(const CudaCallCommon& common, void* const* buffers, int64_t count) {
  std::vector<float> bias;
  if (common.epilogue.bias_binding < 0) return bias;
  bias.resize(static_cast<size_t>(count));
  loadFloats(common.element_type, buffers[common.epilogue.bias_binding], count, false, bias.data());
  return bias;
}

/// Finishes `count` sums (bias already added) of the result's elements from `offset` on: adds the
/// addend, activates, and stores them rounded to the element type.
void finishRow(const CudaCallCommon& common, void* const* buffers, int64_t offset, int64_t count,
               float* sums, Workspace& workspace) {
  const CudaEpilogue& epilogue = common.epilogue;
  kiln_element_type_t type = common.element_type;
  if (epilogue.addend_binding >= 0) {
    workspace.row.resize(static_cast<size_t>(count));
    loadFloats(type, elementAt(type, buffers[epilogue.addend_binding], offset), count, false,
               workspace.row.data());
    for (int64_t j = 0; j < count; ++j) sums[j] += workspace.row[j];
  }
  activate(epilogue.activation, sums, count);
  storeFloats(type, sums, count, elementAt(type, buffers[common.result_binding], offset));
}

/// A buffer as aligned as any binding is assumed to be (256 bytes, a cudaMalloc's).
struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes)
      : data(static_cast<char*>(
            std::aligned_alloc(256, std::max<size_t>(256, (bytes + 255) / 256 * 256)))) {
    if (!data) throw std::bad_alloc();
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* data;
};

/// Copies `outer` blocks of `planes` x `channels` elements of `element` bytes, stored
/// channels-last (plane-major), into channels-first order, or back when `to_last`.
void reorderChannels(const char* from, char* to, int64_t outer, int64_t planes, int64_t channels,
                     size_t element, bool to_last) {
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t block = o * planes * channels;
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t c = 0; c < channels; ++c) {
        int64_t last = block + p * channels + c, first = block + c * planes + p;
        std::memcpy(to + (to_last ? last : first) * static_cast<int64_t>(element),
                    from + (to_last ? first : last) * static_cast<int64_t>(element), element);
      }
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// cublaslt.matmul
// ---------------------------------------------------------------------------------------------

Status runMatmulReference(const MatmulProblem& problem, void* const* buffers) {
  const CudaCallCommon& common = problem.common;
  Status status = checkCommon(common, buffers);
  if (!status.ok()) return status;
  const int64_t m = problem.m, n = problem.n, k = problem.k, batch = problem.batch;
  if (m < 0 || n < 0 || k < 0 || batch < 1 || problem.a_batch_stride < 0 ||
      problem.b_batch_stride < 0)
    return invalid(common, "matmul sizes m=" + std::to_string(m) + " n=" + std::to_string(n) +
                               " k=" + std::to_string(k) + " batch=" + std::to_string(batch) +
                               " or batch strides are negative");
  if (m == 0 || n == 0) return Status();

  const kiln_element_type_t type = common.element_type;
  const bool tf32 = type == KILN_ELEMENT_TYPE_F32 && common.allow_tf32;
  const float alpha = common.epilogue.alpha;
  const std::vector<float> bias = loadBias(common, buffers, n);
  // The views' starts (a_view, b_view, dst_view); lda, ldb, ldd and the batch strides step
  // through them.
  const void* a = elementAt(type, buffers[0], problem.a_offset);
  const void* b = elementAt(type, buffers[1], problem.b_offset);
  const int64_t lda = problem.leadingA(), ldb = problem.leadingB(), ldd = problem.leadingD();
  const int64_t panel_count = ceilDiv(n, kPanelWidth), padded = panel_count * kPanelWidth;

  // Columns [j0, j1) of op(B) of batch entry `index` into `panels` (k x padded floats, zero
  // past n): row r of op(B) is row r of b, or column r of b stored N x K.
  auto pack_b = [&](int64_t index, int64_t j0, int64_t j1, float* panels, std::vector<float>& row) {
    int64_t base = index * problem.b_batch_stride;
    if (!problem.trans_b) {
      row.resize(static_cast<size_t>(j1 - j0));
      for (int64_t r = 0; r < k; ++r) {
        loadFloats(type, elementAt(type, b, base + r * ldb + j0), j1 - j0, tf32, row.data());
        for (int64_t j = j0; j < j1; ++j)
          panels[((j / kPanelWidth) * k + r) * kPanelWidth + j % kPanelWidth] = row[j - j0];
      }
    } else {
      row.resize(static_cast<size_t>(k));
      for (int64_t j = j0; j < j1; ++j) {
        loadFloats(type, elementAt(type, b, base + j * ldb), k, tf32, row.data());
        float* column = panels + (j / kPanelWidth) * k * kPanelWidth + j % kPanelWidth;
        for (int64_t r = 0; r < k; ++r) column[r * kPanelWidth] = row[r];
      }
    }
  };
  // A b shared by the whole batch is packed once, by the threads together (for f16 and bf16 the
  // conversions are a fair part of the work).
  const bool shared_b = batch == 1 || problem.b_batch_stride == 0;
  std::vector<float> shared_panels;
  if (shared_b) {
    constexpr int64_t kPackColumns = 16 * kPanelWidth;
    shared_panels.assign(static_cast<size_t>(k * padded), 0.0f);
    forEachUnit(ceilDiv(n, kPackColumns), static_cast<double>(k) * n,
                [&](int64_t unit, Workspace& workspace) {
                  int64_t j0 = unit * kPackColumns;
                  pack_b(0, j0, std::min(n, j0 + kPackColumns), shared_panels.data(),
                         workspace.row);
                });
  }

  // Units: a chunk of rows of one batch entry. Enough of them for the threads, not so small that
  // repacking an unshared b for each costs much.
  const double multiply_adds = static_cast<double>(batch) * m * n * k;
  const int64_t wanted = 4 * threadBudget(multiply_adds);
  int64_t chunk = ceilDiv(m, std::max<int64_t>(1, ceilDiv(wanted, batch)));
  chunk = ceilDiv(std::max<int64_t>(chunk, 32), kRowBlock) * kRowBlock;
  chunk = std::min<int64_t>(std::min<int64_t>(chunk, 256), m);
  const int64_t chunks = ceilDiv(m, chunk);

  forEachUnit(batch * chunks, multiply_adds, [&](int64_t unit, Workspace& workspace) {
    const int64_t index = unit / chunks, i0 = (unit % chunks) * chunk;
    const int64_t rows = std::min(chunk, m - i0);
    const float* panels = shared_panels.data();
    if (!shared_b) {
      workspace.panels.assign(static_cast<size_t>(k * padded), 0.0f);
      pack_b(index, 0, n, workspace.panels.data(), workspace.row);
      panels = workspace.panels.data();
    }
    // op(A)'s rows [i0, i0 + rows): rows of a, or columns of a stored K x M.
    const int64_t a_base = index * problem.a_batch_stride;
    const float* lhs;
    int64_t lhs_stride = k;
    if (!problem.trans_a && type == KILN_ELEMENT_TYPE_F32 && !tf32) {
      lhs = static_cast<const float*>(a) + a_base + i0 * lda;
      lhs_stride = lda;
    } else {
      workspace.lhs.resize(static_cast<size_t>(rows * k));
      if (!problem.trans_a) {
        for (int64_t i = 0; i < rows; ++i)
          loadFloats(type, elementAt(type, a, a_base + (i0 + i) * lda), k, tf32,
                     workspace.lhs.data() + i * k);
      } else {
        workspace.row.resize(static_cast<size_t>(rows));
        for (int64_t r = 0; r < k; ++r) {
          loadFloats(type, elementAt(type, a, a_base + r * lda + i0), rows, tf32,
                     workspace.row.data());
          for (int64_t i = 0; i < rows; ++i) workspace.lhs[i * k + r] = workspace.row[i];
        }
      }
      lhs = workspace.lhs.data();
    }
    workspace.sums.resize(static_cast<size_t>(rows * padded));
    multiplyPanels(lhs, lhs_stride, rows, panels, k, panel_count, workspace.sums.data(), padded);
    for (int64_t i = 0; i < rows; ++i) {
      float* sums = workspace.sums.data() + i * padded;
      for (int64_t j = 0; j < n; ++j) sums[j] *= alpha;
      if (!bias.empty())
        for (int64_t j = 0; j < n; ++j) sums[j] += bias[j];
      finishRow(common, buffers, problem.d_offset + index * problem.batchStrideD() + (i0 + i) * ldd,
                n, sums, workspace);
    }
  });
  return Status();
}

// ---------------------------------------------------------------------------------------------
// cudnn.convolution
// ---------------------------------------------------------------------------------------------

Status runConvolutionReference(const ConvolutionProblem& problem, void* const* buffers) {
  const CudaCallCommon& common = problem.common;
  Status status = checkCommon(common, buffers);
  if (!status.ok()) return status;
  if (problem.channels_last) {
    // The same arithmetic over channels-first copies: x, w and the addend are reordered in, the
    // result out (moving elements, no rounding).
    ConvolutionProblem first = problem;
    first.channels_last = false;
    const size_t element = elementSize(common.element_type);
    auto count = [](const std::vector<int64_t>& dims) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      return n;
    };
    auto planes = [&](const std::vector<int64_t>& dims) {
      return dims.size() < 3 ? 0 : count(dims) / (dims[0] * dims[1]);
    };
    if (problem.x_dims.size() < 3 || problem.w_dims.size() != problem.x_dims.size() ||
        problem.y_dims.size() != problem.x_dims.size())
      return invalid(common, "x " + formatTypeDims(problem.x_dims) + ", w " +
                                 formatTypeDims(problem.w_dims) + " and y " +
                                 formatTypeDims(problem.y_dims) +
                                 " must have one rank of 3 or more");
    std::vector<void*> staged(buffers, buffers + common.result_binding + 1);
    const int a = common.epilogue.addend_binding;
    AlignedBuffer x(count(problem.x_dims) * element), w(count(problem.w_dims) * element),
        y(count(problem.y_dims) * element), addend(a >= 0 ? count(problem.y_dims) * element : 0);
    reorderChannels(static_cast<const char*>(buffers[0]), x.data, problem.x_dims[0],
                    planes(problem.x_dims), problem.x_dims[1], element, false);
    reorderChannels(static_cast<const char*>(buffers[1]), w.data, problem.w_dims[0],
                    planes(problem.w_dims), problem.w_dims[1], element, false);
    staged[0] = x.data;
    staged[1] = w.data;
    staged[common.result_binding] = y.data;
    if (a >= 0) {
      reorderChannels(static_cast<const char*>(buffers[a]), addend.data, problem.y_dims[0],
                      planes(problem.y_dims), problem.y_dims[1], element, false);
      staged[a] = addend.data;
    }
    if (!(status = runConvolutionReference(first, staged.data())).ok()) return status;
    reorderChannels(y.data, static_cast<char*>(buffers[common.result_binding]), problem.y_dims[0],
                    planes(problem.y_dims), problem.y_dims[1], element, true);
    return Status();
  }
  const size_t rank = problem.x_dims.size();
  const size_t spatial = rank - 2;
  if ((rank != 4 && rank != 5) || problem.w_dims.size() != rank || problem.y_dims.size() != rank ||
      problem.strides.size() != spatial || problem.dilations.size() != spatial ||
      problem.pads_begin.size() != spatial || problem.pads_end.size() != spatial)
    return invalid(common, "x " + formatTypeDims(problem.x_dims) + ", w " +
                               formatTypeDims(problem.w_dims) + " and y " +
                               formatTypeDims(problem.y_dims) +
                               " must have rank 4 or 5 alike, with strides, dilations and pads "
                               "for each of their spatial dimensions");
  if (common.epilogue.activation == Activation::kGelu || common.epilogue.alpha != 1.0f)
    return invalid(common, "cuDNN convolutions fuse neither alpha nor GELU");

  // Dims in the 3-D form: a 2-D convolution has unit depth.
  auto spatial_dims = [&](const std::vector<int64_t>& values, int64_t fill) {
    std::vector<int64_t> out(3, fill);
    std::copy(values.end() - static_cast<std::ptrdiff_t>(spatial), values.end(),
              out.end() - static_cast<std::ptrdiff_t>(spatial));
    return out;
  };
  const std::vector<int64_t> in = spatial_dims(problem.x_dims, 1);
  const std::vector<int64_t> window = spatial_dims(problem.w_dims, 1);
  const std::vector<int64_t> out = spatial_dims(problem.y_dims, 1);
  const std::vector<int64_t> strides = spatial_dims(problem.strides, 1);
  const std::vector<int64_t> dilations = spatial_dims(problem.dilations, 1);
  const std::vector<int64_t> pads = spatial_dims(problem.pads_begin, 0);
  const std::vector<int64_t> pads_end = spatial_dims(problem.pads_end, 0);
  const int64_t batch = problem.x_dims[0], channels = problem.x_dims[1];
  const int64_t features = problem.w_dims[0], groups = problem.groups;
  if (groups < 1 || channels % groups != 0 || features % groups != 0 ||
      problem.w_dims[1] * groups != channels || problem.y_dims[0] != batch ||
      problem.y_dims[1] != features)
    return invalid(common, "x " + formatTypeDims(problem.x_dims) + ", w " +
                               formatTypeDims(problem.w_dims) + " and y " +
                               formatTypeDims(problem.y_dims) + " do not match in " +
                               std::to_string(groups) + " group(s)");
  for (int i = 0; i < 3; ++i) {
    int64_t extent = dilations[i] * (window[i] - 1) + 1;
    int64_t padded = in[i] + pads[i] + pads_end[i];
    if (strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads_end[i] < 0 || window[i] < 1 ||
        in[i] < 0 || padded < extent || out[i] != (padded - extent) / strides[i] + 1)
      return invalid(common, "the spatial dims of y " + formatTypeDims(problem.y_dims) +
                                 " are not what x, w, the strides, dilations and pads give");
  }
  if (batch == 0 || features == 0) return Status();

  const kiln_element_type_t type = common.element_type;
  const bool tf32 = type == KILN_ELEMENT_TYPE_F32 && common.allow_tf32;
  const int64_t group_channels = channels / groups, group_features = features / groups;
  const int64_t in_plane = in[0] * in[1] * in[2];
  const int64_t pixels = out[0] * out[1] * out[2];
  // The depth of the GEMM: (c, kd, kh, kw), which is also w's row-major layout per feature.
  const int64_t depth = group_channels * window[0] * window[1] * window[2];
  const FloatOperand x(type, buffers[0], batch * channels * in_plane, tf32);
  const FloatOperand w(type, buffers[1], features * depth, tf32);
  const std::vector<float> bias = loadBias(common, buffers, features);

  // Units: (image, group, tile of output pixels, chunk of the group's features). A tile's im2col
  // panels hold about 256 KB; features are chunked only to give the threads enough units.
  const double multiply_adds = static_cast<double>(batch) * features * pixels * depth;
  int64_t tile_panels =
      ceilDiv(std::max<int64_t>(65536 / std::max<int64_t>(depth, 1), 64), kPanelWidth);
  tile_panels = std::min({tile_panels, 1024 / kPanelWidth, ceilDiv(pixels, kPanelWidth)});
  const int64_t tile = tile_panels * kPanelWidth;
  const int64_t tiles = ceilDiv(pixels, tile);
  const int64_t wanted = 2 * threadBudget(multiply_adds);
  const int64_t whole_units = batch * groups * tiles;
  int64_t chunk = group_features;
  if (whole_units < wanted) {
    chunk = ceilDiv(group_features, ceilDiv(wanted, whole_units));
    chunk = std::min(group_features, std::max<int64_t>(32, ceilDiv(chunk, kRowBlock) * kRowBlock));
  }
  const int64_t chunks = ceilDiv(group_features, chunk);

  forEachUnit(whole_units * chunks, multiply_adds, [&](int64_t unit, Workspace& workspace) {
    const int64_t feature_chunk = unit % chunks;
    const int64_t tile_index = (unit / chunks) % tiles;
    const int64_t group = (unit / chunks / tiles) % groups;
    const int64_t image = unit / chunks / tiles / groups;
    const int64_t p0 = tile_index * tile, count = std::min(tile, pixels - p0);
    const int64_t panel_count = ceilDiv(count, kPanelWidth), padded = panel_count * kPanelWidth;

    // im2col into panels: column j of the tile is output pixel p0 + j, row (c, kd, kh, kw) the
    // input element its window puts there (0 in the padding). Each window position's offsets
    // into an input plane serve every channel; where they are consecutive, a row is one copy.
    workspace.panels.resize(static_cast<size_t>(depth * padded));
    const float* x_group = x.data() + (image * channels + group * group_channels) * in_plane;
    const int64_t positions = window[0] * window[1] * window[2];
    const int64_t channel_stride = positions * kPanelWidth;
    for (int64_t q = 0; q < panel_count; ++q) {
      float* panel = workspace.panels.data() + q * depth * kPanelWidth;
      int64_t start[kPanelWidth][3];
      bool valid[kPanelWidth];
      for (int64_t j = 0; j < kPanelWidth; ++j) {
        int64_t p = p0 + q * kPanelWidth + j;
        valid[j] = p < p0 + count;
        int64_t at[3] = {p / (out[1] * out[2]), (p / out[2]) % out[1], p % out[2]};
        for (int i = 0; i < 3; ++i) start[j][i] = at[i] * strides[i] - pads[i];
      }
      int64_t position = 0;
      for (int64_t kd = 0; kd < window[0]; ++kd) {
        for (int64_t kh = 0; kh < window[1]; ++kh) {
          for (int64_t kw = 0; kw < window[2]; ++kw, ++position) {
            int64_t offsets[kPanelWidth];
            bool consecutive = true;
            for (int64_t j = 0; j < kPanelWidth; ++j) {
              int64_t id = start[j][0] + kd * dilations[0];
              int64_t ih = start[j][1] + kh * dilations[1];
              int64_t iw = start[j][2] + kw * dilations[2];
              bool inside = valid[j] && id >= 0 && id < in[0] && ih >= 0 && ih < in[1] && iw >= 0 &&
                            iw < in[2];
              offsets[j] = inside ? (id * in[1] + ih) * in[2] + iw : -1;
              consecutive = consecutive && inside && offsets[j] == offsets[0] + j;
            }
            float* row = panel + position * kPanelWidth;
            for (int64_t c = 0; c < group_channels; ++c, row += channel_stride) {
              const float* plane = x_group + c * in_plane;
              if (consecutive) {
                std::memcpy(row, plane + offsets[0], kPanelWidth * sizeof(float));
                continue;
              }
              for (int64_t j = 0; j < kPanelWidth; ++j)
                row[j] = offsets[j] >= 0 ? plane[offsets[j]] : 0.0f;
            }
          }
        }
      }
    }

    const int64_t f0 = group * group_features + feature_chunk * chunk;
    const int64_t rows = std::min(chunk, group_features - feature_chunk * chunk);
    workspace.sums.resize(static_cast<size_t>(rows * padded));
    multiplyPanels(w.data() + f0 * depth, depth, rows, workspace.panels.data(), depth, panel_count,
                   workspace.sums.data(), padded);
    for (int64_t i = 0; i < rows; ++i) {
      float* sums = workspace.sums.data() + i * padded;
      if (!bias.empty())
        for (int64_t j = 0; j < count; ++j) sums[j] += bias[f0 + i];
      finishRow(common, buffers, (image * features + f0 + i) * pixels + p0, count, sums, workspace);
    }
  });
  return Status();
}

// ---------------------------------------------------------------------------------------------
// cudnn.attention
// ---------------------------------------------------------------------------------------------

Status runAttentionReference(const AttentionProblem& problem, void* const* buffers) {
  const CudaCallCommon& common = problem.common;
  Status status = checkCommon(common, buffers);
  if (!status.ok()) return status;
  const kiln_element_type_t type = common.element_type;
  const AttentionCall& call = problem.call;
  const int64_t heads = problem.q.dims[1], batches = problem.q.dims[0] * heads;
  const int64_t sq = call.sq, skv = call.skv, d = call.d, dv = call.dv;
  const bool has_mask = call.has_mask;
  // The element at (b, h, row, col) of a 4-D view; the mask's dims of 1 broadcast.
  auto index = [](const StridedView& view, int64_t b, int64_t h, int64_t row, int64_t col) {
    auto at = [&](size_t dim, int64_t i) {
      return view.dims[dim] == 1 ? 0 : i * view.strides[dim];
    };
    return view.offset + at(0, b) + at(1, h) + at(2, row) + at(3, col);
  };
  auto load = [&](int binding, int64_t element) {
    float value = 0.0f;
    loadFloats(type, elementAt(type, buffers[binding], element), 1, false, &value);
    return value;
  };
  const int result = common.result_binding;
  // One unit per (batch, head): its K and V (key and value head h / kv_group) read as floats
  // once, then per row the scores, softmax and weighted sum of values in f32, with one rounding
  // of each result element, as the library's fused kernel keeps them on chip.
  forEachUnit(batches, static_cast<double>(batches) * sq * skv * (d + dv),
              [&](int64_t unit, Workspace&) {
                const int64_t b = unit / heads, h = unit % heads, kv = h / call.kv_group;
                std::vector<float> keys(static_cast<size_t>(skv * d)),
                    values(static_cast<size_t>(skv * dv));
                for (int64_t key = 0; key < skv; ++key) {
                  for (int64_t c = 0; c < d; ++c)
                    keys[key * d + c] = load(1, index(problem.k, b, kv, key, c));
                  for (int64_t c = 0; c < dv; ++c)
                    values[key * dv + c] = load(2, index(problem.v, b, kv, key, c));
                }
                std::vector<float> q(static_cast<size_t>(d)), scores(static_cast<size_t>(skv)),
                    out(static_cast<size_t>(dv));
                for (int64_t row = 0; row < sq; ++row) {
                  for (int64_t c = 0; c < d; ++c) q[c] = load(0, index(problem.q, b, h, row, c));
                  float largest = -std::numeric_limits<float>::infinity();
                  for (int64_t key = 0; key < skv; ++key) {
                    float dot = 0.0f;
                    for (int64_t c = 0; c < d; ++c) dot += q[c] * keys[key * d + c];
                    float score = call.scale * dot;
                    if (has_mask) score += load(3, index(problem.mask, b, h, row, key));
                    scores[key] = score;
                    largest = std::max(largest, score);
                  }
                  float sum = 0.0f;
                  for (int64_t key = 0; key < skv; ++key) {
                    scores[key] = std::exp(scores[key] - largest);
                    sum += scores[key];
                  }
                  std::fill(out.begin(), out.end(), 0.0f);
                  for (int64_t key = 0; key < skv; ++key)
                    for (int64_t c = 0; c < dv; ++c) out[c] += scores[key] * values[key * dv + c];
                  for (int64_t c = 0; c < dv; ++c) {
                    float value = out[c] / sum;
                    storeFloats(type, &value, 1,
                                elementAt(type, buffers[result], index(problem.o, b, h, row, c)));
                  }
                }
              });
  return Status();
}

}  // namespace kiln::runtime::cuda::sim
