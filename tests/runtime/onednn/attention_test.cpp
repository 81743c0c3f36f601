//===- attention_test.cpp - kiln.attention against a naive softmax ----------===//
//
// Each case runs the fused attention call on seeded random data (values in [-1, 1), none zero)
// and compares it with the unfused computation in double: the whole score row, its maximum, the
// exponentials, their sum, the weighted values. Tolerance: 2e-5 absolute plus 1e-4 relative
// (f32 products of at most 16 terms, a softmax over at most 600 keys).
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "runtime/src/cpu/attention.h"
#include "runtime/src/cpu/library_call.h"
#include "tests/runtime/onednn/onednn_test_util.h"

namespace kiln::testing {
namespace {

using runtime::cpu::LibraryCallKernel;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// A strided view: element (i_0, .., i_r-1) is data[offset + sum i_k strides[k]].
struct View {
  int64_t offset;
  std::vector<int64_t> dims, strides;

  std::vector<int64_t> encode() const {
    std::vector<int64_t> values{offset};
    values.insert(values.end(), dims.begin(), dims.end());
    values.insert(values.end(), strides.begin(), strides.end());
    return values;
  }
  /// The element at batch index `batch` (row-major over the leading dims), row i, column j.
  int64_t at(int64_t batch, int64_t i, int64_t j) const {
    size_t rank = dims.size();
    int64_t index = offset + i * strides[rank - 2] + j * strides[rank - 1];
    for (size_t d = rank - 2; d-- > 0;) {
      index += (batch % dims[d]) * strides[d];
      batch /= dims[d];
    }
    return index;
  }
};

struct Attention {
  std::vector<int64_t> q_dims, k_dims, v_dims, mask_dims, dst_dims; // the bindings
  View q, k, v, mask, dst;
  bool has_mask = false;
  float scale = 1.0f;
  /// The call's zero_masked_rows: a row whose scores are all -inf is zero, not NaN.
  bool zero_masked_rows = false;
  /// The call's kv_group: query heads per key and value head (1: no parameter).
  int64_t kv_group = 1;
  /// Whether the views are parameters (false: the call of a range artifact, set up per shape,
  /// which reads its bindings as they lie; the views above then describe that for the
  /// reference).
  bool views = true;
};

/// The unfused attention in double into `out` (dst's binding, other elements left as they are).
void reference(const Attention &c, const std::vector<float> &q, const std::vector<float> &k,
               const std::vector<float> &v, const std::vector<float> &mask,
               std::vector<float> *out) {
  size_t rank = c.dst.dims.size();
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < rank; ++d)
    batches *= c.dst.dims[d];
  int64_t sq = c.q.dims[rank - 2], depth = c.q.dims[rank - 1];
  int64_t skv = c.k.dims[rank - 1], dv = c.v.dims[rank - 1];
  std::vector<double> row(skv);
  for (int64_t b = 0; b < batches; ++b) {
    // The key and value batch index: the last batch index (the query head) divided by the group.
    int64_t kb = b;
    if (rank > 2) {
      int64_t heads = c.dst.dims[rank - 3];
      kb = b / heads * (heads / c.kv_group) + b % heads / c.kv_group;
    }
    for (int64_t i = 0; i < sq; ++i) {
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < skv; ++j) {
        double s = 0;
        for (int64_t t = 0; t < depth; ++t)
          s += double(q[c.q.at(b, i, t)]) * k[c.k.at(kb, t, j)];
        s *= c.scale;
        if (c.has_mask)
          s += mask[c.mask.at(b, i, j)];
        row[j] = s;
        max = std::max(max, s);
      }
      double sum = 0;
      for (int64_t j = 0; j < skv; ++j)
        sum += row[j] = std::exp(row[j] - max);
      for (int64_t t = 0; t < dv; ++t) {
        double acc = 0;
        for (int64_t j = 0; j < skv; ++j)
          acc += row[j] / sum * v[c.v.at(kb, j, t)];
        (*out)[c.dst.at(b, i, t)] = static_cast<float>(acc);
      }
    }
  }
}

