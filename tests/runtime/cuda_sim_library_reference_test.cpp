//===- cuda_sim_library_reference_test.cpp - Tests of the library calls' CPU references ---===//
//
// runMatmulReference and runConvolutionReference on problem structs built here: against PyTorch's
// results for seeded random data (library_reference_fixtures.h, from
// gen_library_reference_fixtures.py), against float64 loops for sizes that take the threads, the
// depth blocks and the partial panels, against hand-computed roundings to f16 and bf16, and the
// INVALID_ARGUMENT answers. Results start poisoned (0xFF bytes, NaN in every type), as the
// simulated device's fresh memory does, so an element never written fails.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/sim/library_reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "runtime/src/cuda/cuda_library_problem.h"
#include "contract/half_conversions.h"
#include "tests/runtime/library_reference_fixtures.h"

namespace {

using ::kiln::runtime::cuda::Activation;
using ::kiln::runtime::cuda::ConvolutionProblem;
using ::kiln::runtime::cuda::CudaCallCommon;
using ::kiln::runtime::cuda::MatmulProblem;
using ::kiln::runtime::cuda::sim::runConvolutionReference;
using ::kiln::runtime::cuda::sim::runMatmulReference;
using ::testing::HasSubstr;
namespace fixtures = ::kiln::testing;

constexpr kiln_element_type_t kF32 = KILN_ELEMENT_TYPE_F32;
constexpr kiln_element_type_t kF16 = KILN_ELEMENT_TYPE_F16;
constexpr kiln_element_type_t kBf16 = KILN_ELEMENT_TYPE_BF16;
constexpr const char *kLabel = "library call 'test.call' (reference test)";

/// Tolerances: |got - expected| <= absolute + relative * |expected|.
struct Tolerance {
  double relative, absolute;
};
constexpr Tolerance kF32Tolerance{1e-5, 1e-5};
constexpr Tolerance kF16Tolerance{1e-2, 1e-3};
constexpr Tolerance kBf16Tolerance{2e-2, 1e-2};

/// f16 bits as a float, by the definition of the format (not the code under test's bit tricks).
float halfBitsToFloat(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  if (exponent == 0x1f)
    return mantissa ? std::nanf("") : sign * INFINITY;
  if (exponent == 0)
    return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
}

float bf16BitsToFloat(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

/// The memory of a call's bindings in order (operands, bias, addend, result), each as malloc
/// aligns it (16 bytes), and the common part of its problem.
class Bindings {
public:
  explicit Bindings(kiln_element_type_t type) : type_(type) {}

  template <typename T> int add(const T *values, size_t count) {
    EXPECT_EQ(sizeof(T), type_ == kF32 ? 4u : 2u) << "binding " << storage_.size();
    const auto *bytes = reinterpret_cast<const uint8_t *>(values);
    storage_.emplace_back(bytes, bytes + count * sizeof(T));
    return static_cast<int>(storage_.size()) - 1;
  }
  template <typename T, size_t N> int add(const T (&values)[N]) { return add(values, N); }
  int add(const std::vector<float> &values) { return add(values.data(), values.size()); }
  int add(const std::vector<uint16_t> &values) { return add(values.data(), values.size()); }

  /// The result: `count` elements of poison.
  int addResult(size_t count) {
    storage_.emplace_back(count * (type_ == kF32 ? 4 : 2), uint8_t{0xFF});
    return static_cast<int>(storage_.size()) - 1;
  }

  /// The common part of a problem over these bindings, the last one the result.
  CudaCallCommon common(int bias, int addend, Activation activation, float alpha = 1.0f) const {
    CudaCallCommon common;
    common.label = kLabel;
    common.element_type = type_;
    common.epilogue.alpha = alpha;
    common.epilogue.bias_binding = bias;
    common.epilogue.addend_binding = addend;
    common.epilogue.activation = activation;
    common.result_binding = static_cast<int>(storage_.size()) - 1;
    common.alignments.assign(storage_.size(), 16);
    return common;
  }

  void *const *addresses() {
    pointers_.clear();
    for (std::vector<uint8_t> &bytes : storage_)
      pointers_.push_back(bytes.data());
    return pointers_.data();
  }

  /// The last binding's elements as floats.
  std::vector<float> result() const {
    const std::vector<uint8_t> &bytes = storage_.back();
    std::vector<float> values;
    if (type_ == kF32) {
      values.resize(bytes.size() / 4);
      std::memcpy(values.data(), bytes.data(), bytes.size());
      return values;
    }
    for (uint16_t bits : resultBits())
      values.push_back(type_ == kF16 ? halfBitsToFloat(bits) : bf16BitsToFloat(bits));
    return values;
  }

  /// The last binding's 16-bit elements.
  std::vector<uint16_t> resultBits() const {
    const std::vector<uint8_t> &bytes = storage_.back();
    std::vector<uint16_t> bits(bytes.size() / 2);
    std::memcpy(bits.data(), bytes.data(), bits.size() * 2);
    return bits;
  }

private:
  kiln_element_type_t type_;
  std::vector<std::vector<uint8_t>> storage_;
  std::vector<void *> pointers_;
};

/// `expected` as floats: f32 values, or f16 / bf16 bit patterns.
std::vector<float> asFloats(const float *values, size_t count, kiln_element_type_t) {
  return std::vector<float>(values, values + count);
}
std::vector<float> asFloats(const uint16_t *bits, size_t count, kiln_element_type_t type) {
  std::vector<float> values;
  for (size_t i = 0; i < count; ++i)
    values.push_back(type == kF16 ? halfBitsToFloat(bits[i]) : bf16BitsToFloat(bits[i]));
  return values;
}

/// Expects `got` to hold `expected`'s values within `tolerance`, reporting the first few misses.
void expectNear(const std::vector<float> &got, const std::vector<float> &expected,
                Tolerance tolerance) {
  ASSERT_EQ(got.size(), expected.size());
  int misses = 0;
  for (size_t i = 0; i < got.size() && misses < 8; ++i) {
    double bound = tolerance.absolute + tolerance.relative * std::fabs(expected[i]);
    if (!(std::fabs(static_cast<double>(got[i]) - expected[i]) <= bound)) {
      ++misses;
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", expected " << expected[i]
                    << " (within " << bound << ")";
    }
  }
}

/// Expects each of `got` within 1e-5 of the sum of the magnitudes of the terms that make the
/// float64 `expected` (f32 accumulation errs by far less; a wrong or missing term by far more).
void expectNearFloat64(const std::vector<float> &got, const std::vector<float> &expected,
                       const std::vector<double> &magnitudes) {
  ASSERT_EQ(got.size(), expected.size());
  int misses = 0;
  for (size_t i = 0; i < got.size() && misses < 8; ++i) {
    double bound = 1e-5 * magnitudes[i] + 1e-6;
    if (!(std::fabs(static_cast<double>(got[i]) - expected[i]) <= bound)) {
      ++misses;
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", expected " << expected[i]
                    << " (within " << bound << ")";
    }
  }
}

/// Expects the fixture arrays to have the sizes the test's shapes give.
#define EXPECT_FIXTURE_SIZE(array, count)                                                          \
  EXPECT_EQ(std::size(array), static_cast<size_t>(count)) << #array " does not fit the shapes"

MatmulProblem matmulProblem(const CudaCallCommon &common, int64_t m, int64_t n, int64_t k) {
  MatmulProblem problem;
  problem.common = common;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  return problem;
}

ConvolutionProblem convolutionProblem(const CudaCallCommon &common, std::vector<int64_t> x,
                                      std::vector<int64_t> w, std::vector<int64_t> y,
                                      std::vector<int64_t> strides, std::vector<int64_t> dilations,
                                      std::vector<int64_t> pads_begin,
                                      std::vector<int64_t> pads_end, int64_t groups) {
  ConvolutionProblem problem;
  problem.common = common;
  problem.x_dims = std::move(x);
  problem.w_dims = std::move(w);
  problem.y_dims = std::move(y);
  problem.strides = std::move(strides);
  problem.dilations = std::move(dilations);
  problem.pads_begin = std::move(pads_begin);
  problem.pads_end = std::move(pads_end);
  problem.groups = groups;
  return problem;
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= dim;
  return count;
}

std::vector<float> seededValues(size_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float &value : values)
    value = distribution(generator);
  return values;
}

// ---------------------------------------------------------------------------------------------
// cublaslt.matmul against PyTorch
// ---------------------------------------------------------------------------------------------

// Fails if trans_a or trans_b reads the stored matrix the wrong way round, or alpha or the addend
// is lost.
TEST(MatmulReferenceTest, TransposesBothOperandsWithAlphaAndAddend) {
  constexpr int64_t m = 5, n = 6, k = 7;
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulTransposesA, k * m);
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulTransposesB, n * k);
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulTransposesD, m * n);
  Bindings bindings(kF32);
  bindings.add(fixtures::kMatmulTransposesA);
  bindings.add(fixtures::kMatmulTransposesB);
  int addend = bindings.add(fixtures::kMatmulTransposesAddend);
  bindings.addResult(m * n);
  MatmulProblem problem =
      matmulProblem(bindings.common(-1, addend, Activation::kNone, 0.5f), m, n, k);
  problem.trans_a = problem.trans_b = true;
  ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kMatmulTransposesD, m * n, kF32), kF32Tolerance);
}

