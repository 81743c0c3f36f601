//===- onednn_convolution_test.cpp - onednn.convolution against a naive loop ===//
//
// Each case runs the library call on seeded random data (values in [-1, 1), none zero) and
// compares it with a direct convolution accumulated in double. Tolerance: 1e-4 absolute plus
// 1e-4 relative; oneDNN accumulates in f32 in another order, which for the reductions here
// (at most 576 products of magnitude < 1) stays far below that.
//
// The LayoutNegotiationTest cases at the end run whole hand-built artifacts of several
// convolutions in sessions and check which arena values stay in oneDNN's own layout between them
// (CpuProgram::negotiateLayouts) besides every result.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <ostream>
#include <thread>
#include <utility>

#include "kiln/runtime.hpp"
#include "tests/runtime/artifact_builder.h"
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

/// The call of `c`; with `channels_last`, over channels-last src, weights, addends and dst.
const kiln::artifact::LibraryCall &buildCall(const ConvCase &c, LibraryCallBuilder *builder,
                                             bool channels_last = false) {
  size_t spatial = c.src.size() - 2;
  std::vector<int64_t> dst = outputDims(c);
  auto stored = [&](const std::vector<int64_t> &dims) {
    return channels_last ? lastDims(padRank(dims, dst.size())) : dims;
  };
  builder->binding(stored(c.src));
  builder->binding(stored(c.weights), c.constant_weights ? BufferKind::Constant : BufferKind::Arena,
                   c.constant_weights ? ConvData::kWeightsOffset : 0);
  if (c.bias) builder->binding({c.weights[0]});
  for (const auto &dims : c.addends)
    builder->binding(stored(dims));
  builder->binding(stored(dst), BufferKind::Output);
  if (channels_last)
    builder->ints("channels_last", {1});
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

/// `data` with every tensor channels-last (the constants too), as buildCall(c, .., true) reads.
ConvData channelsLastData(const ConvCase &c, ConvData data) {
  std::vector<int64_t> dst = outputDims(c);
  data.src = toLast(data.src, c.src);
  data.weights = toLast(data.weights, c.weights);
  for (size_t i = 0; i < c.addends.size(); ++i)
    data.addends[i] = toLast(data.addends[i], padRank(c.addends[i], dst.size()));
  data.expected = toLast(data.expected, dst);
  if (c.constant_weights)
    std::memcpy(data.constants.data() + ConvData::kWeightsOffset, data.weights.data(),
                data.weights.size() * sizeof(float));
  return data;
}

/// Builds `c`'s call (channels-last or not), runs it on seeded data and compares with the naive
/// convolution.
void expectMatchesNaive(const ConvCase &c, bool channels_last) {
  LibraryCallBuilder builder("onednn.convolution");
  const kiln::artifact::LibraryCall &call = buildCall(c, &builder, channels_last);
  ConvData data = channels_last ? channelsLastData(c, makeData(c, 7)) : makeData(c, 7);
  auto kernel = prepare(call, c.constant_weights ? data.constants.data() : nullptr);
  ASSERT_NE(kernel, nullptr);
  // Constant weights are packed at load time: the kernel must not read the constants again.
  std::fill(data.constants.begin(), data.constants.end(), 0xFF);
  std::vector<void *> buffers = buffersOf(c, &data);
  kiln::Status status = kernel->run(buffers.data());
  ASSERT_TRUE(status.ok()) << status.toString();
  expectClose(data.dst, data.expected, 1e-4f, 1e-4f);
}

class ConvolutionTest : public ::testing::TestWithParam<ConvCase> {};

// The same calls over channels-last tensors (kiln-cpu-channels-last): a wrong result means the
// strides oneDNN is told for the NHWC operands, the KRSC weights or the addends are not theirs.
TEST_P(ConvolutionTest, ChannelsLastMatchesNaiveConvolution) {
  expectMatchesNaive(GetParam(), /*channels_last=*/true);
}

// A wrong result here means the call's parameters (strides, dilations counted from 1, pads,
// groups, bias, post-op order) reach oneDNN with another meaning than the graph op's.
TEST_P(ConvolutionTest, MatchesNaiveConvolution) {
  expectMatchesNaive(GetParam(), /*channels_last=*/false);
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
  builder.strings("post_ops", {"relu", "tanh"});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("post-op 1 is 'tanh'"),
            std::string::npos);
}

// Tests that a post-op another library fuses (cuBLASLt's "gelu") is refused as one oneDNN
// cannot run, by the contract's entry for the call, naming what it fuses instead.
TEST(ConvolutionErrorsTest, PostOpOfAnotherLibraryIsUnimplemented) {
  LibraryCallBuilder builder = validConvolution();
  builder.strings("post_ops", {"relu", "gelu"});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_UNIMPLEMENTED)
                .find("post-op 1 ('gelu') is not fused by 'onednn.convolution' (it fuses relu, "
                      "clip, linear, add, gelu_erf, gelu_tanh, swish)"),
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