/// Serializes `c` as a kiln.attention call (with `drop` left out of the parameters).
const kiln::artifact::LibraryCall &build(LibraryCallBuilder &builder, const Attention &c,
                                         const std::string &drop = "") {
  builder.binding(c.q_dims).binding(c.k_dims).binding(c.v_dims);
  if (c.has_mask)
    builder.binding(c.mask_dims);
  builder.binding(c.dst_dims);
  auto view = [&](const std::string &key, const View &v) {
    if (key != drop && c.views)
      builder.ints(key, v.encode());
  };
  view("q_view", c.q);
  view("k_view", c.k);
  view("v_view", c.v);
  if (c.has_mask)
    view("mask_view", c.mask);
  view("dst_view", c.dst);
  if (drop != "scale")
    builder.floats("scale", {c.scale});
  if (c.zero_masked_rows)
    builder.ints("zero_masked_rows", {1});
  if (c.kv_group != 1)
    builder.ints("kv_group", {c.kv_group});
  return builder.build();
}

std::unique_ptr<LibraryCallKernel>
prepareAttention(const kiln::artifact::LibraryCall &call,
                 const std::vector<std::vector<int64_t>> *run_dims = nullptr) {
  std::unique_ptr<LibraryCallKernel> kernel;
  kiln::Status status = runtime::cpu::createAttentionKernel(call, &kernel, run_dims);
  EXPECT_TRUE(status.ok()) << status.toString();
  return kernel;
}

std::string attentionError(const kiln::artifact::LibraryCall &call, kiln_status_code_t code) {
  std::unique_ptr<LibraryCallKernel> kernel;
  kiln::Status status = runtime::cpu::createAttentionKernel(call, &kernel);
  EXPECT_EQ(status.code(), code) << status.toString();
  EXPECT_EQ(kernel, nullptr);
  return status.message();
}

/// Runs `c` on random data (the mask from `make_mask` when it has one) and compares it with the
/// reference; rows listed in `nan_rows` (batch 0, every score -inf) must be NaN, or zero with
/// zero_masked_rows.
void check(const Attention &c, std::vector<float> mask = {},
           const std::vector<int64_t> &nan_rows = {},
           const std::vector<std::vector<int64_t>> *run_dims = nullptr) {
  LibraryCallBuilder builder("kiln.attention");
  std::unique_ptr<LibraryCallKernel> kernel = prepareAttention(build(builder, c), run_dims);
  ASSERT_NE(kernel, nullptr);
  std::vector<float> q = randomValues(c.q_dims, 1), k = randomValues(c.k_dims, 2),
                     v = randomValues(c.v_dims, 3);
  if (c.has_mask && mask.empty())
    mask = randomValues(c.mask_dims, 4);
  std::vector<float> dst(numElements(c.dst_dims), 7.0f), expected = dst;
  std::vector<void *> buffers{q.data(), k.data(), v.data()};
  if (c.has_mask)
    buffers.push_back(mask.data());
  buffers.push_back(dst.data());
  ASSERT_TRUE(kernel->run(buffers.data()).ok());
  EXPECT_TRUE(kernel->writes(buffers.size() - 1));
  EXPECT_FALSE(kernel->writes(0));
  reference(c, q, k, v, mask, &expected);
  size_t rank = c.dst.dims.size();
  for (int64_t row : nan_rows) {
    for (int64_t t = 0; t < c.dst.dims[rank - 1]; ++t) {
      int64_t at = c.dst.at(0, row, t);
      if (c.zero_masked_rows)
        EXPECT_EQ(dst[at], 0.0f) << "row " << row << " of scores all -inf";
      else
        EXPECT_TRUE(std::isnan(dst[at])) << "row " << row << " of scores all -inf: " << dst[at];
      EXPECT_TRUE(std::isnan(expected[at]));
      dst[at] = expected[at] = 1.0f;
    }
  }
  expectClose(dst, expected, 2e-5f, 1e-4f);
}