// Fails if a batch stride of 0 does not reuse b for every batch entry, or the bias does not run
// along n, or ReLU is missing.
TEST(MatmulReferenceTest, BroadcastsBOverTheBatchWithBiasAndRelu) {
  constexpr int64_t batch = 3, m = 4, n = 10, k = 9;
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulBroadcastBA, batch * m * k);
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulBroadcastBB, k * n);
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulBroadcastBD, batch * m * n);
  Bindings bindings(kF32);
  bindings.add(fixtures::kMatmulBroadcastBA);
  bindings.add(fixtures::kMatmulBroadcastBB);
  int bias = bindings.add(fixtures::kMatmulBroadcastBBias);
  bindings.addResult(batch * m * n);
  MatmulProblem problem = matmulProblem(bindings.common(bias, -1, Activation::kRelu), m, n, k);
  problem.batch = batch;
  problem.a_batch_stride = m * k;
  problem.b_batch_stride = 0;
  ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kMatmulBroadcastBD, batch * m * n, kF32),
             kF32Tolerance);
}

// Fails if a broadcast a is mishandled or the GELU is not cuBLASLt's tanh form (the erf form
// differs by up to about 5e-4, far above the tolerance).
TEST(MatmulReferenceTest, BroadcastsAOverTheBatchWithBiasAndGeluTanh) {
  constexpr int64_t batch = 2, m = 3, n = 5, k = 8;
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulBroadcastAGeluA, m * k);
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulBroadcastAGeluB, batch * k * n);
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulBroadcastAGeluD, batch * m * n);
  Bindings bindings(kF32);
  bindings.add(fixtures::kMatmulBroadcastAGeluA);
  bindings.add(fixtures::kMatmulBroadcastAGeluB);
  int bias = bindings.add(fixtures::kMatmulBroadcastAGeluBias);
  bindings.addResult(batch * m * n);
  MatmulProblem problem = matmulProblem(bindings.common(bias, -1, Activation::kGelu), m, n, k);
  problem.batch = batch;
  problem.a_batch_stride = 0;
  problem.b_batch_stride = k * n;
  ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kMatmulBroadcastAGeluD, batch * m * n, kF32),
             {1e-5, 1e-6});
}