TEST(ConvolutionErrorsTest, F16BindingIsRefused) {
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 4, 8, 8}, BufferKind::Arena, 0, KILN_ELEMENT_TYPE_F16)
      .binding({8, 4, 3, 3})
      .binding({1, 8, 6, 6});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_INVALID_ARGUMENT)
                .find("oneDNN calls take f32 and bf16 tensors"),
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
  LibraryCallBuilder builder("onednn.lrn");
  builder.binding({1, 4, 8, 8}).binding({1, 4, 8, 8});
  EXPECT_NE(prepareError(builder.build(), KILN_STATUS_UNIMPLEMENTED).find("onednn.lrn"),
            std::string::npos);
}


//===----------------------------------------------------------------------===//
// Layout negotiation (LibraryCallKernel::nativeLayout/accepts/useLayout, CpuProgram)
//
// Whole programs of convolutions built by hand and run by sessions. An arena value that one
// convolution writes first and only convolutions read (as their source or as the addend of a
// sum post-op) stays in oneDNN's blocked layout between them; a value anything else reads stays
// plain. Every output is checked against the naive convolutions chained in the test. A "probe"
// copies the raw bytes of a value's arena range into an extra output through an arena index no
// step writes (so the probe is not one of the value's readers), and the test checks which layout
// those bytes hold the reference's values in.
//===----------------------------------------------------------------------===//

/// Where a tensor of a hand-built program lives. In the arena, `index` names the value and
/// `offset` its range; values that reuse a range have distinct indices.
struct Place {
  BufferKind kind = BufferKind::Arena;
  uint32_t index = 0;
  uint64_t offset = 0;
  std::vector<int64_t> dims;

  uint64_t bytes() const { return static_cast<uint64_t>(numElements(dims)) * sizeof(float); }
  /// The same value seen with other dims of the same element count (a reshape).
  Place view(std::vector<int64_t> other) const {
    EXPECT_EQ(numElements(other), numElements(dims));
    Place place = *this;
    place.dims = std::move(other);
    return place;
  }
};

Place arenaValue(uint32_t index, uint64_t offset, std::vector<int64_t> dims) {
  return {BufferKind::Arena, index, offset, std::move(dims)};
}

/// The layout a probe expects its value to be kept in.
enum class Kept { kBlocked, kPlain };

/// Prepares the convolution `builder` describes, whose binding 1 (weights of `weight_dims`) is
/// Constant at offset 0 of seeded random constants, as the compiler emits weights.
std::unique_ptr<kiln::runtime::cpu::LibraryCallKernel> prepareWithConstantWeights(
    LibraryCallBuilder* builder, const std::vector<int64_t>& weight_dims) {
  std::vector<float> weights = randomValues(weight_dims, 5);
  return prepare(builder->build(), reinterpret_cast<const uint8_t*>(weights.data()));
}

/// Whether oneDNN computes a 1x16x8x8 -> 32-channel 3x3 convolution with constant weights in a
/// layout of its own choice rather than plain NCHW on this machine (it does with AVX-512: nhwc
/// with oneDNN 2.6 on an AMD EPYC); where it does not, no value can stay in a oneDNN layout and
/// every probe expects the plain one.
bool blockedLayoutsAvailable() {
  static const bool available = [] {
    LibraryCallBuilder builder("onednn.convolution");
    builder.binding({1, 16, 8, 8}).binding({32, 16, 3, 3}, BufferKind::Constant);
    builder.binding({1, 32, 8, 8});
    builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
    auto kernel = prepareWithConstantWeights(&builder, {32, 16, 3, 3});
    return kernel != nullptr && kernel->nativeLayout(2) != nullptr;
  }();
  return available;
}

/// The layout `raw` holds the N x C x H x W values `plain` in: "nchw", "nhwc", "nChw16c",
/// "nChw8c", "nChw4c", or "unknown". Values match within 1e-3 (relative above 1).
std::string layoutOf(const std::vector<float>& raw, const std::vector<float>& plain,
                     const std::vector<int64_t>& dims) {
  if (dims.size() != 4 || raw.size() != plain.size()) return "unknown";
  const int64_t N = dims[0], C = dims[1], H = dims[2], W = dims[3];
  auto matches = [&](const std::function<int64_t(int64_t, int64_t, int64_t, int64_t)>& at) {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w) {
            float want = plain[((n * C + c) * H + h) * W + w];
            float got = raw[at(n, c, h, w)];
            if (!(std::fabs(got - want) <= 1e-3f * (1.0f + std::fabs(want)))) return false;
          }
    return true;
  };
  if (matches([&](int64_t n, int64_t c, int64_t h, int64_t w) {
        return ((n * C + c) * H + h) * W + w;
      }))
    return "nchw";
  if (matches([&](int64_t n, int64_t c, int64_t h, int64_t w) {
        return ((n * H + h) * W + w) * C + c;
      }))
    return "nhwc";
  for (int64_t block : {16, 8, 4}) {
    if (C % block != 0) continue;
    if (matches([&](int64_t n, int64_t c, int64_t h, int64_t w) {
          return (((n * (C / block) + c / block) * H + h) * W + w) * block + c % block;
        }))
      return "nChw" + std::to_string(block) + "c";
  }
  return "unknown";
}