// BERT's form: Q, K and V are strided views of one fused projection [B, S, 3, H, D] (Kᵀ read
// with unit stride along D), the mask [B, 1, 1, S] broadcasts over heads and query rows, and
// the result is written as merged heads [B, S, H * D]. S = 100 is not a multiple of the 64-row
// query block.
TEST(AttentionTest, ReadsTheFusedProjectionAndWritesMergedHeads) {
  const int64_t B = 2, S = 100, H = 3, D = 16;
  const int64_t token = 3 * H * D, batch = S * token;
  Attention c;
  c.q_dims = c.k_dims = c.v_dims = {B, S, 3, H, D};
  c.mask_dims = {B, 1, 1, S};
  c.dst_dims = {B, S, H * D};
  c.q = {0, {B, H, S, D}, {batch, D, token, 1}};
  c.k = {H * D, {B, H, D, S}, {batch, D, 1, token}};
  c.v = {2 * H * D, {B, H, S, D}, {batch, D, token, 1}};
  c.mask = {0, {B, H, S, S}, {S, 0, 0, 1}};
  c.dst = {0, {B, H, S, D}, {S * H * D, D, H * D, 1}};
  c.has_mask = true;
  c.scale = 0.25f;
  // BERT's padding mask: the last 30 keys of batch entry 1 get -10000.
  std::vector<float> mask(B * S, 0.0f);
  for (int64_t j = S - 30; j < S; ++j)
    mask[S + j] = -10000.0f;
  check(c, mask);
}

// More keys than one block (600 = 256 + 256 + 88): the online softmax rescales the accumulated
// values between blocks. Q and V are stored transposed (read by a transposed GEMM), Kᵀ as it
// lies; no batch dims. Row 0's first 300 scores are -inf (a whole block adds nothing, then the
// rest count), row 1's are all -inf (NaN, as the softmax gives), and row 2 has a few -inf keys.
TEST(AttentionTest, WalksTheKeysInBlocksWithMaskedRows) {
  const int64_t Sq = 70, Skv = 600, D = 8, Dv = 12;
  Attention c;
  c.q_dims = {D, Sq};
  c.k_dims = {D, Skv};
  c.v_dims = {Dv, Skv};
  c.mask_dims = {Sq, Skv};
  c.dst_dims = {Sq, Dv};
  c.q = {0, {Sq, D}, {1, Sq}};
  c.k = {0, {D, Skv}, {Skv, 1}};
  c.v = {0, {Skv, Dv}, {1, Skv}};
  c.mask = {0, {Sq, Skv}, {Skv, 1}};
  c.dst = {0, {Sq, Dv}, {Dv, 1}};
  c.has_mask = true;
  c.scale = 1.0f / std::sqrt(8.0f);
  std::vector<float> mask = randomValues(c.mask_dims, 5);
  for (int64_t j = 0; j < 300; ++j)
    mask[j] = kNegInf;
  for (int64_t j = 0; j < Skv; ++j)
    mask[Skv + j] = kNegInf;
  for (int64_t j = 5; j < Skv; j += 97)
    mask[2 * Skv + j] = kNegInf;
  check(c, mask, {1});
}

// The ONNX Attention operator's rule (zero_masked_rows): the row without a key to attend is zero,
// written through a transposed result (column stride Sq), and every other row as before.
TEST(AttentionTest, ZeroesTheRowsWithoutAKeyWhenAsked) {
  const int64_t Sq = 6, Skv = 300, D = 8, Dv = 5;
  Attention c;
  c.q_dims = {Sq, D};
  c.k_dims = {D, Skv};
  c.v_dims = {Skv, Dv};
  c.mask_dims = {Sq, Skv};
  c.dst_dims = {Dv, Sq};
  c.q = {0, {Sq, D}, {D, 1}};
  c.k = {0, {D, Skv}, {Skv, 1}};
  c.v = {0, {Skv, Dv}, {Dv, 1}};
  c.mask = {0, {Sq, Skv}, {Skv, 1}};
  c.dst = {0, {Sq, Dv}, {1, Sq}};
  c.has_mask = true;
  c.scale = 0.5f;
  c.zero_masked_rows = true;
  std::vector<float> mask = randomValues(c.mask_dims, 6);
  for (int64_t j = 0; j < Skv; ++j)
    mask[3 * Skv + j] = kNegInf;
  check(c, mask, {3});
}

// No mask, and Q broadcast over the batch (batch stride 0); the result is written through a
// transposed view (column stride 3).
TEST(AttentionTest, BroadcastsAndWritesThroughStrides) {
  const int64_t B = 3, Sq = 5, Skv = 40, D = 16, Dv = 3;
  Attention c;
  c.q_dims = {Sq, D};
  c.k_dims = {B, D, Skv};
  c.v_dims = {B, Skv, Dv};
  c.dst_dims = {B, Dv, Sq};
  c.q = {0, {B, Sq, D}, {0, D, 1}};
  c.k = {0, {B, D, Skv}, {D * Skv, Skv, 1}};
  c.v = {0, {B, Skv, Dv}, {Skv * Dv, Dv, 1}};
  c.dst = {0, {B, Sq, Dv}, {Dv * Sq, 1, Sq}};
  c.scale = 0.5f;
  check(c);
}