// Fails if allow_tf32 does not round the operands to tf32 first, or rounds without it: the two
// expected results differ by far more than the tolerance.
TEST(MatmulReferenceTest, RoundsOperandsToTf32OnlyWhenAllowed) {
  constexpr int64_t m = 6, n = 3, k = 40;
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulTf32D, m * n);
  double largest_difference = 0;
  for (int64_t i = 0; i < m * n; ++i)
    largest_difference = std::max(largest_difference, std::fabs(double{fixtures::kMatmulTf32D[i]} -
                                                                fixtures::kMatmulTf32DF32[i]));
  ASSERT_GT(largest_difference, 1e-3) << "the fixture does not tell tf32 from f32";
  for (bool allow_tf32 : {true, false}) {
    SCOPED_TRACE(allow_tf32 ? "allow_tf32" : "f32");
    Bindings bindings(kF32);
    bindings.add(fixtures::kMatmulTf32A);
    bindings.add(fixtures::kMatmulTf32B);
    bindings.addResult(m * n);
    MatmulProblem problem = matmulProblem(bindings.common(-1, -1, Activation::kNone), m, n, k);
    problem.common.allow_tf32 = allow_tf32;
    ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
    expectNear(
        bindings.result(),
        asFloats(allow_tf32 ? fixtures::kMatmulTf32D : fixtures::kMatmulTf32DF32, m * n, kF32),
        {1e-5, 1e-6});
  }
}

// Fails if f16 or bf16 operands, bias or addend are misread or the result misrounded.
TEST(MatmulReferenceTest, ComputesF16AndBf16) {
  constexpr int64_t m = 5, n = 11, k = 24;
  struct Case {
    kiln_element_type_t type;
    const uint16_t *a, *b, *bias, *addend, *d;
    Tolerance tolerance;
  };
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulF16D, m * n);
  EXPECT_FIXTURE_SIZE(fixtures::kMatmulBf16D, m * n);
  for (const Case &test :
       {Case{kF16, fixtures::kMatmulF16A, fixtures::kMatmulF16B, fixtures::kMatmulF16Bias,
             fixtures::kMatmulF16Addend, fixtures::kMatmulF16D, kF16Tolerance},
        Case{kBf16, fixtures::kMatmulBf16A, fixtures::kMatmulBf16B, fixtures::kMatmulBf16Bias,
             fixtures::kMatmulBf16Addend, fixtures::kMatmulBf16D, kBf16Tolerance}}) {
    SCOPED_TRACE(test.type == kF16 ? "f16" : "bf16");
    Bindings bindings(test.type);
    bindings.add(test.a, m * k);
    bindings.add(test.b, k * n);
    int bias = bindings.add(test.bias, n);
    int addend = bindings.add(test.addend, m * n);
    bindings.addResult(m * n);
    MatmulProblem problem =
        matmulProblem(bindings.common(bias, addend, Activation::kRelu), m, n, k);
    ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
    expectNear(bindings.result(), asFloats(test.d, m * n, test.type), test.tolerance);
  }
}

// ---------------------------------------------------------------------------------------------
// cublaslt.matmul: sizes, rounding, NaN
// ---------------------------------------------------------------------------------------------