/// The plain data of every value of one reference run, by (kind, index).
using ReferenceValues = std::map<std::pair<BufferKind, uint32_t>, std::vector<float>>;

std::pair<BufferKind, uint32_t> keyOf(const Place& place) { return {place.kind, place.index}; }

/// A program under construction and its reference: each step adds an artifact step and the
/// computation of its result over ReferenceValues.
class NegotiationProgram {
 public:
  Place input(std::vector<int64_t> dims) {
    uint32_t index = static_cast<uint32_t>(spec_.inputs.size());
    spec_.inputs.push_back({"in" + std::to_string(index), KILN_ELEMENT_TYPE_F32, dims, {}});
    return {BufferKind::Input, index, 0, std::move(dims)};
  }

  Place output(std::vector<int64_t> dims) {
    uint32_t index = static_cast<uint32_t>(spec_.outputs.size());
    spec_.outputs.push_back({"out" + std::to_string(index), KILN_ELEMENT_TYPE_F32, dims, {}});
    probe_of_output_.push_back(-1);
    return {BufferKind::Output, index, 0, std::move(dims)};
  }

  /// An onednn.convolution of `src` with `features` size x size kernels (stride, symmetric pad),
  /// seeded constant weights scaled by 1/sqrt(fan-in) and an optional bias; `addends` feed the
  /// "add" entries of `post_ops` in order.
  void conv(const Place& src, int64_t features, int64_t size, int64_t stride, int64_t pad,
            bool bias, std::vector<std::string> post_ops, std::vector<Place> addends,
            const Place& dst) {
    ConvCase c;
    c.name = "step " + std::to_string(spec_.steps.size());
    c.src = src.dims;
    c.weights = {features, src.dims[1], size, size};
    c.strides = {stride, stride};
    c.dilations = {1, 1};
    c.pads_begin = {pad, pad};
    c.pads_end = {pad, pad};
    c.bias = bias;
    c.post_ops = post_ops;
    for (const Place& addend : addends) c.addends.push_back(addend.dims);
    c.constant_weights = true;
    EXPECT_EQ(outputDims(c), dst.dims) << c.name;

    uint32_t seed = 1000 + 10 * static_cast<uint32_t>(spec_.steps.size());
    std::vector<float> weights = randomValues(c.weights, seed);
    float scale = 1.0f / std::sqrt(static_cast<float>(numElements(c.weights) / features));
    for (float& w : weights) w *= scale;
    std::vector<float> bias_values;
    if (bias) {
      bias_values = randomValues({features}, seed + 1);
      for (float& b : bias_values) b *= 0.5f;
    }

    StepSpec step;
    step.kind = fb::StepKind::LibraryCall;
    step.name = "onednn.convolution";
    step.bindings.push_back(binding(src));
    step.bindings.push_back(constant(weights, c.weights));
    if (bias) step.bindings.push_back(constant(bias_values, {features}));
    for (const Place& addend : addends) step.bindings.push_back(binding(addend));
    step.bindings.push_back(binding(dst));
    step.int_params = {{"strides", c.strides},
                       {"dilations", c.dilations},
                       {"pads_begin", c.pads_begin},
                       {"pads_end", c.pads_end}};
    if (!post_ops.empty()) step.string_params["post_ops"] = post_ops;
    spec_.steps.push_back(std::move(step));

    reference_.push_back([c, src, addends, dst, weights, bias_values](ReferenceValues& values) {
      std::vector<float> result =
          referenceConvolution(c, values.at(keyOf(src)), weights, bias_values);
      std::vector<std::pair<std::vector<int64_t>, const float*>> operands;
      for (const Place& addend : addends)
        operands.emplace_back(addend.dims, values.at(keyOf(addend)).data());
      applyPostOps(&result, dst.dims, c.post_ops, {}, operands);
      values[keyOf(dst)] = std::move(result);
    });
  }

  /// A Copy step.
  void copy(const Place& src, const Place& dst) {
    StepSpec step;
    step.kind = fb::StepKind::Copy;
    step.bindings = {binding(src), binding(dst)};
    spec_.steps.push_back(std::move(step));
    reference_.push_back([src, dst](ReferenceValues& values) {
      values[keyOf(dst)] = values.at(keyOf(src));
    });
  }

