//===- onednn_matmul_test.cpp - onednn.matmul against a naive loop ----------===//
//
// Each case runs the library call on seeded random data (values in [-1, 1), none zero) and
// compares it with a triple loop accumulated in double, batch dimensions broadcast NumPy-style.
// Tolerance: 1e-4 absolute plus 1e-4 relative (contractions of at most 64 products of
// magnitude < 1 in f32).
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <ostream>

#include "tests/runtime/onednn/onednn_test_util.h"

namespace kiln::testing {
namespace {

using kiln::artifact::BufferKind;

struct MatmulCase {
  std::string name;
  std::vector<int64_t> a, b;  // as stored (before the transposes)
  bool trans_a = false, trans_b = false;
  bool bias = false;
  std::vector<std::string> post_ops;
  std::vector<float> post_op_args;
  std::vector<std::vector<int64_t>> addends;
  bool constant_b = false;
  /// The destination is the first addend's buffer (the memory plan's in_place pair).
  bool in_place = false;
};

/// Names the case in failure messages.
void PrintTo(const MatmulCase& c, std::ostream* os) { *os << c.name; }

std::vector<int64_t> outputDims(const MatmulCase& c) {
  size_t rank = std::max(c.a.size(), c.b.size());
  std::vector<int64_t> a = padRank(c.a, rank), b = padRank(c.b, rank), dims;
  for (size_t d = 0; d + 2 < rank; ++d) dims.push_back(std::max(a[d], b[d]));
  dims.push_back(c.trans_a ? a[rank - 1] : a[rank - 2]);
  dims.push_back(c.trans_b ? b[rank - 2] : b[rank - 1]);
  return dims;
}

std::vector<float> referenceMatmul(const MatmulCase& c, const std::vector<float>& a_data,
                                   const std::vector<float>& b_data,
                                   const std::vector<float>& bias) {
  std::vector<int64_t> dst = outputDims(c);
  size_t rank = dst.size();
  std::vector<int64_t> a = padRank(c.a, rank), b = padRank(c.b, rank);
  int64_t m_size = dst[rank - 2], n_size = dst[rank - 1];
  int64_t k_size = c.trans_a ? a[rank - 2] : a[rank - 1];
  int64_t batches = numElements(dst) / (m_size * n_size);
  std::vector<float> out(numElements(dst));
  std::vector<int64_t> index(rank - 2);
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t rest = batch;
    for (int d = static_cast<int>(rank) - 3; d >= 0; --d) {
      index[d] = rest % dst[d];
      rest /= dst[d];
    }
    int64_t a_batch = 0, b_batch = 0;
    for (size_t d = 0; d + 2 < rank; ++d) {
      a_batch = a_batch * a[d] + (a[d] == 1 ? 0 : index[d]);
      b_batch = b_batch * b[d] + (b[d] == 1 ? 0 : index[d]);
    }
    const float* a_matrix = a_data.data() + a_batch * a[rank - 2] * a[rank - 1];
    const float* b_matrix = b_data.data() + b_batch * b[rank - 2] * b[rank - 1];
    for (int64_t m = 0; m < m_size; ++m)
      for (int64_t n = 0; n < n_size; ++n) {
        double acc = c.bias ? bias[n] : 0.0;
        for (int64_t k = 0; k < k_size; ++k) {
          float lhs = c.trans_a ? a_matrix[k * m_size + m] : a_matrix[m * k_size + k];
          float rhs = c.trans_b ? b_matrix[n * k_size + k] : b_matrix[k * n_size + n];
          acc += double(lhs) * rhs;
        }
        out[(batch * m_size + m) * n_size + n] = float(acc);
      }
  }
  return out;
}

class MatmulTest : public ::testing::TestWithParam<MatmulCase> {};

// A wrong result here means a transposed operand's strides, the batch broadcast, the bias or a
// post-op reaches oneDNN with another meaning than the graph op's.
TEST_P(MatmulTest, MatchesNaiveMatmul) {
  const MatmulCase& c = GetParam();
  constexpr uint64_t kOffset = 64;
  std::vector<float> a = randomValues(c.a, 3), b = randomValues(c.b, 4);
  std::vector<float> bias;
  std::vector<std::vector<float>> addends;
  std::vector<int64_t> dst_dims = outputDims(c);

  LibraryCallBuilder builder("onednn.matmul");
  builder.binding(c.a);
  builder.binding(c.b, c.constant_b ? BufferKind::Constant : BufferKind::Arena,
                  c.constant_b ? kOffset : 0);
  if (c.bias) {
    bias = randomValues({dst_dims.back()}, 5);
    builder.binding({dst_dims.back()});
  }
  std::vector<std::pair<std::vector<int64_t>, const float*>> addend_refs;
  for (size_t i = 0; i < c.addends.size(); ++i) {
    addends.push_back(randomValues(c.addends[i], 6 + i));
    builder.binding(c.addends[i]);
  }
  for (size_t i = 0; i < c.addends.size(); ++i)
    addend_refs.emplace_back(c.addends[i], addends[i].data());
  builder.binding(dst_dims, BufferKind::Output);
  builder.ints("trans_a", {c.trans_a}).ints("trans_b", {c.trans_b});
  if (!c.post_ops.empty()) builder.strings("post_ops", c.post_ops);
  if (!c.post_op_args.empty()) builder.floats("post_op_args", c.post_op_args);

  std::vector<uint8_t> constants;
  if (c.constant_b) {
    constants.assign(kOffset + b.size() * sizeof(float), 0);
    std::memcpy(constants.data() + kOffset, b.data(), b.size() * sizeof(float));
  }
  auto kernel = prepare(builder.build(), c.constant_b ? constants.data() : nullptr);
  ASSERT_NE(kernel, nullptr);
  // A constant b is packed at load time: the kernel must not read the constants again.
  std::fill(constants.begin(), constants.end(), 0xFF);

  std::vector<float> expected = referenceMatmul(c, a, b, bias);
  applyPostOps(&expected, dst_dims, c.post_ops, c.post_op_args, addend_refs);
  std::vector<float> dst(expected.size(), std::numeric_limits<float>::quiet_NaN());
  std::vector<void*> buffers{a.data(), b.data()};
  if (c.bias) buffers.push_back(bias.data());
  for (auto& addend : addends) buffers.push_back(addend.data());
  buffers.push_back(c.in_place ? addends.front().data() : dst.data());
  kiln::Status status = kernel->run(buffers.data());
  ASSERT_TRUE(status.ok()) << status.toString();
  expectClose(c.in_place ? addends.front() : dst, expected, 1e-4f, 1e-4f);
}

// Gemm's alpha * A * B + beta * C is encoded as post-ops linear(alpha / beta), add C,
// linear(beta), since oneDNN cannot scale a binary operand; the cases below check that encoding.
INSTANTIATE_TEST_SUITE_P(
    OneDnn, MatmulTest,
    ::testing::Values(
        MatmulCase{"Plain2d", {7, 13}, {13, 5}, false, false, false, {}, {}, {}, false},
        MatmulCase{"TransposedBothConstantBiasRelu",
                   {13, 7},
                   {5, 13},
                   true,
                   true,
                   true,
                   {"relu"},
                   {},
                   {},
                   true},
        MatmulCase{"TransposedA", {9, 4}, {9, 6}, true, false, false, {}, {}, {}, false},
        MatmulCase{
            "BatchedWithSharedWeights", {2, 3, 4, 6}, {6, 5}, false, false, true, {}, {}, {}, true},
        MatmulCase{"BatchedSameRank", {3, 4, 6}, {3, 6, 5}, false, false, false, {}, {}, {}, false},
        MatmulCase{"BatchedBroadcastBothSides",
                   {3, 1, 4, 6},
                   {1, 2, 6, 5},
                   false,
                   false,
                   false,
                   {},
                   {},
                   {},
                   false},
        MatmulCase{
            "BatchedTransposedB", {2, 4, 8}, {2, 5, 8}, false, true, false, {}, {}, {}, false},
        MatmulCase{"GemmAlphaBetaColumnAddend",
                   {4, 8},
                   {5, 8},
                   false,
                   true,
                   false,
                   {"linear", "add", "linear"},
                   {0.5f / 2.0f, 0.0f, 2.0f, 0.0f},
                   {{4, 1}},
                   true},
        MatmulCase{"GemmAlphaFullAddend",
                   {4, 8},
                   {8, 5},
                   false,
                   false,
                   false,
                   {"linear", "add"},
                   {1.5f, 0.0f},
                   {{4, 5}},
                   true},
        MatmulCase{"LinearThenLastAxisAdd",
                   {4, 8},
                   {8, 5},
                   false,
                   false,
                   false,
                   {"linear", "add"},
                   {1.5f, 0.0f},
                   {{5}},
                   true},
        MatmulCase{"BatchedReluThenLastAxisAddThenScalarAdd",
                   {2, 4, 8},
                   {8, 5},
                   false,
                   false,
                   false,
                   {"relu", "add", "add"},
                   {},
                   {{5}, {}},
                   false},
        MatmulCase{"ResidualAddThenClip",
                   {2, 16, 32},
                   {32, 64},
                   false,
                   false,
                   true,
                   {"add", "clip"},
                   {-0.5f, 2.0f},
                   {{2, 16, 64}},
                   true},
        // The residual is a sum post-op: written over in place, or copied first.
        MatmulCase{"ResidualInPlace",
                   {2, 16, 48},
                   {48, 32},
                   false,
                   false,
                   true,
                   {"add"},
                   {},
                   {{2, 16, 32}},
                   true,
                   true},
        MatmulCase{"ResidualInPlaceThenGelu",
                   {16, 48},
                   {48, 32},
                   false,
                   false,
                   true,
                   {"add", "gelu_erf"},
                   {},
                   {{16, 32}},
                   true,
                   true},
        // A residual after another post-op stays a binary post-op.
        MatmulCase{"ReluThenResidual",
                   {16, 48},
                   {48, 32},
                   false,
                   false,
                   true,
                   {"relu", "add"},
                   {},
                   {{16, 32}},
                   true},
        // Weights without a batch are one 2-D product over every row (the batch folded into
        // the rows), with the addends folded alike: one per row, one per column, one per
        // element as a sum post-op.
        MatmulCase{"FoldedRowsWithPerRowAndPerColumnAddends",
                   {3, 4, 8},
                   {8, 5},
                   false,
                   false,
                   true,
                   {"add", "gelu_erf", "add"},
                   {},
                   {{3, 4, 1}, {5}},
                   true},
        MatmulCase{"FoldedRowsResidualInPlace",
                   {2, 3, 16, 48},
                   {48, 32},
                   false,
                   false,
                   true,
                   {"add", "relu"},
                   {},
                   {{2, 3, 16, 32}},
                   true,
                   true},
        // Not folded: an addend per batch entry but not per row, a transposed a, weights
        // with a batch of their own.
        MatmulCase{"PerBatchAddendKeepsTheBatch",
                   {2, 3, 4, 6},
                   {6, 5},
                   false,
                   false,
                   false,
                   {"add"},
                   {},
                   {{2, 1, 1, 5}},
                   true},
        MatmulCase{"TransposedAKeepsTheBatch",
                   {2, 6, 4},
                   {6, 5},
                   true,
                   false,
                   true,
                   {"relu"},
                   {},
                   {},
                   true},
        MatmulCase{"BatchedWeightsKeepTheBatch",
                   {2, 4, 6},
                   {2, 6, 5},
                   false,
                   false,
                   true,
                   {},
                   {},
                   {},
                   true}),
    [](const ::testing::TestParamInfo<MatmulCase> &info) { return info.param.name; });

//===----------------------------------------------------------------------===//
// Bad calls
//===----------------------------------------------------------------------===//

TEST(MatmulErrorsTest, ContractionSizesMustAgree) {
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({4, 8}).binding({7, 5}).binding({4, 5});
  std::string message = prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("library call 'onednn.matmul' (test call)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("contraction size 8 differs from b's 7"), std::string::npos) << message;
}

TEST(MatmulErrorsTest, TransposeHonoursContraction) {
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({4, 8}).binding({5, 8}).binding({4, 5}).ints("trans_b", {1});
  EXPECT_NE(prepare(builder.build()), nullptr);
  LibraryCallBuilder untransposed("onednn.matmul");
  untransposed.binding({4, 8}).binding({5, 8}).binding({4, 5});
  prepareError(untransposed.build(), KILN_STATUS_INVALID_ARGUMENT);
}

TEST(MatmulErrorsTest, BatchDimensionsMustBroadcast) {
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({3, 4, 8}).binding({2, 8, 5}).binding({3, 4, 5});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("batch dimension 0 of a (3) and b (2)"),
            std::string::npos);
}

TEST(MatmulErrorsTest, TransposeFlagsAreBooleans) {
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({4, 8}).binding({8, 5}).binding({4, 5}).ints("trans_a", {2});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT).find("0 or 1"),
            std::string::npos);
}