/// op(a) op(b) + bias + addend, then ReLU, in float64, with the sum of |terms| of each element.
void matmulInFloat64(const MatmulProblem &problem, const std::vector<float> &a,
                     const std::vector<float> &b, const std::vector<float> &bias,
                     const std::vector<float> &addend, std::vector<float> *out,
                     std::vector<double> *magnitudes) {
  int64_t m = problem.m, n = problem.n, k = problem.k;
  for (int64_t batch = 0; batch < problem.batch; ++batch) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t r = 0; r < k; ++r) {
          double left =
              a[batch * problem.a_batch_stride + (problem.trans_a ? r * m + i : i * k + r)];
          double right =
              b[batch * problem.b_batch_stride + (problem.trans_b ? j * k + r : r * n + j)];
          sum += left * right;
          magnitude += std::fabs(left * right);
        }
        int64_t index = (batch * m + i) * n + j;
        sum = sum + bias[j] + addend[index];
        out->push_back(static_cast<float>(std::max(sum, 0.0)));
        magnitudes->push_back(magnitude + std::fabs(bias[j]) + std::fabs(addend[index]));
      }
    }
  }
}

// Fails if the threads, the depth blocks (k > 128), partial row blocks and partial panels (n not
// a multiple of 8), batches with their own b, or the transposes go wrong at sizes where they all
// take part (each problem is over a million multiply-adds).
TEST(MatmulReferenceTest, LargeProblemsMatchFloat64Loops) {
  struct Shape {
    int64_t batch, m, n, k;
    bool trans_a, trans_b;
  };
  for (const Shape &shape :
       {Shape{2, 67, 45, 300, false, false}, Shape{1, 130, 21, 400, true, true},
        Shape{3, 29, 77, 150, false, true}}) {
    SCOPED_TRACE("batch " + std::to_string(shape.batch) + " m " + std::to_string(shape.m));
    Bindings bindings(kF32);
    std::vector<float> a = seededValues(shape.batch * shape.m * shape.k, 1);
    std::vector<float> b = seededValues(shape.batch * shape.k * shape.n, 2);
    std::vector<float> bias = seededValues(shape.n, 3);
    std::vector<float> addend = seededValues(shape.batch * shape.m * shape.n, 4);
    bindings.add(a);
    bindings.add(b);
    int bias_binding = bindings.add(bias);
    int addend_binding = bindings.add(addend);
    bindings.addResult(shape.batch * shape.m * shape.n);
    MatmulProblem problem =
        matmulProblem(bindings.common(bias_binding, addend_binding, Activation::kRelu), shape.m,
                      shape.n, shape.k);
    problem.batch = shape.batch;
    problem.a_batch_stride = shape.m * shape.k;
    problem.b_batch_stride = shape.k * shape.n;
    problem.trans_a = shape.trans_a;
    problem.trans_b = shape.trans_b;
    ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
    std::vector<float> expected;
    std::vector<double> magnitudes;
    matmulInFloat64(problem, a, b, bias, addend, &expected, &magnitudes);
    expectNearFloat64(bindings.result(), expected, magnitudes);
  }
}

// Fails if the result is rounded other than once to nearest even (ties to even, 65520 to Inf,
// subnormals), or NaN and Inf are not kept: 0.5 * b + addend with k = 1, each exact in f32.
TEST(MatmulReferenceTest, RoundsF16AndBf16ResultsOnceToNearestEven) {
  struct Case {
    kiln_element_type_t type;
    uint16_t half; // a = 0.5
    std::vector<uint16_t> b, bias, addend, expected;
  };
  const Case cases[] = {
      {kF16,
       0x3800,
       // 2, 2+2^-9, 65504, 3*2^-24, 5*2^-24, 7*2^-24, -(2+2^-9), NaN, Inf
       {0x4000, 0x4001, 0x7bff, 0x0003, 0x0005, 0x0007, 0xc001, 0x7e00, 0x7c00},
       std::vector<uint16_t>(9, 0),
       // 2^-11 (ties), 32768 (65520, the tie above 65504), 0s, -2^-11
       {0x1000, 0x1000, 0x7800, 0, 0, 0, 0x9000, 0, 0},
       // 1 (tie to even), 1+2^-9 (tie to even), Inf, 2*2^-24, 2*2^-24, 4*2^-24, -(1+2^-9), NaN,
       // Inf
       {0x3c00, 0x3c02, 0x7c00, 0x0002, 0x0002, 0x0004, 0xbc02, 0x7e00, 0x7c00}},
      {kBf16,
       0x3f00,
       // 2, 2+2^-6, the largest finite, NaN
       {0x4000, 0x4001, 0x7f7f, 0x7fc0},
       // 0, 0, 2^119, 0
       {0, 0, 0x7b00, 0},
       // 2^-8 (ties), half the largest finite (the sum is the tie above it), 0
       {0x3b80, 0x3b80, 0x7eff, 0},
       // 1, 1+2^-6, Inf, NaN
       {0x3f80, 0x3f82, 0x7f80, 0x7fc0}},
  };
  for (const Case &test : cases) {
    SCOPED_TRACE(test.type == kF16 ? "f16" : "bf16");
    int64_t n = static_cast<int64_t>(test.b.size());
    Bindings bindings(test.type);
    bindings.add(&test.half, 1);
    bindings.add(test.b);
    int bias = bindings.add(test.bias);
    int addend = bindings.add(test.addend);
    bindings.addResult(n);
    MatmulProblem problem =
        matmulProblem(bindings.common(bias, addend, Activation::kNone), 1, n, 1);
    ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
    std::vector<uint16_t> got = bindings.resultBits();
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(got[j], test.expected[j])
          << "element " << j << " (hex " << std::hex << got[j] << " vs " << test.expected[j] << ")";
  }
}

