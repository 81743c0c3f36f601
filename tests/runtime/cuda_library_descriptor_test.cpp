//===- cuda_library_descriptor_test.cpp - Library descriptors, no GPU -----===//
//
// What the real libraries can check without a GPU: cuBLASLt's matmul descriptor and matrix
// layouts are created for every problem shape the runtime builds, and cuDNN's backend tensor,
// convolution and pointwise operation descriptors of the fused graph finalize, cuDNN validating
// each; a problem cuDNN must refuse (an output shape the convolution does not produce) fails.
// The cuDNN frontend's attention graph is validated for sm_80 and sm_90 against the installed
// cuDNN's support checks.
//
//===----------------------------------------------------------------------===//

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/src/cuda/cuda_library_problem.h"

namespace kiln::testing {
namespace {

using ::kiln::runtime::cuda::Activation;
using ::kiln::runtime::cuda::AttentionProblem;
using ::kiln::runtime::cuda::checkCublasLtDescriptors;
using ::kiln::runtime::cuda::checkCudnnAttentionGraph;
using ::kiln::runtime::cuda::checkCudnnConvolutionDescriptors;
using ::kiln::runtime::cuda::ConvolutionProblem;
using ::kiln::runtime::cuda::CudaCallCommon;
using ::kiln::runtime::cuda::MatmulProblem;

CudaCallCommon common(const std::string& label, kiln_element_type_t type, int bindings,
                      int bias = -1, int addend = -1, Activation activation = Activation::kNone) {
  CudaCallCommon result;
  result.label = label;
  result.element_type = type;
  result.epilogue.bias_binding = bias;
  result.epilogue.addend_binding = addend;
  result.epilogue.activation = activation;
  result.result_binding = bindings - 1;
  result.alignments.assign(static_cast<size_t>(bindings), 256);
  return result;
}

MatmulProblem matmul(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b,
                     const CudaCallCommon& call, int64_t batch = 1, int64_t a_stride = 0,
                     int64_t b_stride = 0) {
  MatmulProblem problem;
  problem.common = call;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.trans_a = trans_a;
  problem.trans_b = trans_b;
  problem.batch = batch;
  problem.a_batch_stride = a_stride;
  problem.b_batch_stride = b_stride;
  return problem;
}

TEST(CudaLibraryDescriptorTest, CublasLtDescribesEveryMatmulShape) {
  const kiln_element_type_t f32 = KILN_ELEMENT_TYPE_F32, f16 = KILN_ELEMENT_TYPE_F16;
  const MatmulProblem problems[] = {
      matmul(64, 48, 32, false, false, common("plain", f32, 3)),
      matmul(64, 48, 32, true, false, common("a transposed", f32, 3)),
      matmul(64, 48, 32, false, true, common("b transposed", f32, 3)),
      matmul(7, 5, 3, true, true, common("both transposed", f32, 3)),
      matmul(16, 24, 8, false, false, common("batched, b broadcast, bias, relu", f32, 4, 2, -1,
                                             Activation::kRelu),
             3, 16 * 8, 0),
      matmul(128, 3072, 768, false, false,
             common("f16 gelu", f16, 4, 2, -1, Activation::kGelu)),
      matmul(32, 32, 32, false, false, common("addend", f32, 4, -1, 2)),
  };
  for (const MatmulProblem& problem : problems) {
    Status status = checkCublasLtDescriptors(problem);
    EXPECT_TRUE(status.ok()) << problem.common.label << ": " << status.toString();
  }
}

ConvolutionProblem convolution(const CudaCallCommon& call, std::vector<int64_t> x,
                               std::vector<int64_t> w, std::vector<int64_t> y,
                               std::vector<int64_t> strides, std::vector<int64_t> pads_begin,
                               std::vector<int64_t> pads_end, int64_t groups = 1) {
  ConvolutionProblem problem;
  problem.common = call;
  problem.x_dims = std::move(x);
  problem.w_dims = std::move(w);
  problem.y_dims = std::move(y);
  problem.strides = std::move(strides);
  problem.dilations.assign(problem.strides.size(), 1);
  problem.pads_begin = std::move(pads_begin);
  problem.pads_end = std::move(pads_end);
  problem.groups = groups;
  return problem;
}

TEST(CudaLibraryDescriptorTest, CudnnFinalizesTheFusedGraphsOperations) {
  const kiln_element_type_t f32 = KILN_ELEMENT_TYPE_F32, f16 = KILN_ELEMENT_TYPE_F16;
  const ConvolutionProblem problems[] = {
      convolution(common("3x3", f32, 3), {1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56},
                  {1, 1}, {1, 1}, {1, 1}),
      convolution(common("stride 2, asymmetric pads, bias, relu", f32, 4, 2, -1,
                         Activation::kRelu),
                  {2, 3, 224, 224}, {64, 3, 7, 7}, {2, 64, 112, 112}, {2, 2}, {2, 2}, {3, 3}),
      convolution(common("f16 bias, addend, relu", f16, 5, 2, 3, Activation::kRelu),
                  {1, 32, 28, 28}, {32, 32, 1, 1}, {1, 32, 28, 28}, {1, 1}, {0, 0}, {0, 0}),
      convolution(common("2 groups", f32, 3), {1, 8, 16, 16}, {8, 4, 3, 3}, {1, 8, 16, 16},
                  {1, 1}, {1, 1}, {1, 1}, 2),
      convolution(common("3-D", f32, 3), {1, 4, 8, 8, 8}, {8, 4, 3, 3, 3}, {1, 8, 8, 8, 8},
                  {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
  };
  for (const ConvolutionProblem& problem : problems) {
    Status status = checkCudnnConvolutionDescriptors(problem);
    EXPECT_TRUE(status.ok()) << problem.common.label << ": " << status.toString();
  }
}

// Channels-last (NHWC) tensors, as kiln-cuda-channels-last gives half-precision convolutions:
// cuDNN validates the NHWC strides of x, w, the addend and y when the descriptors finalize.
TEST(CudaLibraryDescriptorTest, CudnnFinalizesChannelsLastGraphs) {
  const kiln_element_type_t f16 = KILN_ELEMENT_TYPE_F16, bf16 = KILN_ELEMENT_TYPE_BF16;
  ConvolutionProblem problems[] = {
      convolution(common("nhwc f16 stem, bias, relu", f16, 4, 2, -1, Activation::kRelu),
                  {1, 3, 224, 224}, {64, 3, 7, 7}, {1, 64, 112, 112}, {2, 2}, {3, 3}, {3, 3}),
      convolution(common("nhwc bf16 bias, addend, relu", bf16, 5, 2, 3, Activation::kRelu),
                  {2, 64, 56, 56}, {256, 64, 1, 1}, {2, 256, 56, 56}, {1, 1}, {0, 0}, {0, 0}),
      convolution(common("nhwc f16 depthwise", f16, 3), {1, 32, 28, 28}, {32, 1, 3, 3},
                  {1, 32, 28, 28}, {1, 1}, {1, 1}, {1, 1}, 32),
  };
  for (ConvolutionProblem &problem : problems) {
    problem.channels_last = true;
    Status status = checkCudnnConvolutionDescriptors(problem);
    EXPECT_TRUE(status.ok()) << problem.common.label << ": " << status.toString();
  }
}

TEST(CudaLibraryDescriptorTest, ChannelsLastStridesPutChannelsInnermost) {
  using ::kiln::runtime::cuda::tensorStrides;
  EXPECT_EQ(tensorStrides({2, 3, 4, 5}, false), (std::vector<int64_t>{60, 20, 5, 1}));
  EXPECT_EQ(tensorStrides({2, 3, 4, 5}, true), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(tensorStrides({2, 3, 4, 5, 6}, true), (std::vector<int64_t>{360, 1, 90, 18, 3}));
}

TEST(CudaLibraryDescriptorTest, CudnnRefusesAnOutputTheConvolutionDoesNotProduce) {
  // Stride 2 halves 56 to 28; a 56 x 56 output is wrong and cuDNN must say so.
  ConvolutionProblem wrong = convolution(common("wrong output", KILN_ELEMENT_TYPE_F32, 3),
                                         {1, 64, 56, 56}, {64, 64, 3, 3}, {1, 64, 56, 56},
                                         {2, 2}, {1, 1}, {1, 1});
  Status status = checkCudnnConvolutionDescriptors(wrong);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), ::testing::HasSubstr("cudnnBackendFinalize"));
}

/// BERT's attention as the compiler emits it: Q, K and V read from the fused projection [1, S,
/// 3 x H x D] (K as [B, H, S, D] with its head dim contiguous), the padding mask [1, 1, 1, S]
/// broadcast, the result written into the merged heads [1, S, H x D].
AttentionProblem bertAttention(kiln_element_type_t type, int64_t heads, int64_t head_dim) {
  const int64_t s = 128, row = 3 * heads * head_dim;
  AttentionProblem problem;
  problem.common = common("bert attention", type, 5);
  problem.call.has_mask = true;
  problem.call.scale = 0.125f;
  problem.call.sq = problem.call.skv = s;
  problem.call.d = problem.call.dv = head_dim;
  auto view = [](int64_t offset, std::vector<int64_t> dims, std::vector<int64_t> strides) {
    kiln::runtime::StridedView result;
    result.offset = offset;
    result.dims = std::move(dims);
    result.strides = std::move(strides);
    result.given = true;
    return result;
  };
  problem.q = view(0, {1, heads, s, head_dim}, {s * row, head_dim, row, 1});
  problem.k = view(heads * head_dim, {1, heads, s, head_dim}, {s * row, head_dim, row, 1});
  problem.v = view(2 * heads * head_dim, {1, heads, s, head_dim}, {s * row, head_dim, row, 1});
  problem.mask = view(0, {1, 1, 1, s}, {s, s, s, 1});
  problem.o =
      view(0, {1, heads, s, head_dim}, {s * heads * head_dim, head_dim, heads * head_dim, 1});
  return problem;
}

TEST(CudaLibraryDescriptorTest, CudnnFrontendValidatesAttentionGraphs) {
  for (int sm : {80, 90}) {
    for (kiln_element_type_t type : {KILN_ELEMENT_TYPE_F16, KILN_ELEMENT_TYPE_BF16}) {
      Status status = checkCudnnAttentionGraph(bertAttention(type, 12, 64), sm);
      EXPECT_TRUE(status.ok()) << "sm_" << sm << ": " << status.toString();
    }
  }
  // Grouped queries as Llama has them (32 query heads, 8 key and value heads read out of the
  // fused projection [1, S, (32 + 2 x 8) x 128]): cuDNN's SDPA takes K and V with fewer heads.
  {
    const int64_t s = 128, heads = 32, kv = 8, d = 128, row = (heads + 2 * kv) * d;
    AttentionProblem grouped = bertAttention(KILN_ELEMENT_TYPE_BF16, heads, d);
    grouped.call.kv_group = heads / kv;
    grouped.q.strides = {s * row, d, row, 1};
    grouped.k.offset = heads * d;
    grouped.k.dims = {1, kv, s, d};
    grouped.k.strides = {s * row, d, row, 1};
    grouped.v.offset = (heads + kv) * d;
    grouped.v.dims = {1, kv, s, d};
    grouped.v.strides = {s * row, d, row, 1};
    for (int sm : {80, 90}) {
      Status status = checkCudnnAttentionGraph(grouped, sm);
      EXPECT_TRUE(status.ok()) << "sm_" << sm << ": " << status.toString();
    }
  }
  // A head dim that is not a multiple of 8: the frontend's support check refuses it.
  Status status = checkCudnnAttentionGraph(bertAttention(KILN_ELEMENT_TYPE_F16, 2, 12), 90);
  EXPECT_EQ(status.code(), KILN_STATUS_UNIMPLEMENTED) << status.toString();
  EXPECT_THAT(status.message(), ::testing::HasSubstr("bert attention"));
  EXPECT_THAT(status.message(), ::testing::HasSubstr("hidden_dim"));
}

}  // namespace
}  // namespace kiln::testing