TEST(MatmulErrorsTest, BiasMustMatchN) {
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({4, 8}).binding({8, 5}).binding({4}).binding({4, 5});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("bias must have dims 5"),
            std::string::npos);
}

TEST(MatmulErrorsTest, OneDimensionalOperandsAreRefused) {
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({8}).binding({8, 5}).binding({5});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT).find("rank >= 2"),
            std::string::npos);
}

TEST(MatmulErrorsTest, TooSmallBufferIsRefused) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<kiln::artifact::Binding>> bindings;
  for (auto dims : {std::vector<int64_t>{4, 8}, {8, 5}, {4, 5}}) {
    kiln::artifact::BufferRef ref(BufferKind::Arena, 0, 0, 16);  // far below the tensor's size
    bindings.push_back(kiln::artifact::CreateBinding(
        fbb, &ref, kiln::artifact::CreateTensorTypeDirect(fbb, KILN_ELEMENT_TYPE_F32, &dims)));
  }
  fbb.Finish(kiln::artifact::CreateLibraryCallDirect(fbb, "onednn.matmul", &bindings));
  const auto* call = flatbuffers::GetRoot<kiln::artifact::LibraryCall>(fbb.GetBufferPointer());
  EXPECT_NE(prepareError(*call, KILN_STATUS_INVALID_ARGUMENT).find("needs 128 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