// Fails if ReLU turns a NaN (what poisoned memory reads as) into 0 and so hides it.
TEST(MatmulReferenceTest, ReluPropagatesNan) {
  Bindings bindings(kF32);
  const float a[] = {1.0f};
  const float b[] = {-1.0f, 2.0f, std::nanf(""), -3.0f};
  bindings.add(a);
  bindings.add(b);
  bindings.addResult(4);
  MatmulProblem problem = matmulProblem(bindings.common(-1, -1, Activation::kRelu), 1, 4, 1);
  ASSERT_TRUE(runMatmulReference(problem, bindings.addresses()).ok());
  std::vector<float> got = bindings.result();
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], 2.0f);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_EQ(got[3], 0.0f);
}

// ---------------------------------------------------------------------------------------------
// cudnn.convolution against PyTorch
// ---------------------------------------------------------------------------------------------

// Fails if strides, dilations or the asymmetric pads (top 1, bottom 2, left 0, right 1) place the
// window wrongly, or the bias is not per output channel.
TEST(ConvolutionReferenceTest, StridesDilationsAndAsymmetricPads) {
  std::vector<int64_t> x = {2, 3, 9, 11}, w = {4, 3, 3, 3}, y = {2, 4, 4, 4};
  EXPECT_FIXTURE_SIZE(fixtures::kConvStridedDilatedPaddedX, product(x));
  EXPECT_FIXTURE_SIZE(fixtures::kConvStridedDilatedPaddedY, product(y));
  Bindings bindings(kF32);
  bindings.add(fixtures::kConvStridedDilatedPaddedX);
  bindings.add(fixtures::kConvStridedDilatedPaddedW);
  int bias = bindings.add(fixtures::kConvStridedDilatedPaddedBias);
  bindings.addResult(product(y));
  ConvolutionProblem problem = convolutionProblem(bindings.common(bias, -1, Activation::kNone), x,
                                                  w, y, {2, 2}, {2, 2}, {1, 0}, {2, 1}, 1);
  ASSERT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kConvStridedDilatedPaddedY, product(y), kF32),
             kF32Tolerance);
}

// Fails if a group reads another group's channels or weights, or bias, addend or ReLU is lost.
TEST(ConvolutionReferenceTest, GroupsWithBiasAddendAndRelu) {
  std::vector<int64_t> x = {1, 4, 7, 7}, w = {6, 2, 3, 3}, y = {1, 6, 7, 7};
  EXPECT_FIXTURE_SIZE(fixtures::kConvGroupsW, product(w));
  EXPECT_FIXTURE_SIZE(fixtures::kConvGroupsY, product(y));
  Bindings bindings(kF32);
  bindings.add(fixtures::kConvGroupsX);
  bindings.add(fixtures::kConvGroupsW);
  int bias = bindings.add(fixtures::kConvGroupsBias);
  int addend = bindings.add(fixtures::kConvGroupsAddend);
  bindings.addResult(product(y));
  ConvolutionProblem problem = convolutionProblem(bindings.common(bias, addend, Activation::kRelu),
                                                  x, w, y, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2);
  ASSERT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kConvGroupsY, product(y), kF32), kF32Tolerance);
}

// Fails if a depthwise convolution (one channel per group) or pads only at the start go wrong.
TEST(ConvolutionReferenceTest, Depthwise) {
  std::vector<int64_t> x = {1, 5, 8, 8}, w = {5, 1, 3, 3}, y = {1, 5, 4, 4};
  EXPECT_FIXTURE_SIZE(fixtures::kConvDepthwiseX, product(x));
  EXPECT_FIXTURE_SIZE(fixtures::kConvDepthwiseY, product(y));
  Bindings bindings(kF32);
  bindings.add(fixtures::kConvDepthwiseX);
  bindings.add(fixtures::kConvDepthwiseW);
  bindings.addResult(product(y));
  ConvolutionProblem problem = convolutionProblem(bindings.common(-1, -1, Activation::kNone), x, w,
                                                  y, {2, 2}, {1, 1}, {1, 1}, {0, 0}, 5);
  ASSERT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kConvDepthwiseY, product(y), kF32),
             kF32Tolerance);
}