  /// A dispatch of kiln_test_affine_f32 (x * 1.5 - 0.25) over `src`, seen as rows of
  /// KILN_TEST_BLOCK elements, into `dst` of the same shape.
  void affine(const Place& src, const Place& dst) {
    int64_t count = numElements(src.dims);
    EXPECT_EQ(count % KILN_TEST_BLOCK, 0);
    if (spec_.code_objects.empty()) {
      spec_.code_objects.push_back({"x86_64",
                                    fb::CodeFormat::ElfSharedObject,
                                    testKernelBytes(),
                                    {"kiln_test_add_f32", "kiln_test_affine_f32"}});
    }
    std::vector<int64_t> rows = {count / KILN_TEST_BLOCK, KILN_TEST_BLOCK};
    StepSpec step;
    step.kind = fb::StepKind::Dispatch;
    step.kernel = 1;
    step.workgroups = {static_cast<uint32_t>(rows[0])};
    step.bindings = {binding(src.view(rows)), constant({kScale, kShift}, {2}),
                     binding(dst.view(rows))};
    step.name = "affine";
    spec_.steps.push_back(std::move(step));
    reference_.push_back([src, dst](ReferenceValues& values) {
      std::vector<float> result = values.at(keyOf(src));
      for (float& v : result) v = v * kScale + kShift;
      values[keyOf(dst)] = std::move(result);
    });
  }

  /// An onednn.matmul of the 2-D `a` (M x K) with seeded constant K x n weights into `dst`.
  void matmul(const Place& a, int64_t n, const Place& dst) {
    int64_t m = a.dims[0], k = a.dims[1];
    EXPECT_EQ(dst.dims, (std::vector<int64_t>{m, n}));
    std::vector<float> b = randomValues({k, n}, 2000 + static_cast<uint32_t>(spec_.steps.size()));
    StepSpec step;
    step.kind = fb::StepKind::LibraryCall;
    step.name = "onednn.matmul";
    step.bindings = {binding(a), constant(b, {k, n}), binding(dst)};
    spec_.steps.push_back(std::move(step));
    reference_.push_back([a, dst, b, m, n, k](ReferenceValues& values) {
      const std::vector<float>& lhs = values.at(keyOf(a));
      std::vector<float> result(m * n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0.0;
          for (int64_t t = 0; t < k; ++t) acc += double(lhs[i * k + t]) * b[t * n + j];
          result[i * n + j] = float(acc);
        }
      values[keyOf(dst)] = std::move(result);
    });
  }

  /// Copies the bytes of the arena range of `value` as they are at this point of the program
  /// into a new output, through an arena index no step writes, and expects them to hold the
  /// value in the layout `kept` says.
  void probe(const Place& value, Kept kept) {
    EXPECT_EQ(value.kind, BufferKind::Arena);
    Place out = output(value.dims);
    probe_of_output_.back() = static_cast<int>(probes_.size());
    Place raw = arenaValue(kProbeIndex + static_cast<uint32_t>(probes_.size()), value.offset,
                           value.dims);
    probes_.push_back({value, kept});
    copy(raw, out);
    // The copy's reference read the never-written index: make it the value's plain data.
    reference_.back() = [value, out](ReferenceValues& values) {
      values[keyOf(out)] = values.at(keyOf(value));
    };
  }

  std::string artifactBytes() const {
    ArtifactSpec spec = spec_;
    spec.constants = constants_;
    spec.arena_size = arena_end_;
    spec.naive_intermediate_size = arena_end_;
    return buildArtifact(spec);
  }

  /// Seeded random data for every input.
  std::vector<std::vector<float>> inputs(uint32_t seed) const {
    std::vector<std::vector<float>> data;
    for (size_t i = 0; i < spec_.inputs.size(); ++i)
      data.push_back(randomValues(spec_.inputs[i].dims, seed + 7919 * static_cast<uint32_t>(i)));
    return data;
  }

  const std::vector<SignatureSpec>& inputSignatures() const { return spec_.inputs; }

  /// Checks the outputs of one run on `inputs` against the reference.
  void check(const std::vector<std::vector<float>>& inputs,
             const std::vector<Tensor>& outputs) const {
    ReferenceValues values;
    for (size_t i = 0; i < inputs.size(); ++i)
      values[{BufferKind::Input, static_cast<uint32_t>(i)}] = inputs[i];
    for (const auto& step : reference_) step(values);
    ASSERT_EQ(outputs.size(), spec_.outputs.size());
    for (size_t o = 0; o < outputs.size(); ++o) {
      const float* data = outputs[o].dataAs<float>();
      std::vector<float> actual(data, data + outputs[o].elementCount());
      const std::vector<float>& expected = values.at({BufferKind::Output, static_cast<uint32_t>(o)});
      int probe = probe_of_output_[o];
      if (probe < 0) {
        SCOPED_TRACE("output " + std::to_string(o));
        expectClose(actual, expected, 2e-4f, 2e-4f);
        continue;
      }
      const Probe& p = probes_[probe];
      std::string layout = layoutOf(actual, expected, p.value.dims);
      std::string what = "arena value " + std::to_string(p.value.index) + " at offset " +
                         std::to_string(p.value.offset) + " (probe output " +
                         std::to_string(o) + ")";
      if (p.kept == Kept::kBlocked && blockedLayoutsAvailable()) {
        EXPECT_TRUE(layout != "nchw" && layout != "unknown")
            << what << " should stay in oneDNN's blocked layout but holds " << layout;
      } else {
        EXPECT_EQ(layout, "nchw") << what << " should be plain";
      }
    }
  }

