//===- onednn_convolution_test.cpp - onednn.convolution against a naive loop ===//
//
// Each case runs the library call on seeded random data (values in [-1, 1), none zero) and
// compares it with a direct convolution accumulated in double. Tolerance: 1e-4 absolute plus
// 1e-4 relative; oneDNN accumulates in f32 in another order, which for the reductions here
// (at most 576 products of magnitude < 1) stays far below that.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <ostream>
#include <thread>

#include "tests/runtime/onednn/onednn_test_util.h"

namespace kiln::testing {
namespace {

using kiln::artifact::BufferKind;

struct ConvCase {
  std::string name;
  std::vector<int64_t> src, weights;
  std::vector<int64_t> strides, dilations, pads_begin, pads_end;
  int64_t groups = 1;
  bool bias = false;
  std::vector<std::string> post_ops;
  std::vector<float> post_op_args;
  std::vector<std::vector<int64_t>> addends;  // the dims of each "add" operand
  bool constant_weights = false;
};

/// Names the case in failure messages.
void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

std::vector<int64_t> outputDims(const ConvCase& c) {
  std::vector<int64_t> dims{c.src[0], c.weights[0]};
  for (size_t i = 0; i + 2 < c.src.size(); ++i) {
    int64_t window = c.dilations[i] * (c.weights[2 + i] - 1) + 1;
    dims.push_back((c.src[2 + i] + c.pads_begin[i] + c.pads_end[i] - window) / c.strides[i] + 1);
  }
  return dims;
}

/// A direct grouped convolution; 1-D and 2-D cases are treated as 3-D ones with unit dims.
std::vector<float> referenceConvolution(const ConvCase& c, const std::vector<float>& src,
                                        const std::vector<float>& weights,
                                        const std::vector<float>& bias) {
  auto pad3 = [](std::vector<int64_t> v, size_t from, int64_t fill) {
    while (v.size() < from + 3) v.push_back(fill);
    return v;
  };
  std::vector<int64_t> in = pad3(c.src, 2, 1), w = pad3(c.weights, 2, 1);
  std::vector<int64_t> out = pad3(outputDims(c), 2, 1);
  std::vector<int64_t> stride = pad3(c.strides, 0, 1), dil = pad3(c.dilations, 0, 1),
                       pad = pad3(c.pads_begin, 0, 0);
  int64_t groups = c.groups, cpg = in[1] / groups, mpg = out[1] / groups;
  std::vector<float> dst(numElements(out));
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t m = 0; m < out[1]; ++m)
      for (int64_t z = 0; z < out[2]; ++z)
        for (int64_t y = 0; y < out[3]; ++y)
          for (int64_t x = 0; x < out[4]; ++x) {
            double acc = c.bias ? bias[m] : 0.0;
            int64_t g = m / mpg;
            for (int64_t ci = 0; ci < cpg; ++ci)
              for (int64_t kz = 0; kz < w[2]; ++kz)
                for (int64_t ky = 0; ky < w[3]; ++ky)
                  for (int64_t kx = 0; kx < w[4]; ++kx) {
                    int64_t iz = z * stride[0] - pad[0] + kz * dil[0];
                    int64_t iy = y * stride[1] - pad[1] + ky * dil[1];
                    int64_t ix = x * stride[2] - pad[2] + kx * dil[2];
                    if (iz < 0 || iz >= in[2] || iy < 0 || iy >= in[3] || ix < 0 || ix >= in[4])
                      continue;
                    int64_t channel = g * cpg + ci;
                    acc += double(src[(((n * in[1] + channel) * in[2] + iz) * in[3] + iy) * in[4] +
                                      ix]) *
                           weights[(((m * w[1] + ci) * w[2] + kz) * w[3] + ky) * w[4] + kx];
                  }
            dst[(((n * out[1] + m) * out[2] + z) * out[3] + y) * out[4] + x] = float(acc);
          }
  return dst;
}

/// The data of one case: operands, the constants block holding the weights when they are
/// Constant, and the expected result.
struct ConvData {
  std::vector<float> src, weights, bias, dst, expected;
  std::vector<std::vector<float>> addends;
  std::vector<uint8_t> constants;
  static constexpr uint64_t kWeightsOffset = 128;
};

const kiln::artifact::LibraryCall& buildCall(const ConvCase& c, LibraryCallBuilder* builder) {
  size_t spatial = c.src.size() - 2;
  builder->binding(c.src);
  builder->binding(c.weights, c.constant_weights ? BufferKind::Constant : BufferKind::Arena,
                   c.constant_weights ? ConvData::kWeightsOffset : 0);
  if (c.bias) builder->binding({c.weights[0]});
  for (const auto& dims : c.addends) builder->binding(dims);
  builder->binding(outputDims(c), BufferKind::Output);
  builder->ints("strides", c.strides).ints("dilations", c.dilations);
  builder->ints("pads_begin", c.pads_begin).ints("pads_end", c.pads_end);
  builder->ints("groups", {c.groups});
  EXPECT_EQ(c.strides.size(), spatial);
  if (!c.post_ops.empty()) builder->strings("post_ops", c.post_ops);
  if (!c.post_op_args.empty()) builder->floats("post_op_args", c.post_op_args);
  return builder->build();
}

ConvData makeData(const ConvCase& c, uint32_t seed) {
  ConvData data;
  data.src = randomValues(c.src, seed);
  data.weights = randomValues(c.weights, seed + 1);
  if (c.bias) data.bias = randomValues({c.weights[0]}, seed + 2);
  std::vector<std::pair<std::vector<int64_t>, const float*>> addends;
  for (size_t i = 0; i < c.addends.size(); ++i)
    data.addends.push_back(randomValues(c.addends[i], seed + 3 + i));
  for (size_t i = 0; i < c.addends.size(); ++i)
    addends.emplace_back(c.addends[i], data.addends[i].data());
  data.expected = referenceConvolution(c, data.src, data.weights, data.bias);
  applyPostOps(&data.expected, outputDims(c), c.post_ops, c.post_op_args, addends);
  data.dst.assign(data.expected.size(), std::numeric_limits<float>::quiet_NaN());
  if (c.constant_weights) {
    data.constants.assign(ConvData::kWeightsOffset + data.weights.size() * sizeof(float), 0);
    std::memcpy(data.constants.data() + ConvData::kWeightsOffset, data.weights.data(),
                data.weights.size() * sizeof(float));
  }
  return data;
}

std::vector<void*> buffersOf(const ConvCase& c, ConvData* data) {
  std::vector<void*> buffers{data->src.data(), data->weights.data()};
  if (c.bias) buffers.push_back(data->bias.data());
  for (auto& addend : data->addends) buffers.push_back(addend.data());
  buffers.push_back(data->dst.data());
  return buffers;
}

class ConvolutionTest : public ::testing::TestWithParam<ConvCase> {};

// A wrong result here means the call's parameters (strides, dilations counted from 1, pads,
// groups, bias, post-op order) reach oneDNN with another meaning than the graph op's.
TEST_P(ConvolutionTest, MatchesNaiveConvolution) {
  const ConvCase& c = GetParam();
  LibraryCallBuilder builder("onednn.convolution");
  const kiln::artifact::LibraryCall& call = buildCall(c, &builder);
  ConvData data = makeData(c, 7);
  auto kernel = prepare(call, c.constant_weights ? data.constants.data() : nullptr);
  ASSERT_NE(kernel, nullptr);
  // Constant weights are packed at load time: the kernel must not read the constants again.
  std::fill(data.constants.begin(), data.constants.end(), 0xFF);
  std::vector<void*> buffers = buffersOf(c, &data);
  kiln::Status status = kernel->run(buffers.data());
  ASSERT_TRUE(status.ok()) << status.toString();
  expectClose(data.dst, data.expected, 1e-4f, 1e-4f);
}

// Runs of one kernel from several threads at once must not share a stream, scratchpad or
// temporary layout buffer.
TEST_P(ConvolutionTest, ConcurrentRunsAreIndependent) {
  const ConvCase& c = GetParam();
  LibraryCallBuilder builder("onednn.convolution");
  const kiln::artifact::LibraryCall& call = buildCall(c, &builder);
  ConvData first = makeData(c, 11);
  auto kernel = prepare(call, c.constant_weights ? first.constants.data() : nullptr);
  ASSERT_NE(kernel, nullptr);
  std::vector<ConvData> runs;
  for (uint32_t i = 0; i < 4; ++i) {
    ConvData data = makeData(c, 100 + 10 * i);
    if (c.constant_weights) {  // every run shares the packed weights of the first data set
      data.weights = first.weights;
      data.expected = referenceConvolution(c, data.src, data.weights, data.bias);
      std::vector<std::pair<std::vector<int64_t>, const float*>> addends;
      for (size_t a = 0; a < c.addends.size(); ++a)
        addends.emplace_back(c.addends[a], data.addends[a].data());
      applyPostOps(&data.expected, outputDims(c), c.post_ops, c.post_op_args, addends);
    }
    runs.push_back(std::move(data));
  }
  std::vector<kiln::Status> statuses(runs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < runs.size(); ++i)
    threads.emplace_back([&, i] {
      for (int repeat = 0; repeat < 3 && statuses[i].ok(); ++repeat) {
        std::vector<void*> buffers = buffersOf(c, &runs[i]);
        statuses[i] = kernel->run(buffers.data());
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].toString();
    expectClose(runs[i].dst, runs[i].expected, 1e-4f, 1e-4f);
  }
}

INSTANTIATE_TEST_SUITE_P(
    OneDnn, ConvolutionTest,
    ::testing::Values(
        ConvCase{"StridedAsymmetricPadsBiasRelu", {2, 3, 11, 9}, {8, 3, 3, 3}, {2, 1}, {1, 1},
                 {1, 0}, {1, 2}, 1, true, {"relu"}, {}, {}, true},
        ConvCase{"DilatedRuntimeWeights", {1, 4, 10, 10}, {6, 4, 3, 3}, {1, 1}, {2, 2}, {2, 2},
                 {2, 2}, 1, false, {}, {}, {}, false},
        ConvCase{"Grouped", {1, 8, 7, 7}, {12, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2, true,
                 {}, {}, {}, true},
        ConvCase{"DepthwiseClip", {1, 16, 9, 9}, {16, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1},
                 16, true, {"clip"}, {-0.5f, 0.75f}, {}, true},
        ConvCase{"ResidualAddThenRelu", {1, 8, 6, 6}, {8, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1},
                 {1, 1}, 1, true, {"add", "relu"}, {}, {{1, 8, 6, 6}}, true},
        ConvCase{"ChannelBiasAddAndLinear", {2, 5, 8, 8}, {6, 5, 3, 3}, {1, 1}, {1, 1}, {0, 0},
                 {0, 0}, 1, false, {"add", "linear"}, {0.5f, -0.25f}, {{6, 1, 1}}, true},
        ConvCase{"Conv1dStridedDilated", {2, 3, 20}, {5, 3, 4}, {2}, {2}, {1}, {2}, 1, true,
                 {"relu"}, {}, {}, true},
        ConvCase{"Conv3d", {1, 2, 5, 6, 7}, {4, 2, 2, 3, 3}, {1, 2, 1}, {1, 1, 1}, {0, 1, 1},
                 {1, 1, 1}, 1, true, {}, {}, {}, false},
        ConvCase{"Pointwise1x1Residual", {1, 16, 7, 7}, {32, 16, 1, 1}, {1, 1}, {1, 1}, {0, 0},
                 {0, 0}, 1, true, {"add", "relu"}, {}, {{1, 32, 7, 7}}, true},
        ConvCase{"ResNetBlock3x3", {1, 64, 14, 14}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1},
                 {1, 1}, 1, true, {"add", "relu"}, {}, {{1, 64, 14, 14}}, true}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return info.param.name; });

//===----------------------------------------------------------------------===//
// Bad calls
//===----------------------------------------------------------------------===//

/// A valid 1x4x8x8 * 8x4x3x3 convolution (pads 1) whose pieces the tests below break.
LibraryCallBuilder validConvolution() {
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}).binding({8}).binding({1, 8, 8, 8});
  builder.ints("strides", {1, 1}).ints("dilations", {1, 1});
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  return builder;
}