// Llama's grouped-query attention: 8 query heads, 2 key and value heads (kv_group 4) read where
// they lie (Kᵀ and V out of the fused projection [B, S, (8 + 2 + 2) * D], never repeated), a
// causal mask [S, S] broadcast over batch and heads, merged heads written.
TEST(AttentionTest, ReadsEachKeyHeadForItsGroupOfQueryHeads) {
  const int64_t B = 2, S = 70, H = 8, Hkv = 2, D = 16;
  const int64_t token = (H + 2 * Hkv) * D, batch = S * token;
  Attention c;
  c.q_dims = c.k_dims = c.v_dims = {B, S, token};
  c.mask_dims = {S, S};
  c.dst_dims = {B, S, H * D};
  c.q = {0, {B, H, S, D}, {batch, D, token, 1}};
  c.k = {H * D, {B, Hkv, D, S}, {batch, D, 1, token}};
  c.v = {(H + Hkv) * D, {B, Hkv, S, D}, {batch, D, token, 1}};
  c.mask = {0, {B, H, S, S}, {0, 0, S, 1}};
  c.dst = {0, {B, H, S, D}, {S * H * D, D, H * D, 1}};
  c.has_mask = true;
  c.scale = 0.25f;
  c.kv_group = H / Hkv;
  std::vector<float> mask(S * S, 0.0f);
  for (int64_t i = 0; i < S; ++i)
    for (int64_t j = i + 1; j < S; ++j)
      mask[i * S + j] = kNegInf;
  check(c, mask);
}

// A call of a program for a range of shapes: no views, set up for one shape of the run (batch 3
// and sequence 17 of bindings compiled for up to 4 x 32). Each binding is read as it lies: Q, Kᵀ
// and V dense, the mask [3, 1, 1, 17] broadcast over the heads and the query rows.
TEST(AttentionTest, ReadsItsBindingsAsTheyLieForAShapeOfTheRun) {
  const int64_t B = 3, H = 2, S = 17, D = 8;
  Attention c;
  c.views = false;
  c.has_mask = true;
  c.scale = 0.3f;
  // The artifact's dims are the upper bounds; the reference and the buffers use the run's.
  Attention bounds = c;
  bounds.q_dims = bounds.v_dims = bounds.dst_dims = {4, H, 32, D};
  bounds.k_dims = {4, H, D, 32};
  bounds.mask_dims = {4, 1, 1, 32};
  c.q_dims = c.v_dims = c.dst_dims = {B, H, S, D};
  c.k_dims = {B, H, D, S};
  c.mask_dims = {B, 1, 1, S};
  c.q = c.v = c.dst = {0, {B, H, S, D}, {H * S * D, S * D, D, 1}};
  c.k = {0, {B, H, D, S}, {H * D * S, D * S, S, 1}};
  c.mask = {0, {B, H, S, S}, {S, 0, 0, 1}};
  std::vector<std::vector<int64_t>> run_dims{c.q_dims, c.k_dims, c.v_dims, c.mask_dims, c.dst_dims};
  // The kernel is made from the bounds' call and set up for the run's dims.
  LibraryCallBuilder builder("kiln.attention");
  std::unique_ptr<LibraryCallKernel> kernel = prepareAttention(build(builder, bounds), &run_dims);
  ASSERT_NE(kernel, nullptr);
  std::vector<float> q = randomValues(c.q_dims, 1), k = randomValues(c.k_dims, 2),
                     v = randomValues(c.v_dims, 3), mask = randomValues(c.mask_dims, 4);
  std::vector<float> dst(numElements(c.dst_dims), 7.0f), expected = dst;
  std::vector<void *> buffers{q.data(), k.data(), v.data(), mask.data(), dst.data()};
  ASSERT_TRUE(kernel->run(buffers.data()).ok());
  reference(c, q, k, v, mask, &expected);
  expectClose(dst, expected, 2e-5f, 1e-4f);
  // Views on some operands but not others are refused.
  {
    LibraryCallBuilder partial("kiln.attention");
    Attention some = bounds;
    some.views = true;
    some.q = some.v = some.dst = {0, {4, H, 32, D}, {H * 32 * D, 32 * D, D, 1}};
    some.mask = {0, {4, H, 32, 32}, {32, 0, 0, 1}};
    const kiln::artifact::LibraryCall &call = build(partial, some, "k_view");
    EXPECT_NE(attentionError(call, KILN_STATUS_INVALID_ARGUMENT).find("needs the parameter"),
              std::string::npos);
  }
}