 private:
  struct Probe {
    Place value;
    Kept kept;
  };
  static constexpr uint32_t kProbeIndex = 1000;

  BindingSpec binding(const Place& place) {
    BindingSpec b;
    b.kind = place.kind;
    b.index = place.index;
    b.offset = place.offset;
    b.size = place.bytes();
    b.dims = place.dims;
    if (place.kind == BufferKind::Arena)
      arena_end_ = std::max(arena_end_, (place.offset + place.bytes() + 63) / 64 * 64);
    return b;
  }

  /// A Constant binding of `values`, appended to the constants at a 64-byte boundary.
  BindingSpec constant(const std::vector<float>& values, std::vector<int64_t> dims) {
    uint64_t offset = (constants_.size() + 63) / 64 * 64;
    constants_.resize(offset + values.size() * sizeof(float));
    std::memcpy(constants_.data() + offset, values.data(), values.size() * sizeof(float));
    BindingSpec b;
    b.kind = BufferKind::Constant;
    b.offset = offset;
    b.size = values.size() * sizeof(float);
    b.dims = std::move(dims);
    return b;
  }

  ArtifactSpec spec_;
  std::vector<uint8_t> constants_;
  uint64_t arena_end_ = 0;
  std::vector<std::function<void(ReferenceValues&)>> reference_;
  std::vector<Probe> probes_;
  /// Per output: the probe it holds, or -1 for a result of the program.
  std::vector<int> probe_of_output_;
};

/// One run of `program` on `inputs` in `session`; an error names what failed.
Result<std::vector<Tensor>> runOnce(const Session& session, const NegotiationProgram& program,
                                    const std::vector<std::vector<float>>& inputs) {
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Result<Tensor> tensor =
        Tensor::fromData(KILN_ELEMENT_TYPE_F32, program.inputSignatures()[i].dims,
                         inputs[i].data(), inputs[i].size() * sizeof(float));
    if (!tensor.ok()) return tensor.status();
    tensors.push_back(std::move(*tensor));
  }
  std::vector<const Tensor*> pointers;
  for (const Tensor& tensor : tensors) pointers.push_back(&tensor);
  return session.run(pointers);
}

