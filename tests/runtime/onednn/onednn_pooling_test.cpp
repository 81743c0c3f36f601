//===- onednn_pooling_test.cpp - onednn.pooling against a naive loop --------===//
//
// Each case runs the library call on seeded random data (values in [-1, 1), none zero) and
// compares it with a loop over every window: the maximum of the input elements it covers, or
// their sum divided by the covered count (padding excluded) or by the window size (padding
// included). Tolerance: 1e-6 absolute plus 1e-6 relative.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <limits>
#include <ostream>

#include "tests/runtime/onednn/onednn_test_util.h"

namespace kiln::testing {
namespace {

struct PoolingCase {
  std::string name;
  std::string kind;
  std::vector<int64_t> src; // N x C x D1..Dn
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
};

void PrintTo(const PoolingCase &c, std::ostream *os) { *os << c.name; }

std::vector<int64_t> outputDims(const PoolingCase &c) {
  std::vector<int64_t> dims{c.src[0], c.src[1]};
  for (size_t i = 0; i < c.kernel.size(); ++i) {
    int64_t window = c.dilations[i] * (c.kernel[i] - 1) + 1;
    dims.push_back((c.src[i + 2] + c.pads_begin[i] + c.pads_end[i] - window) / c.strides[i] + 1);
  }
  return dims;
}

std::vector<float> referencePooling(const PoolingCase &c, const std::vector<float> &src) {
  std::vector<int64_t> dst = outputDims(c);
  const size_t spatial = c.kernel.size();
  std::vector<float> out(numElements(dst));
  std::vector<int64_t> o(spatial), k(spatial);
  const int64_t planes = c.src[0] * c.src[1];
  const int64_t in_plane = numElements(c.src) / planes, out_plane = numElements(dst) / planes;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t flat = 0; flat < out_plane; ++flat) {
      int64_t rest = flat;
      for (size_t i = spatial; i-- > 0;) {
        o[i] = rest % dst[i + 2];
        rest /= dst[i + 2];
      }
      int64_t window = 1;
      for (int64_t kk : c.kernel)
        window *= kk;
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t covered = 0;
      for (int64_t w = 0; w < window; ++w) {
        int64_t r = w, offset = 0;
        bool inside = true;
        for (size_t i = spatial; i-- > 0;) {
          k[i] = r % c.kernel[i];
          r /= c.kernel[i];
        }
        for (size_t i = 0; i < spatial; ++i) {
          int64_t at = o[i] * c.strides[i] - c.pads_begin[i] + k[i] * c.dilations[i];
          inside = inside && at >= 0 && at < c.src[i + 2];
          offset = offset * c.src[i + 2] + at;
        }
        if (!inside)
          continue;
        double v = src[p * in_plane + offset];
        max = std::max(max, v);
        sum += v;
        ++covered;
      }
      float value = static_cast<float>(c.kind == "max"               ? max
                                       : c.kind == "avg_include_pad" ? sum / double(window)
                                                                     : sum / double(covered));
      out[p * out_plane + flat] = value;
    }
  }
  return out;
}

class PoolingTest : public ::testing::TestWithParam<PoolingCase> {};

TEST_P(PoolingTest, MatchesNaiveLoop) {
  const PoolingCase &c = GetParam();
  std::vector<int64_t> dst_dims = outputDims(c);
  LibraryCallBuilder builder("onednn.pooling");
  builder.binding(c.src).binding(dst_dims);
  builder.strings("kind", {c.kind})
      .ints("kernel", c.kernel)
      .ints("strides", c.strides)
      .ints("dilations", c.dilations)
      .ints("pads_begin", c.pads_begin)
      .ints("pads_end", c.pads_end);
  std::unique_ptr<runtime::cpu::LibraryCallKernel> kernel = prepare(builder.build());
  ASSERT_NE(kernel, nullptr);
  std::vector<float> src = randomValues(c.src, 11);
  std::vector<float> dst(numElements(dst_dims), 0.0f);
  void *buffers[] = {src.data(), dst.data()};
  ASSERT_TRUE(kernel->run(buffers).ok());
  EXPECT_TRUE(kernel->writes(1));
  EXPECT_FALSE(kernel->writes(0));
  expectClose(dst, referencePooling(c, src), 1e-6f, 1e-6f);
}