// Fails if the depth dimension of an NCDHW convolution is mishandled.
TEST(ConvolutionReferenceTest, ThreeDimensional) {
  std::vector<int64_t> x = {1, 2, 5, 6, 7}, w = {3, 2, 2, 3, 3}, y = {1, 3, 5, 3, 5};
  EXPECT_FIXTURE_SIZE(fixtures::kConv3dX, product(x));
  EXPECT_FIXTURE_SIZE(fixtures::kConv3dY, product(y));
  Bindings bindings(kF32);
  bindings.add(fixtures::kConv3dX);
  bindings.add(fixtures::kConv3dW);
  int bias = bindings.add(fixtures::kConv3dBias);
  bindings.addResult(product(y));
  ConvolutionProblem problem =
      convolutionProblem(bindings.common(bias, -1, Activation::kRelu), x, w, y, {1, 2, 1},
                         {1, 1, 2}, {1, 0, 1}, {0, 1, 1}, 1);
  ASSERT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kConv3dY, product(y), kF32), kF32Tolerance);
}

// Fails if a 1-D convolution, which arrives as 2-D over a unit height, is computed wrongly.
TEST(ConvolutionReferenceTest, OneDimensionalAsUnitHeight) {
  std::vector<int64_t> x = {2, 3, 1, 20}, w = {4, 3, 1, 5}, y = {2, 4, 1, 5};
  EXPECT_FIXTURE_SIZE(fixtures::kConv1dX, product(x));
  EXPECT_FIXTURE_SIZE(fixtures::kConv1dY, product(y));
  Bindings bindings(kF32);
  bindings.add(fixtures::kConv1dX);
  bindings.add(fixtures::kConv1dW);
  int addend = bindings.add(fixtures::kConv1dAddend);
  bindings.addResult(product(y));
  ConvolutionProblem problem = convolutionProblem(bindings.common(-1, addend, Activation::kNone), x,
                                                  w, y, {1, 3}, {1, 2}, {0, 2}, {0, 1}, 1);
  ASSERT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
  expectNear(bindings.result(), asFloats(fixtures::kConv1dY, product(y), kF32), kF32Tolerance);
}

// Fails if f16 or bf16 convolutions misread their operands or misround the result.
TEST(ConvolutionReferenceTest, ComputesF16AndBf16) {
  std::vector<int64_t> x = {1, 4, 6, 6}, w = {6, 2, 3, 3}, y = {1, 6, 6, 6};
  struct Case {
    kiln_element_type_t type;
    const uint16_t *x, *w, *bias, *addend, *y;
    Tolerance tolerance;
  };
  EXPECT_FIXTURE_SIZE(fixtures::kConvF16Y, product(y));
  EXPECT_FIXTURE_SIZE(fixtures::kConvBf16Y, product(y));
  for (const Case &test :
       {Case{kF16, fixtures::kConvF16X, fixtures::kConvF16W, fixtures::kConvF16Bias,
             fixtures::kConvF16Addend, fixtures::kConvF16Y, kF16Tolerance},
        Case{kBf16, fixtures::kConvBf16X, fixtures::kConvBf16W, fixtures::kConvBf16Bias,
             fixtures::kConvBf16Addend, fixtures::kConvBf16Y, kBf16Tolerance}}) {
    SCOPED_TRACE(test.type == kF16 ? "f16" : "bf16");
    Bindings bindings(test.type);
    bindings.add(test.x, product(x));
    bindings.add(test.w, product(w));
    int bias = bindings.add(test.bias, 6);
    int addend = bindings.add(test.addend, product(y));
    bindings.addResult(product(y));
    ConvolutionProblem problem =
        convolutionProblem(bindings.common(bias, addend, Activation::kRelu), x, w, y, {1, 1},
                           {1, 1}, {1, 1}, {1, 1}, 2);
    ASSERT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
    expectNear(bindings.result(), asFloats(test.y, product(y), test.type), test.tolerance);
  }
}

// ---------------------------------------------------------------------------------------------
// cudnn.convolution: sizes
// ---------------------------------------------------------------------------------------------

/// A 2-D convolution + bias + addend, then ReLU, in float64, with the sum of |terms|.
void convolveInFloat64(const ConvolutionProblem &problem, const std::vector<float> &x,
                       const std::vector<float> &w, const std::vector<float> &bias,
                       const std::vector<float> &addend, std::vector<float> *out,
                       std::vector<double> *magnitudes) {
  const std::vector<int64_t> &xd = problem.x_dims, &wd = problem.w_dims, &yd = problem.y_dims;
  int64_t group_channels = wd[1], group_features = wd[0] / problem.groups;
  for (int64_t n = 0; n < yd[0]; ++n)
    for (int64_t f = 0; f < yd[1]; ++f)
      for (int64_t oh = 0; oh < yd[2]; ++oh)
        for (int64_t ow = 0; ow < yd[3]; ++ow) {
          double sum = 0, magnitude = 0;
          int64_t group = f / group_features;
          for (int64_t c = 0; c < group_channels; ++c)
            for (int64_t kh = 0; kh < wd[2]; ++kh)
              for (int64_t kw = 0; kw < wd[3]; ++kw) {
                int64_t ih =
                    oh * problem.strides[0] - problem.pads_begin[0] + kh * problem.dilations[0];
                int64_t iw =
                    ow * problem.strides[1] - problem.pads_begin[1] + kw * problem.dilations[1];
                if (ih < 0 || ih >= xd[2] || iw < 0 || iw >= xd[3])
                  continue;
                double term =
                    double{
                        x[((n * xd[1] + group * group_channels + c) * xd[2] + ih) * xd[3] + iw]} *
                    w[((f * group_channels + c) * wd[2] + kh) * wd[3] + kw];
                sum += term;
                magnitude += std::fabs(term);
              }
          int64_t index = ((n * yd[1] + f) * yd[2] + oh) * yd[3] + ow;
          sum = sum + bias[f] + addend[index];
          out->push_back(static_cast<float>(std::max(sum, 0.0)));
          magnitudes->push_back(magnitude + std::fabs(bias[f]) + std::fabs(addend[index]));
        }
}

