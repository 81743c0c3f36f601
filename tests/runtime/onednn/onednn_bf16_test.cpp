//===- onednn_bf16_test.cpp - bf16 oneDNN calls against naive loops -------===//
//
// bf16 convolutions and matmuls (what kiln-select-cpu-library-calls emits with native-bf16): the
// inputs are seeded values rounded to bf16, the reference is a double loop over those same
// rounded values, and the call's bf16 result must be within bf16's rounding of it (oneDNN's bf16
// kernels accumulate in f32 and round once): 1e-2 relative plus 1e-2 absolute. The epilogues
// are those half-precision models take: bias, residual sum, binary add, ReLU.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "contract/half_conversions.h"
#include "tests/runtime/onednn/onednn_test_util.h"

namespace kiln::testing {
namespace {

using kiln::artifact::BufferKind;
using kiln::contract::bf16ToFloat;
using kiln::contract::floatToBf16;

constexpr int kBf16 = KILN_ELEMENT_TYPE_BF16;

/// Seeded values rounded to bf16: the bits the call reads and the floats the reference reads.
struct Bf16Tensor {
  Bf16Tensor(const std::vector<int64_t> &dims, uint32_t seed) {
    for (float value : randomValues(dims, seed)) {
      bits.push_back(floatToBf16(value));
      values.push_back(bf16ToFloat(bits.back()));
    }
  }
  std::vector<uint16_t> bits;
  std::vector<float> values;
};

std::vector<float> toFloats(const std::vector<uint16_t> &bits) {
  std::vector<float> values;
  for (uint16_t b : bits)
    values.push_back(bf16ToFloat(b));
  return values;
}

// Fails if bf16 descriptors are not used for every binding (f32 bytes read as bf16 or back
// give garbage), or the bias, the residual sum or ReLU is lost.
TEST(OneDnnBf16Test, ConvolutionWithBiasResidualAndRelu) {
  const std::vector<int64_t> x_dims = {2, 16, 9, 9}, w_dims = {32, 16, 3, 3},
                             y_dims = {2, 32, 9, 9};
  Bf16Tensor x(x_dims, 1), w(w_dims, 2), bias({32}, 3), addend(y_dims, 4);
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding(x_dims, BufferKind::Arena, 0, kBf16)
      .binding(w_dims, BufferKind::Arena, 0, kBf16)
      .binding({32}, BufferKind::Arena, 0, kBf16)
      .binding(y_dims, BufferKind::Arena, 0, kBf16)
      .binding(y_dims, BufferKind::Output, 0, kBf16)
      .ints("strides", {1, 1})
      .ints("dilations", {1, 1})
      .ints("pads_begin", {1, 1})
      .ints("pads_end", {1, 1})
      .ints("groups", {1})
      .strings("post_ops", {"add", "relu"});
  auto kernel = prepare(builder.build());
  ASSERT_NE(kernel, nullptr);
  std::vector<uint16_t> y(numElements(y_dims), 0xFFFF);
  std::vector<void *> buffers{x.bits.data(), w.bits.data(), bias.bits.data(), addend.bits.data(),
                              y.data()};
  kiln::Status status = kernel->run(buffers.data());
  ASSERT_TRUE(status.ok()) << status.toString();

  std::vector<float> expected(y.size());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 32; ++k)
      for (int64_t i = 0; i < 9; ++i)
        for (int64_t j = 0; j < 9; ++j) {
          double sum = bias.values[k];
          for (int64_t c = 0; c < 16; ++c)
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t s = 0; s < 3; ++s) {
                int64_t ii = i + r - 1, jj = j + s - 1;
                if (ii < 0 || ii >= 9 || jj < 0 || jj >= 9)
                  continue;
                sum += static_cast<double>(x.values[((n * 16 + c) * 9 + ii) * 9 + jj]) *
                       w.values[((k * 16 + c) * 3 + r) * 3 + s];
              }
          int64_t at = ((n * 32 + k) * 9 + i) * 9 + j;
          expected[at] = static_cast<float>(std::max(sum + addend.values[at], 0.0));
        }
  expectClose(toFloats(y), expected, 1e-2f, 1e-2f);
}

// Fails if a bf16 constant b is packed from the wrong offset (its offset counts bf16 elements)
// or with f32 descriptors, if trans_b is lost, or a broadcast binary add is read as f32.
TEST(OneDnnBf16Test, MatmulWithConstantTransposedBAndBroadcastAdd) {
  const int64_t m = 24, k = 40, n = 16;
  Bf16Tensor a({2, m, k}, 5), b({n, k}, 6), row({n}, 7);
  constexpr uint64_t kOffset = 128;
  std::vector<uint8_t> constants(kOffset + b.bits.size() * 2, 0);
  std::memcpy(constants.data() + kOffset, b.bits.data(), b.bits.size() * 2);
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({2, m, k}, BufferKind::Arena, 0, kBf16)
      .binding({n, k}, BufferKind::Constant, kOffset, kBf16)
      .binding({n}, BufferKind::Arena, 0, kBf16)
      .binding({2, m, n}, BufferKind::Output, 0, kBf16)
      .ints("trans_b", {1})
      .strings("post_ops", {"relu", "add"});
  auto kernel = prepare(builder.build(), constants.data());
  ASSERT_NE(kernel, nullptr);
  std::fill(constants.begin(), constants.end(), 0xFF); // packed at load time
  std::vector<uint16_t> d(2 * m * n, 0xFFFF);
  std::vector<void *> buffers{a.bits.data(), nullptr, row.bits.data(), d.data()};
  kiln::Status status = kernel->run(buffers.data());
  ASSERT_TRUE(status.ok()) << status.toString();

  std::vector<float> expected(d.size());
  for (int64_t batch = 0; batch < 2; ++batch)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += static_cast<double>(a.values[(batch * m + i) * k + p]) * b.values[j * k + p];
        expected[(batch * m + i) * n + j] = static_cast<float>(std::max(sum, 0.0)) + row.values[j];
      }
  expectClose(toFloats(d), expected, 1e-2f, 1e-2f);
}

// Fails if a bf16 product writing f32 (a cast joined to the call) reads its f32 addend or writes
// its f32 result with bf16 descriptors. The result is not rounded to bf16: f32 tolerances.
TEST(OneDnnBf16Test, MatmulWritesF32WithAnF32Residual) {
  const int64_t m = 16, k = 48, n = 24;
  Bf16Tensor a({m, k}, 8), b({k, n}, 9), bias({n}, 10);
  std::vector<float> residual = randomValues({m, n}, 11);
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({m, k}, BufferKind::Arena, 0, kBf16)
      .binding({k, n}, BufferKind::Arena, 0, kBf16)
      .binding({n}, BufferKind::Arena, 0, kBf16)
      .binding({m, n})
      .binding({m, n}, BufferKind::Output)
      .strings("post_ops", {"add"});
  auto kernel = prepare(builder.build());
  ASSERT_NE(kernel, nullptr);
  std::vector<float> d(m * n, -1.0f);
  std::vector<void *> buffers{a.bits.data(), b.bits.data(), bias.bits.data(), residual.data(),
                              d.data()};
  kiln::Status status = kernel->run(buffers.data());
  ASSERT_TRUE(status.ok()) << status.toString();
  std::vector<float> expected(d.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias.values[j];
      for (int64_t p = 0; p < k; ++p)
        sum += static_cast<double>(a.values[i * k + p]) * b.values[p * n + j];
      expected[i * n + j] = static_cast<float>(sum) + residual[i * n + j];
    }
  expectClose(d, expected, 1e-4f, 1e-4f);
}

} // namespace
} // namespace kiln::testing