/// Runs `program` twice each in sessions of 1, 2 and 4 threads (the second run finds the
/// arena the first left behind), then from 4 threads at once on one 2-thread session, and
/// checks every run.
void runAndCheck(const NegotiationProgram& program) {
  std::string bytes = program.artifactBytes();
  Result<Artifact> artifact = Artifact::loadMemory(bytes.data(), bytes.size(), "negotiation.kiln");
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  uint32_t seed = 1;
  for (uint32_t threads : {1u, 2u, 4u}) {
    SCOPED_TRACE(std::to_string(threads) + " session thread(s)");
    Result<Session> session =
        Session::create(*artifact, SessionOptions{KILN_DEVICE_KIND_CPU, threads});
    ASSERT_TRUE(session.ok()) << session.status().toString();
    for (int repeat = 0; repeat < 2; ++repeat) {
      std::vector<std::vector<float>> inputs = program.inputs(seed++);
      Result<std::vector<Tensor>> outputs = runOnce(*session, program, inputs);
      ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
      program.check(inputs, *outputs);
    }
  }

  constexpr int kClients = 4, kRunsPerClient = 3;
  Result<Session> shared = Session::create(*artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 2});
  ASSERT_TRUE(shared.ok()) << shared.status().toString();
  std::vector<std::vector<std::vector<float>>> inputs(kClients * kRunsPerClient);
  std::vector<std::vector<Tensor>> outputs(inputs.size());
  std::vector<std::string> errors(inputs.size());
  for (size_t r = 0; r < inputs.size(); ++r) inputs[r] = program.inputs(100 + 10 * r);
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&, t] {
      for (int r = t * kRunsPerClient; r < (t + 1) * kRunsPerClient; ++r) {
        Result<std::vector<Tensor>> got = runOnce(*shared, program, inputs[r]);
        if (got.ok())
          outputs[r] = std::move(*got);
        else
          errors[r] = got.status().toString();
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (size_t r = 0; r < inputs.size(); ++r) {
    SCOPED_TRACE("concurrent run " + std::to_string(r));
    ASSERT_EQ(errors[r], "");
    program.check(inputs[r], outputs[r]);
  }
}

constexpr uint64_t k32x8x8 = 32 * 8 * 8 * sizeof(float);  // 8 KiB, a 1x32x8x8 value

// The kernels' side of the negotiation: a convolution offers its blocked destination, and takes
// it as a source or as the addend of a sum post-op, never as weights, a binary post-op's operand,
// a reshaped view or another library's layout.
TEST(LayoutNegotiationTest, ConvolutionKernelsOfferAndAcceptTheirBlockedLayout) {
  if (!blockedLayoutsAvailable()) {
#if defined(__x86_64__)
    ASSERT_FALSE(__builtin_cpu_supports("avx512f"))
        << "oneDNN keeps a 32-channel convolution result plain on an AVX-512 machine";
#endif
    GTEST_SKIP() << "oneDNN picks no blocked layout on this machine";
  }
  LibraryCallBuilder a_builder("onednn.convolution");
  a_builder.binding({1, 16, 8, 8}).binding({32, 16, 3, 3}, BufferKind::Constant);
  a_builder.binding({1, 32, 8, 8});
  a_builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1}).strings("post_ops", {"relu"});
  auto a = prepareWithConstantWeights(&a_builder, {32, 16, 3, 3});
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(a->writes(0));
  EXPECT_FALSE(a->writes(1));
  EXPECT_TRUE(a->writes(2));
  EXPECT_EQ(a->nativeLayout(0), nullptr);
  std::shared_ptr<const kiln::runtime::cpu::ActivationLayout> layout = a->nativeLayout(2);
  ASSERT_NE(layout, nullptr);
  EXPECT_STREQ(layout->library(), "onednn");
  EXPECT_EQ(layout->byteSize(), k32x8x8);  // 32 channels: no padding

  // A 1x1 convolution of the result: its source, not its weights.
  LibraryCallBuilder b_builder("onednn.convolution");
  b_builder.binding({1, 32, 8, 8}).binding({32, 32, 1, 1}, BufferKind::Constant);
  b_builder.binding({1, 32, 8, 8});
  auto b = prepareWithConstantWeights(&b_builder, {32, 32, 1, 1});
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->accepts(0, *layout));
  EXPECT_FALSE(b->accepts(1, *layout));

  // A full-shape "add" is a sum post-op and takes it.
  LibraryCallBuilder c_builder("onednn.convolution");
  c_builder.binding({1, 16, 8, 8}).binding({32, 16, 3, 3}, BufferKind::Constant);
  c_builder.binding({1, 32, 8, 8}).binding({1, 32, 8, 8});
  c_builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  c_builder.strings("post_ops", {"add", "relu"});
  auto c = prepareWithConstantWeights(&c_builder, {32, 16, 3, 3});
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->accepts(2, *layout));
  EXPECT_NE(c->nativeLayout(3), nullptr);

  // A second full-shape "add" is a binary post-op, which does not take it (and which sends
  // oneDNN 2.6 to a plain implementation).
  LibraryCallBuilder c2_builder("onednn.convolution");
  c2_builder.binding({1, 16, 8, 8}).binding({32, 16, 3, 3}, BufferKind::Constant);
  c2_builder.binding({1, 32, 8, 8}).binding({1, 32, 8, 8}).binding({1, 32, 8, 8});
  c2_builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  c2_builder.strings("post_ops", {"add", "add", "relu"});
  auto c2 = prepareWithConstantWeights(&c2_builder, {32, 16, 3, 3});
  ASSERT_NE(c2, nullptr);
  EXPECT_FALSE(c2->accepts(3, *layout));

  // A reshaped view of the value has other dims.
  LibraryCallBuilder d_builder("onednn.convolution");
  d_builder.binding({1, 32, 4, 16}).binding({32, 32, 1, 1}, BufferKind::Constant);
  d_builder.binding({1, 32, 4, 16});
  auto d = prepareWithConstantWeights(&d_builder, {32, 32, 1, 1});
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->accepts(0, *layout));

  // A layout of another library.
  struct OtherLayout : kiln::runtime::cpu::ActivationLayout {
    const char* library() const override { return "other"; }
    uint64_t byteSize() const override { return k32x8x8; }
  };
  EXPECT_FALSE(b->accepts(0, OtherLayout()));
}

// Case 1: A -> B through an arena value, which stays blocked.
TEST(LayoutNegotiationTest, ChainKeepsTheIntermediateBlocked) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 1, 1, 0, true, {}, {}, out);
  p.probe(x, Kept::kBlocked);
  runAndCheck(p);
}

// Three convolutions over a batch of 2, the last strided, through two arena values.
TEST(LayoutNegotiationTest, LongerChainWithABatchOfTwo) {
  NegotiationProgram p;
  Place in = p.input({2, 16, 8, 8});
  Place x = arenaValue(0, 0, {2, 32, 8, 8});
  Place y = arenaValue(1, 2 * k32x8x8, {2, 32, 8, 8});
  Place out = p.output({2, 16, 4, 4});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 1, 1, 0, false, {"relu"}, {}, y);
  p.probe(x, Kept::kBlocked);
  p.conv(y, 16, 3, 2, 1, true, {}, {}, out);
  p.probe(y, Kept::kBlocked);
  runAndCheck(p);
}