// Fails if the threads, the pixel tiles, the chunks of output channels, the depth blocks or
// partial panels go wrong at ResNet-like sizes (each problem is millions of multiply-adds).
/// `values` of an (outer, channels, planes) tensor reordered to (outer, planes, channels).
template <typename T>
std::vector<T> toChannelsLast(const std::vector<T> &values, int64_t outer, int64_t channels,
                              int64_t planes) {
  std::vector<T> reordered(values.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < planes; ++p)
        reordered[(o * planes + p) * channels + c] = values[(o * channels + c) * planes + p];
  return reordered;
}

// Fails if a channels-last call reads x, w or the addend, or writes y, in any order but
// N spatial... C (K spatial... C/groups): its result must be the channels-first call's,
// reordered, bit for bit (the same sums in the same order).
TEST(ConvolutionReferenceTest, ChannelsLastIsTheChannelsFirstResultReordered) {
  for (kiln_element_type_t type : {kF32, kF16, kBf16}) {
    for (int64_t groups : {1, 2}) {
      SCOPED_TRACE(std::string(type == kF32   ? "f32"
                               : type == kF16 ? "f16"
                                              : "bf16") +
                   ", groups " + std::to_string(groups));
      const std::vector<int64_t> x = {2, 4, 9, 7}, w = {6, 4 / groups, 3, 2}, y = {2, 6, 4, 8};
      auto encode = [&](const std::vector<float> &values) {
        std::vector<uint16_t> bits;
        for (float value : values)
          bits.push_back(type == kF16 ? ::kiln::contract::floatToHalf(value)
                                      : ::kiln::contract::floatToBf16(value));
        return bits;
      };
      auto run = [&](bool last) {
        std::vector<float> xv = seededValues(product(x), 1), wv = seededValues(product(w), 2),
                           bias = seededValues(6, 3), addend = seededValues(product(y), 4);
        if (last) {
          xv = toChannelsLast(xv, x[0], x[1], x[2] * x[3]);
          wv = toChannelsLast(wv, w[0], w[1], w[2] * w[3]);
          addend = toChannelsLast(addend, y[0], y[1], y[2] * y[3]);
        }
        Bindings bindings(type);
        int b = -1, a = -1;
        if (type == kF32) {
          bindings.add(xv);
          bindings.add(wv);
          b = bindings.add(bias);
          a = bindings.add(addend);
        } else {
          bindings.add(encode(xv));
          bindings.add(encode(wv));
          b = bindings.add(encode(bias));
          a = bindings.add(encode(addend));
        }
        bindings.addResult(product(y));
        ConvolutionProblem problem =
            convolutionProblem(bindings.common(b, a, Activation::kRelu), x, w, y, {2, 1}, {1, 2},
                               {1, 2}, {0, 1}, groups);
        problem.channels_last = last;
        EXPECT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
        return bindings.result();
      };
      std::vector<float> first = run(false), last = run(true);
      std::vector<float> expected = toChannelsLast(first, y[0], y[1], y[2] * y[3]);
      ASSERT_EQ(last.size(), expected.size());
      int nonzero = 0;
      for (size_t i = 0; i < last.size(); ++i) {
        ASSERT_EQ(last[i], expected[i]) << "element " << i;
        nonzero += last[i] != 0.0f;
      }
      // ReLU keeps about half: the comparison is not of zeros.
      EXPECT_GT(nonzero, static_cast<int>(last.size()) / 4);
    }
  }
}