TEST(ConvolutionErrorsTest, TheValidBaseCallPrepares) {
  LibraryCallBuilder builder = validConvolution();
  EXPECT_NE(prepare(builder.build()), nullptr);
}

TEST(ConvolutionErrorsTest, WrongOutputSizeNamesTheDimension) {
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}).binding({1, 8, 7, 8});
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  std::string message = prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("library call 'onednn.convolution' (test call)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("spatial dimension 0 of dst is 7; the window gives 8"),
            std::string::npos)
      << message;
}

TEST(ConvolutionErrorsTest, GroupsMustDivideChannels) {
  LibraryCallBuilder builder = validConvolution();
  builder.ints("groups", {3});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT).find("groups = 3"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, StridesNeedOneValuePerSpatialDimension) {
  LibraryCallBuilder builder = validConvolution();
  builder.ints("strides", {1, 1, 1});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("'strides' has 3 values, expected 2"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, ZeroStrideIsRefused) {
  LibraryCallBuilder builder = validConvolution();
  builder.ints("strides", {0, 1});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT).find("stride"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, UnknownPostOpIsNamed) {
  LibraryCallBuilder builder = validConvolution();
  builder.strings("post_ops", {"relu", "gelu"});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("post-op 1 is 'gelu'"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, ClipNeedsItsTwoArguments) {
  LibraryCallBuilder builder = validConvolution();
  builder.strings("post_ops", {"clip"}).floats("post_op_args", {0.0f});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT).find("needs 2 values"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, LeftoverPostOpArgumentsAreRefused) {
  LibraryCallBuilder builder = validConvolution();
  builder.strings("post_ops", {"relu"}).floats("post_op_args", {1.0f});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("'post_op_args' has 1 values, the post-ops use 0"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, AddOperandMustBroadcast) {
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}).binding({1, 4, 8, 8}).binding({1, 8, 8, 8});
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  builder.strings("post_ops", {"add"});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("does not broadcast to the result"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, BindingCountMustFitThePostOps) {
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 4, 8, 8}).binding({1, 8, 8, 8});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT).find("has 2 bindings"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, NonF32BindingIsRefused) {
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 4, 8, 8}, BufferKind::Arena, 0, KILN_ELEMENT_TYPE_F32 + 1)
      .binding({8, 4, 3, 3})
      .binding({1, 8, 6, 6});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("f32 tensors only"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, UnknownParameterKeyIsRefused) {
  LibraryCallBuilder builder = validConvolution();
  builder.ints("padding", {1, 1});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("unknown int parameter 'padding'"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, ConstantWeightsNeedTheConstants) {
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}, BufferKind::Constant).binding({1, 8, 6, 6});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT, nullptr)
                .find("no constants"),
            std::string::npos);
}

TEST(ConvolutionErrorsTest, UnknownCallIsUnimplemented) {
  LibraryCallBuilder builder("onednn.pooling");
  builder.binding({1, 4, 8, 8}).binding({1, 4, 4, 4});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_UNIMPLEMENTED).find("onednn.pooling"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