// Case 2: a residual block. C reads B's result as its source and A's as the addend of its sum
// post-op; both values stay blocked.
TEST(LayoutNegotiationTest, ResidualSumReadsTheBlockedValue) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place y = arenaValue(1, k32x8x8, {1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 3, 1, 1, true, {"relu"}, {}, y);
  p.conv(y, 32, 1, 1, 0, true, {"add", "relu"}, {x}, out);
  p.probe(x, Kept::kBlocked);
  p.probe(y, Kept::kBlocked);
  runAndCheck(p);
}

// The residual's result stays blocked too when another convolution reads it: C takes a blocked
// addend and writes a blocked destination.
TEST(LayoutNegotiationTest, ResidualIntoAnotherConvolution) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place y = arenaValue(1, k32x8x8, {1, 32, 8, 8});
  Place z = arenaValue(2, 2 * k32x8x8, {1, 32, 8, 8});
  Place out = p.output({1, 16, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 3, 1, 1, true, {"relu"}, {}, y);
  p.conv(y, 32, 1, 1, 0, true, {"add", "relu"}, {x}, z);
  p.conv(z, 16, 3, 1, 1, true, {}, {}, out);
  p.probe(x, Kept::kBlocked);
  p.probe(y, Kept::kBlocked);
  p.probe(z, Kept::kBlocked);
  runAndCheck(p);
}

// A plain addend (X is also an output, copied out) into a blocked destination (Z): the sum
// post-op converts the addend into the destination's layout.
TEST(LayoutNegotiationTest, PlainAddendIntoABlockedDestination) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place y = arenaValue(1, k32x8x8, {1, 32, 8, 8});
  Place z = arenaValue(2, 2 * k32x8x8, {1, 32, 8, 8});
  Place out = p.output({1, 16, 8, 8});
  Place x_out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.copy(x, x_out);
  p.conv(x, 32, 3, 1, 1, true, {"relu"}, {}, y);
  p.conv(y, 32, 1, 1, 0, true, {"add", "relu"}, {x}, z);
  p.conv(z, 16, 3, 1, 1, true, {}, {}, out);
  p.probe(x, Kept::kPlain);
  p.probe(y, Kept::kBlocked);
  p.probe(z, Kept::kBlocked);
  runAndCheck(p);
}

// One value as both the source and the sum addend of one convolution: relu(conv(x) + x).
TEST(LayoutNegotiationTest, SourceAndAddendAreOneValue) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 3, 1, 1, true, {"add", "relu"}, {x}, out);
  p.probe(x, Kept::kBlocked);
  runAndCheck(p);
}

// Case 3: values something else reads stay plain, and every reader sees the right data.

// A's result is a program output (written straight into the caller's tensor) that B reads too.
TEST(LayoutNegotiationTest, AnOutputReadByAConvolution) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place a_out = p.output({1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, a_out);
  p.conv(a_out, 32, 1, 1, 0, true, {}, {}, out);
  runAndCheck(p);
}

// A Copy step reads the value (the output copy of an arena value).
TEST(LayoutNegotiationTest, AValueACopyReadsStaysPlain) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  Place x_out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 1, 1, 0, true, {}, {}, out);
  p.copy(x, x_out);
  p.probe(x, Kept::kPlain);
  runAndCheck(p);
}

// A generated kernel (a dispatch) reads the value, between the two convolutions.
TEST(LayoutNegotiationTest, AValueADispatchReadsStaysPlain) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  Place scaled = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.affine(x, scaled);
  p.conv(x, 32, 1, 1, 0, true, {}, {}, out);
  p.probe(x, Kept::kPlain);
  runAndCheck(p);
}

// A oneDNN matmul (a library call that takes only plain operands) reads a 2-D view of the value.
TEST(LayoutNegotiationTest, AValueAMatmulReadsStaysPlain) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  Place product = p.output({32, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 1, 1, 0, true, {}, {}, out);
  p.matmul(x.view({32, 64}), 8, product);
  p.probe(x, Kept::kPlain);
  runAndCheck(p);
}

// A convolution reads the value as the operand of a binary "add" post-op (the second
// full-shape add; the first, W, is its sum). With a full-shape binary post-op oneDNN 2.6 runs
// the plain implementation, so W stays plain too.
TEST(LayoutNegotiationTest, AValueABinaryPostOpReadsStaysPlain) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place w = arenaValue(1, k32x8x8, {1, 32, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(in, 32, 1, 1, 0, false, {}, {}, w);
  p.conv(in, 32, 3, 1, 1, true, {"add", "add", "relu"}, {w, x}, out);
  p.probe(x, Kept::kPlain);
  p.probe(w, Kept::kPlain);
  runAndCheck(p);
}

// A convolution reads a reshaped view of the value (1x32x8x8 seen as 1x32x4x16).
TEST(LayoutNegotiationTest, AReshapedViewStaysPlain) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place out = p.output({1, 32, 4, 16});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x.view({1, 32, 4, 16}), 32, 1, 1, 0, true, {}, {}, out);
  p.probe(x, Kept::kPlain);
  runAndCheck(p);
}