TEST(ConvolutionReferenceTest, LargeProblemsMatchFloat64Loops) {
  struct Shape {
    std::vector<int64_t> x, w, y, strides, pads;
    int64_t groups;
  };
  const Shape shapes[] = {
      // Two images, several pixel tiles each.
      {{2, 16, 24, 24}, {64, 16, 3, 3}, {2, 64, 24, 24}, {1, 1}, {1, 1}, 1},
      // One 7x7 image: the output channels are split between the threads.
      {{1, 64, 7, 7}, {256, 64, 3, 3}, {1, 256, 7, 7}, {1, 1}, {1, 1}, 1},
      // Strided, grouped, 1x1 pads on a 15x15 image.
      {{1, 32, 15, 15}, {96, 16, 3, 3}, {1, 96, 8, 8}, {2, 2}, {1, 1}, 2},
  };
  for (const Shape &shape : shapes) {
    SCOPED_TRACE("w " + std::to_string(shape.w[0]) + "x" + std::to_string(shape.w[1]));
    Bindings bindings(kF32);
    std::vector<float> x = seededValues(product(shape.x), 5);
    std::vector<float> w = seededValues(product(shape.w), 6);
    std::vector<float> bias = seededValues(shape.w[0], 7);
    std::vector<float> addend = seededValues(product(shape.y), 8);
    bindings.add(x);
    bindings.add(w);
    int bias_binding = bindings.add(bias);
    int addend_binding = bindings.add(addend);
    bindings.addResult(product(shape.y));
    ConvolutionProblem problem = convolutionProblem(
        bindings.common(bias_binding, addend_binding, Activation::kRelu), shape.x, shape.w, shape.y,
        shape.strides, {1, 1}, shape.pads, shape.pads, shape.groups);
    ASSERT_TRUE(runConvolutionReference(problem, bindings.addresses()).ok());
    std::vector<float> expected;
    std::vector<double> magnitudes;
    convolveInFloat64(problem, x, w, bias, addend, &expected, &magnitudes);
    expectNearFloat64(bindings.result(), expected, magnitudes);
  }
}

// ---------------------------------------------------------------------------------------------
// What cannot be computed
// ---------------------------------------------------------------------------------------------

/// Expects `status` to be INVALID_ARGUMENT naming the call and saying `what`.
void expectInvalid(const kiln::Status &status, const std::string &what) {
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT) << status.message();
  EXPECT_THAT(status.message(), HasSubstr(kLabel));
  EXPECT_THAT(status.message(), HasSubstr(what));
}

// Fails if an element type the references do not compute is computed anyway (as garbage).
TEST(LibraryReferenceErrorsTest, UnsupportedElementTypeIsInvalidArgument) {
  Bindings bindings(kF32);
  const float one[] = {1.0f};
  bindings.add(one);
  bindings.add(one);
  bindings.addResult(1);
  MatmulProblem matmul = matmulProblem(bindings.common(-1, -1, Activation::kNone), 1, 1, 1);
  matmul.common.element_type = KILN_ELEMENT_TYPE_F64;
  expectInvalid(runMatmulReference(matmul, bindings.addresses()), "f64");
  ConvolutionProblem convolution =
      convolutionProblem(bindings.common(-1, -1, Activation::kNone), {1, 1, 1, 1}, {1, 1, 1, 1},
                         {1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1);
  convolution.common.element_type = KILN_ELEMENT_TYPE_I8;
  expectInvalid(runConvolutionReference(convolution, bindings.addresses()), "i8");
}

// Fails if shapes the convolution cannot be (rank 3, mismatched groups, a wrong output size) or
// an epilogue cuDNN does not fuse (GELU) are computed anyway.
TEST(LibraryReferenceErrorsTest, ConvolutionShapesAndEpilogueAreChecked) {
  Bindings bindings(kF32);
  std::vector<float> values(64, 1.0f);
  bindings.add(values);
  bindings.add(values);
  bindings.addResult(64);
  CudaCallCommon common = bindings.common(-1, -1, Activation::kNone);
  expectInvalid(runConvolutionReference(convolutionProblem(common, {1, 2, 8}, {2, 2, 1}, {1, 2, 8},
                                                           {1}, {1}, {0}, {0}, 1),
                                        bindings.addresses()),
                "rank 4 or 5");
  expectInvalid(
      runConvolutionReference(convolutionProblem(common, {1, 4, 2, 2}, {4, 3, 1, 1}, {1, 4, 2, 2},
                                                 {1, 1}, {1, 1}, {0, 0}, {0, 0}, 2),
                              bindings.addresses()),
      "group");
  expectInvalid(
      runConvolutionReference(convolutionProblem(common, {1, 4, 2, 2}, {4, 4, 1, 1}, {1, 4, 3, 2},
                                                 {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1),
                              bindings.addresses()),
      "spatial dims");
  common.epilogue.activation = Activation::kGelu;
  expectInvalid(
      runConvolutionReference(convolutionProblem(common, {1, 4, 2, 2}, {4, 4, 1, 1}, {1, 4, 2, 2},
                                                 {1, 1}, {1, 1}, {0, 0}, {0, 0}, 1),
                              bindings.addresses()),
      "GELU");
}

// Fails if an address less aligned than the call was prepared for goes unnoticed (the real
// libraries' kernels would fault or compute garbage).
TEST(LibraryReferenceErrorsTest, MisalignedBindingIsInvalidArgument) {
  Bindings bindings(kF32);
  std::vector<float> values(8, 1.0f);
  bindings.add(values);
  bindings.add(values);
  bindings.addResult(4);
  MatmulProblem problem = matmulProblem(bindings.common(-1, -1, Activation::kNone), 2, 2, 2);
  void *addresses[3];
  std::copy(bindings.addresses(), bindings.addresses() + 3, addresses);
  addresses[1] = static_cast<float *>(addresses[1]) + 1; // 4-byte aligned, 16 assumed
  expectInvalid(runMatmulReference(problem, addresses), "binding 1");
}

} // namespace