Attention smallCase() {
  Attention c;
  c.q_dims = c.k_dims = c.v_dims = c.dst_dims = {4, 8};
  c.q = c.v = c.dst = {0, {4, 8}, {8, 1}};
  c.k = {0, {8, 4}, {1, 8}};
  return c;
}

TEST(AttentionTest, RefusesMalformedCalls) {
  {
    LibraryCallBuilder builder("kiln.attention");
    EXPECT_NE(attentionError(build(builder, smallCase(), "k_view"), KILN_STATUS_INVALID_ARGUMENT)
                  .find("needs the parameter 'k_view'"),
              std::string::npos);
  }
  {
    LibraryCallBuilder builder("kiln.attention");
    EXPECT_NE(attentionError(build(builder, smallCase(), "scale"), KILN_STATUS_INVALID_ARGUMENT)
                  .find("needs one finite 'scale'"),
              std::string::npos);
  }
  {
    Attention c = smallCase();
    c.v = {0, {2, 8}, {8, 1}}; // V has 2 keys, Kᵀ 4
    LibraryCallBuilder builder("kiln.attention");
    EXPECT_NE(attentionError(build(builder, c), KILN_STATUS_INVALID_ARGUMENT)
                  .find("the views' dims do not agree"),
              std::string::npos);
  }
  {
    Attention c = smallCase();
    c.q_dims = {64};
    c.q = {0, {4, 8}, {2, 2}}; // no unit stride
    LibraryCallBuilder builder("kiln.attention");
    std::string message = attentionError(build(builder, c), KILN_STATUS_UNIMPLEMENTED);
    EXPECT_NE(message.find("q's view has no unit stride"), std::string::npos) << message;
    EXPECT_NE(message.find("library call 'kiln.attention'"), std::string::npos) << message;
  }
  {
    Attention c = smallCase();
    c.dst = {0, {4, 8}, {1, 1}}; // writes elements twice
    LibraryCallBuilder builder("kiln.attention");
    attentionError(build(builder, c), KILN_STATUS_INVALID_ARGUMENT);
  }
  // Grouped queries: 3 query heads do not split into groups of 2, and Kᵀ must have the heads
  // divided by the group.
  Attention grouped;
  grouped.q_dims = grouped.dst_dims = {3, 4, 8};
  grouped.k_dims = {3, 8, 4};
  grouped.v_dims = {3, 4, 8};
  grouped.q = grouped.dst = {0, {3, 4, 8}, {32, 8, 1}};
  grouped.k = {0, {3, 8, 4}, {32, 4, 1}};
  grouped.v = {0, {3, 4, 8}, {32, 8, 1}};
  grouped.kv_group = 2;
  {
    LibraryCallBuilder builder("kiln.attention");
    std::string message = attentionError(build(builder, grouped), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message.find("'kv_group' 2 does not divide"), std::string::npos) << message;
  }
  {
    grouped.kv_group = 3;
    LibraryCallBuilder builder("kiln.attention");
    std::string message = attentionError(build(builder, grouped), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message.find("k's view has dims"), std::string::npos) << message;
  }
}

// The CPU device routes the call by its name.
TEST(AttentionTest, IsACpuLibraryCall) {
  LibraryCallBuilder builder("kiln.attention");
  std::unique_ptr<LibraryCallKernel> kernel;
  kiln::Status status =
      runtime::cpu::createLibraryCallKernel(build(builder, smallCase()), nullptr, nullptr, &kernel);
  EXPECT_TRUE(status.ok()) << status.toString();
  EXPECT_NE(kernel, nullptr);
}

} // namespace
} // namespace kiln::testing