// 24 channels. A layout that pads them (nChw16c to 32) would not fit the value's range and must
// not be used: V, right after X and live across A's write, would be overwritten. oneDNN 2.6 on
// this AVX-512 machine picks nhwc, which fits, and then X and V stay in it.
TEST(LayoutNegotiationTest, ValuesWithChannelsOffTheBlockSize) {
  constexpr uint64_t k24x8x8 = 24 * 8 * 8 * sizeof(float);
  // What the layout of A's result would take.
  LibraryCallBuilder builder("onednn.convolution");
  builder.binding({1, 16, 8, 8}).binding({24, 16, 3, 3}, BufferKind::Constant);
  builder.binding({1, 24, 8, 8});
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1}).strings("post_ops", {"relu"});
  auto kernel = prepareWithConstantWeights(&builder, {24, 16, 3, 3});
  ASSERT_NE(kernel, nullptr);
  auto layout = kernel->nativeLayout(2);
  bool fits = layout != nullptr && layout->byteSize() <= k24x8x8;
  Kept kept = fits ? Kept::kBlocked : Kept::kPlain;

  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 24, 8, 8});
  Place v = arenaValue(1, k24x8x8, {1, 24, 8, 8});
  Place y = arenaValue(2, 2 * k24x8x8, {1, 24, 8, 8});
  Place out = p.output({1, 24, 8, 8});
  p.conv(in, 24, 1, 1, 0, true, {}, {}, v);
  p.conv(in, 24, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 24, 3, 1, 1, true, {"relu"}, {}, y);
  p.conv(y, 24, 1, 1, 0, true, {"add"}, {v}, out);
  p.probe(x, kept);
  p.probe(v, kept);
  runAndCheck(p);
}

// Case 4: values that reuse one arena range are told apart by index: X (index 0) and Z (index
// 2) both live at offset 0, one after the other, and each stays blocked on its own.
TEST(LayoutNegotiationTest, ValuesReusingARangeAreToldApartByIndex) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place y = arenaValue(1, k32x8x8, {1, 32, 8, 8});
  Place z = arenaValue(2, 0, {1, 32, 8, 8});
  Place out = p.output({1, 16, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 1, 1, 0, true, {"relu"}, {}, y);
  p.probe(x, Kept::kBlocked);
  p.conv(y, 32, 3, 1, 1, true, {"relu"}, {}, z);
  p.conv(z, 16, 1, 1, 0, true, {}, {}, out);
  p.probe(z, Kept::kBlocked);
  runAndCheck(p);
}

// The same range holds a blocked value and then a plain one (Z is also copied out), and in the
// other program a plain one and then a blocked one.
TEST(LayoutNegotiationTest, ARangeHoldsBlockedThenPlainValues) {
  for (bool first_plain : {false, true}) {
    SCOPED_TRACE(first_plain ? "plain, then blocked" : "blocked, then plain");
    NegotiationProgram p;
    Place in = p.input({1, 16, 8, 8});
    Place x = arenaValue(0, 0, {1, 32, 8, 8});
    Place y = arenaValue(1, k32x8x8, {1, 32, 8, 8});
    Place z = arenaValue(2, 0, {1, 32, 8, 8});
    Place out = p.output({1, 16, 8, 8});
    Place copied = p.output({1, 32, 8, 8});
    p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
    if (first_plain) p.copy(x, copied);
    p.conv(x, 32, 1, 1, 0, true, {"relu"}, {}, y);
    p.probe(x, first_plain ? Kept::kPlain : Kept::kBlocked);
    p.conv(y, 32, 3, 1, 1, true, {"relu"}, {}, z);
    if (!first_plain) p.copy(z, copied);
    p.conv(z, 16, 1, 1, 0, true, {}, {}, out);
    p.probe(z, first_plain ? Kept::kBlocked : Kept::kPlain);
    runAndCheck(p);
  }
}

// Values of different shapes reuse one range: X (1x32x8x8) and then Z (1x16x8x8, a 16-channel
// blocked layout of its own) at offset 0.
TEST(LayoutNegotiationTest, ValuesOfDifferentShapesShareARange) {
  NegotiationProgram p;
  Place in = p.input({1, 16, 8, 8});
  Place x = arenaValue(0, 0, {1, 32, 8, 8});
  Place y = arenaValue(1, k32x8x8, {1, 32, 8, 8});
  Place z = arenaValue(2, 0, {1, 16, 8, 8});
  Place out = p.output({1, 32, 8, 8});
  p.conv(in, 32, 3, 1, 1, true, {"relu"}, {}, x);
  p.conv(x, 32, 3, 1, 1, true, {"relu"}, {}, y);
  p.probe(x, Kept::kBlocked);
  p.conv(y, 16, 1, 1, 0, true, {"relu"}, {}, z);
  p.conv(z, 32, 3, 1, 1, true, {}, {}, out);
  p.probe(z, Kept::kBlocked);
  runAndCheck(p);
}

}  // namespace
}  // namespace kiln::testing