// The same pools over channels-last tensors (kiln-cpu-channels-last).
TEST_P(PoolingTest, ChannelsLastMatchesNaiveLoop) {
  const PoolingCase &c = GetParam();
  std::vector<int64_t> dst_dims = outputDims(c);
  LibraryCallBuilder builder("onednn.pooling");
  builder.binding(lastDims(c.src)).binding(lastDims(dst_dims));
  builder.strings("kind", {c.kind})
      .ints("kernel", c.kernel)
      .ints("strides", c.strides)
      .ints("dilations", c.dilations)
      .ints("pads_begin", c.pads_begin)
      .ints("pads_end", c.pads_end)
      .ints("channels_last", {1});
  std::unique_ptr<runtime::cpu::LibraryCallKernel> kernel = prepare(builder.build());
  ASSERT_NE(kernel, nullptr);
  std::vector<float> src = randomValues(c.src, 11);
  std::vector<float> src_last = toLast(src, c.src);
  std::vector<float> dst(numElements(dst_dims), 0.0f);
  void *buffers[] = {src_last.data(), dst.data()};
  ASSERT_TRUE(kernel->run(buffers).ok());
  expectClose(dst, toLast(referencePooling(c, src), dst_dims), 1e-6f, 1e-6f);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PoolingTest,
    ::testing::Values(
        // ResNet's stem pool: 3x3, stride 2, padding 1 on every side.
        PoolingCase{"MaxStem", "max", {1, 8, 16, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
        // Ceil mode as a larger end padding, and an odd size.
        PoolingCase{"MaxCeil", "max", {2, 3, 9, 7}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {1, 1}},
        PoolingCase{"MaxDilated", "max", {1, 2, 12, 10}, {3, 2}, {1, 2}, {2, 3}, {1, 0}, {1, 2}},
        PoolingCase{"AvgExcludePad",
                    "avg_exclude_pad",
                    {1, 4, 10, 10},
                    {3, 3},
                    {1, 1},
                    {1, 1},
                    {1, 1},
                    {1, 1}},
        PoolingCase{"AvgIncludePad",
                    "avg_include_pad",
                    {2, 2, 7, 9},
                    {3, 3},
                    {2, 2},
                    {1, 1},
                    {1, 1},
                    {1, 0}},
        PoolingCase{"Max1d", "max", {2, 3, 17}, {4}, {3}, {1}, {2}, {1}},
        PoolingCase{"Avg3d",
                    "avg_exclude_pad",
                    {1, 2, 5, 6, 7},
                    {2, 3, 2},
                    {1, 2, 2},
                    {1, 1, 1},
                    {1, 1, 0},
                    {0, 1, 1}}),
    [](const ::testing::TestParamInfo<PoolingCase> &info) { return info.param.name; });

TEST(PoolingErrorTest, RefusesAnUnknownKindAndAWrongOutputSize) {
  {
    LibraryCallBuilder builder("onednn.pooling");
    builder.binding({1, 2, 8, 8}).binding({1, 2, 4, 4});
    builder.strings("kind", {"min"}).ints("kernel", {2, 2}).ints("strides", {2, 2});
    EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT).find("'kind' must be"),
              std::string::npos);
  }
  {
    LibraryCallBuilder builder("onednn.pooling");
    builder.binding({1, 2, 8, 8}).binding({1, 2, 5, 4});
    builder.strings("kind", {"max"}).ints("kernel", {2, 2}).ints("strides", {2, 2});
    std::string message = prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message.find("spatial dimension 0 of dst is 5"), std::string::npos) << message;
  }
}

} // namespace
} // namespace kiln::testing
