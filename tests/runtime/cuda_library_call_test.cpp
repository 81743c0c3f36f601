//===- cuda_library_call_test.cpp - Tests of the CUDA device's library calls ---===//
//
// checkCudaLibraryCall on LibraryCall tables built in memory (no GPU needed): valid calls pass,
// bad ones fail with a code and a message that names the call and the problem, and the choices of
// cudnn.convolution's legacy fallback. Then, on a GPU and on the simulated device, cublaslt.matmul,
// cudnn.convolution (each convolution through both the fused graph and the forced legacy API) and
// cudnn.attention (f16) computed on seeded non-zero data in f32 and f16 against straightforward
// host loops; without a device the GPU cases skip.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/cuda_library_call.h"

#include <cuda_fp16.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/src/cuda/cuda_api.h"
#include "runtime/src/cuda/cuda_device.h"
#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/cuda/sim/sim_cuda_api.h"
#include "tests/runtime/onednn/onednn_test_util.h"

namespace {

using ::kiln::artifact::BufferKind;
using ::kiln::runtime::cuda::checkCudaLibraryCall;
using ::kiln::testing::LibraryCallBuilder;
using ::testing::HasSubstr;

constexpr int kF32 = KILN_ELEMENT_TYPE_F32;
constexpr int kF16 = KILN_ELEMENT_TYPE_F16;

/// Expects `call` to be refused with `code` and a message naming the call and `problem`.
void expectRefused(LibraryCallBuilder& builder, kiln_status_code_t code,
                   const std::string& problem) {
  kiln::Status status = checkCudaLibraryCall(builder.build());
  EXPECT_EQ(status.code(), code) << status.toString();
  EXPECT_THAT(status.message(), HasSubstr("(test call)"));
  EXPECT_THAT(status.message(), HasSubstr(problem));
}

void expectAccepted(LibraryCallBuilder& builder) {
  kiln::Status status = checkCudaLibraryCall(builder.build());
  EXPECT_TRUE(status.ok()) << status.toString();
}

/// A valid f32 matmul a[8x16] b[16x12] + bias[12], relu.
LibraryCallBuilder validMatmul(int type = kF32) {
  LibraryCallBuilder builder("cublaslt.matmul");
  builder.binding({8, 16}, BufferKind::Arena, 0, type)
      .binding({16, 12}, BufferKind::Constant, 0, type)
      .binding({12}, BufferKind::Constant, 1024, type)
      .binding({8, 12}, BufferKind::Arena, 4096, type);
  builder.strings("post_ops", {"relu"});
  return builder;
}

/// A valid conv x[1x4x8x8] w[8x4x3x3] pads 1 + bias[8] + addend[1x8x8x8], relu.
LibraryCallBuilder validConvolution(int type = kF32) {
  LibraryCallBuilder builder("cudnn.convolution");
  builder.binding({1, 4, 8, 8}, BufferKind::Input, 0, type)
      .binding({8, 4, 3, 3}, BufferKind::Constant, 0, type)
      .binding({8}, BufferKind::Constant, 2048, type)
      .binding({1, 8, 8, 8}, BufferKind::Arena, 0, type)
      .binding({1, 8, 8, 8}, BufferKind::Output, 0, type);
  builder.ints("strides", {1, 1}).ints("dilations", {1, 1});
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  builder.strings("post_ops", {"add", "relu"});
  return builder;
}

//===----------------------------------------------------------------------===//
// Valid calls
//===----------------------------------------------------------------------===//

TEST(CudaLibraryCallCheckTest, ValidMatmulsAreAccepted) {
  LibraryCallBuilder f32 = validMatmul();
  expectAccepted(f32);
  LibraryCallBuilder f16 = validMatmul(kF16);
  expectAccepted(f16);
  LibraryCallBuilder bf16 = validMatmul(KILN_ELEMENT_TYPE_BF16);
  expectAccepted(bf16);

  // Gemm-style: transposes, alpha and a full addend (cuBLASLt's C), tf32 allowed.
  LibraryCallBuilder gemm("cublaslt.matmul");
  gemm.binding({16, 8}).binding({12, 16}).binding({8, 12}).binding({8, 12});
  gemm.ints("trans_a", {1}).ints("trans_b", {1}).ints("allow_tf32", {1});
  gemm.strings("post_ops", {"linear", "add", "gelu"}).floats("post_op_args", {0.5f, 0.0f});
  expectAccepted(gemm);

  // Batched, and each operand broadcast against the other's batch.
  LibraryCallBuilder batched("cublaslt.matmul");
  batched.binding({2, 3, 8, 16}).binding({2, 3, 16, 12}).binding({2, 3, 8, 12});
  expectAccepted(batched);
  LibraryCallBuilder broadcast_b("cublaslt.matmul");
  broadcast_b.binding({2, 3, 8, 16}).binding({16, 12}).binding({2, 3, 8, 12});
  expectAccepted(broadcast_b);
  LibraryCallBuilder broadcast_a("cublaslt.matmul");
  broadcast_a.binding({1, 8, 16}).binding({5, 16, 12}).binding({5, 8, 12});
  expectAccepted(broadcast_a);
}

TEST(CudaLibraryCallCheckTest, ValidConvolutionsAreAccepted) {
  LibraryCallBuilder f32 = validConvolution();
  expectAccepted(f32);
  LibraryCallBuilder f16 = validConvolution(kF16);
  expectAccepted(f16);

  // 1-D, strided, dilated, asymmetric pads, grouped, no epilogue.
  LibraryCallBuilder conv1d("cudnn.convolution");
  conv1d.binding({2, 6, 20}).binding({9, 2, 3}).binding({2, 9, 10});
  conv1d.ints("strides", {2}).ints("dilations", {2}).ints("pads_begin", {1});
  conv1d.ints("pads_end", {2}).ints("groups", {3});
  expectAccepted(conv1d);

  // 3-D with a bias only.
  LibraryCallBuilder conv3d("cudnn.convolution");
  conv3d.binding({1, 2, 4, 4, 4}).binding({3, 2, 2, 2, 2}).binding({3}).binding({1, 3, 3, 3, 3});
  expectAccepted(conv3d);
}

TEST(CudaLibraryCallCheckTest, AlignmentFollowsTheBuffer) {
  kiln::runtime::LibraryCallBinding binding;
  binding.kind = BufferKind::Arena;
  binding.offset = 0;
  EXPECT_EQ(kiln::runtime::cuda::assumedAlignment(binding), 256u);
  binding.offset = 4096 + 64;
  EXPECT_EQ(kiln::runtime::cuda::assumedAlignment(binding), 64u);
  binding.offset = 6;
  EXPECT_EQ(kiln::runtime::cuda::assumedAlignment(binding), 2u);
  binding.kind = BufferKind::Input;
  binding.offset = 0;
  EXPECT_EQ(kiln::runtime::cuda::assumedAlignment(binding), 16u);
}

//===----------------------------------------------------------------------===//
// Bad calls
//===----------------------------------------------------------------------===//

TEST(CudaLibraryCallCheckTest, UnknownCallIsUnimplementedAndNamed) {
  LibraryCallBuilder builder("onednn.matmul");
  builder.binding({8, 16}).binding({16, 12}).binding({8, 12});
  expectRefused(builder, KILN_STATUS_UNIMPLEMENTED,
                "'onednn.matmul' (test call) is not available on the cuda device");
}

TEST(CudaLibraryCallCheckTest, WrongOperandCountIsRefused) {
  LibraryCallBuilder matmul("cublaslt.matmul");
  matmul.binding({8, 16}).binding({8, 12});
  expectRefused(matmul, KILN_STATUS_INVALID_ARGUMENT, "has 2 bindings; expected a, b");
  // An "add" post-op without its operand.
  LibraryCallBuilder conv("cudnn.convolution");
  conv.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}).binding({1, 8, 6, 6});
  conv.strings("post_ops", {"add", "relu"});
  expectRefused(conv, KILN_STATUS_INVALID_ARGUMENT, "has 3 bindings; expected x, w");
}

TEST(CudaLibraryCallCheckTest, PostOpsOutOfOrderAreRefused) {
  LibraryCallBuilder relu_first = validConvolution();
  relu_first.strings("post_ops", {"relu", "add"});
  expectRefused(relu_first, KILN_STATUS_INVALID_ARGUMENT,
                "post-op 1 ('add') follows the activation");

  LibraryCallBuilder linear_late("cublaslt.matmul");
  linear_late.binding({8, 16}).binding({16, 12}).binding({8, 12}).binding({8, 12});
  linear_late.strings("post_ops", {"add", "linear"}).floats("post_op_args", {2.0f, 0.0f});
  expectRefused(linear_late, KILN_STATUS_INVALID_ARGUMENT, "post-op 1 ('linear') must come first");

  LibraryCallBuilder two_adds("cublaslt.matmul");
  two_adds.binding({8, 16}).binding({16, 12}).binding({8, 12}).binding({8, 12}).binding({8, 12});
  two_adds.strings("post_ops", {"add", "add"});
  expectRefused(two_adds, KILN_STATUS_INVALID_ARGUMENT, "is a second 'add'");
}

TEST(CudaLibraryCallCheckTest, LinearMustBeAPureScale) {
  LibraryCallBuilder shifted("cublaslt.matmul");
  shifted.binding({8, 16}).binding({16, 12}).binding({8, 12});
  shifted.strings("post_ops", {"linear"}).floats("post_op_args", {2.0f, 1.0f});
  expectRefused(shifted, KILN_STATUS_INVALID_ARGUMENT, "has shift 1");

  // With a bias, alpha scales the product and the bias is added after it (cuBLASLt's order).
  LibraryCallBuilder with_bias = validMatmul();
  with_bias.strings("post_ops", {"linear", "relu"}).floats("post_op_args", {2.0f, 0.0f});
  expectAccepted(with_bias);

  LibraryCallBuilder missing_args("cublaslt.matmul");
  missing_args.binding({8, 16}).binding({16, 12}).binding({8, 12});
  missing_args.strings("post_ops", {"linear"}).floats("post_op_args", {2.0f});
  expectRefused(missing_args, KILN_STATUS_INVALID_ARGUMENT, "needs 2 values of 'post_op_args'");

  LibraryCallBuilder leftover = validMatmul();
  leftover.floats("post_op_args", {1.0f});
  expectRefused(leftover, KILN_STATUS_INVALID_ARGUMENT,
                "'post_op_args' has 1 values, the post-ops use 0");
}

TEST(CudaLibraryCallCheckTest, PostOpsTheLibraryCannotFuseAreUnimplemented) {
  LibraryCallBuilder conv_gelu = validConvolution();
  conv_gelu.strings("post_ops", {"add", "gelu"});
  expectRefused(conv_gelu, KILN_STATUS_UNIMPLEMENTED, "('gelu') is not fused by 'cudnn.convolution'");

  LibraryCallBuilder conv_linear("cudnn.convolution");
  conv_linear.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}).binding({1, 8, 6, 6});
  conv_linear.strings("post_ops", {"linear"}).floats("post_op_args", {2.0f, 0.0f});
  expectRefused(conv_linear, KILN_STATUS_UNIMPLEMENTED, "('linear') is not fused by 'cudnn.convolution'");

  LibraryCallBuilder clip = validMatmul();
  clip.strings("post_ops", {"clip"}).floats("post_op_args", {0.0f, 6.0f});
  expectRefused(clip, KILN_STATUS_UNIMPLEMENTED, "('clip') is not fused");

  LibraryCallBuilder unknown = validMatmul();
  unknown.strings("post_ops", {"tanh"});
  expectRefused(unknown, KILN_STATUS_INVALID_ARGUMENT, "post-op 0 is 'tanh'");
}

TEST(CudaLibraryCallCheckTest, MismatchedMatmulShapesAreRefused) {
  LibraryCallBuilder contraction("cublaslt.matmul");
  contraction.binding({8, 16}).binding({15, 12}).binding({8, 12});
  expectRefused(contraction, KILN_STATUS_INVALID_ARGUMENT,
                "a's contraction size 16 differs from b's 15");

  LibraryCallBuilder result("cublaslt.matmul");
  result.binding({8, 16}).binding({16, 12}).binding({8, 11});
  expectRefused(result, KILN_STATUS_INVALID_ARGUMENT, "must end in 8 x 12");

  LibraryCallBuilder bias("cublaslt.matmul");
  bias.binding({8, 16}).binding({16, 12}).binding({8}).binding({8, 12});
  expectRefused(bias, KILN_STATUS_INVALID_ARGUMENT, "the bias (8) must have dims 12");

  LibraryCallBuilder addend("cublaslt.matmul");
  addend.binding({8, 16}).binding({16, 12}).binding({1, 12}).binding({8, 12});
  addend.strings("post_ops", {"add"});
  expectRefused(addend, KILN_STATUS_INVALID_ARGUMENT,
                "the 'add' operand (1x12) must have the result's dims (8x12)");

  LibraryCallBuilder batch("cublaslt.matmul");
  batch.binding({2, 8, 16}).binding({3, 16, 12}).binding({3, 8, 12});
  expectRefused(batch, KILN_STATUS_INVALID_ARGUMENT,
                "batch dimension 0 of a (2) does not broadcast to the result's 3");

  // Broadcasting one batch dim but not the other has no single cuBLASLt batch stride.
  LibraryCallBuilder partial("cublaslt.matmul");
  partial.binding({2, 3, 8, 16}).binding({2, 1, 16, 12}).binding({2, 3, 8, 12});
  expectRefused(partial, KILN_STATUS_UNIMPLEMENTED, "broadcasts only some batch dimensions");

  // A batched transposed a is a column-major layout with a batch stride.
  LibraryCallBuilder trans("cublaslt.matmul");
  trans.binding({2, 16, 8}).binding({16, 12}).binding({2, 8, 12});
  trans.ints("trans_a", {1});
  expectAccepted(trans);
}

/// Attention's Q·Kᵀ read through strides from one [1, 8, 48] projection: Q (heads 8 apart, rows
/// 48 apart) and Kᵀ (offset 16, a column-major layout).
LibraryCallBuilder viewedMatmul() {
  LibraryCallBuilder builder("cublaslt.matmul");
  builder.binding({1, 8, 48}).binding({1, 8, 48}).binding({1, 2, 8, 8});
  builder.ints("a_view", {0, 1, 2, 8, 8, 384, 8, 48, 1});
  builder.ints("b_view", {16, 1, 2, 8, 8, 384, 8, 1, 48});
  return builder;
}

TEST(CudaLibraryCallCheckTest, MatrixLayoutViewsAreAcceptedAndOthersRefused) {
  LibraryCallBuilder attention = viewedMatmul();
  expectAccepted(attention);

  // The result's heads merged back: [1, 8, 16] written with heads 8 apart, rows 16 apart.
  LibraryCallBuilder merged("cublaslt.matmul");
  merged.binding({1, 2, 8, 8}).binding({1, 8, 48}).binding({1, 8, 16});
  merged.ints("b_view", {32, 1, 2, 8, 8, 384, 8, 48, 1});
  merged.ints("dst_view", {0, 1, 2, 8, 8, 128, 8, 16, 1});
  expectAccepted(merged);

  // No unit stride along either of the last two dims.
  LibraryCallBuilder strided = viewedMatmul();
  strided.ints("a_view", {0, 1, 2, 8, 8, 384, 8, 48, 2});
  expectRefused(strided, KILN_STATUS_UNIMPLEMENTED, "has no unit stride along its last two dims");

  // Batch 2 of the projection: batch entries 384 apart and heads 8 apart do not nest.
  LibraryCallBuilder nested("cublaslt.matmul");
  nested.binding({2, 8, 48}).binding({2, 8, 48}).binding({2, 2, 8, 8});
  nested.ints("a_view", {0, 2, 2, 8, 8, 384, 8, 48, 1});
  nested.ints("b_view", {16, 2, 2, 8, 8, 384, 8, 1, 48});
  expectRefused(nested, KILN_STATUS_UNIMPLEMENTED, "do not nest as one stride");

  // Past the binding's end, and a malformed encoding.
  LibraryCallBuilder outside = viewedMatmul();
  outside.ints("b_view", {40, 1, 2, 8, 8, 384, 8, 1, 48});
  expectRefused(outside, KILN_STATUS_INVALID_ARGUMENT, "reaches outside binding 1 (1x8x48)");
  LibraryCallBuilder malformed = viewedMatmul();
  malformed.ints("a_view", {0, 8, 8, 48});
  expectRefused(malformed, KILN_STATUS_INVALID_ARGUMENT, "a view is [offset, dims..., strides...]");

  // A written view that reaches an element twice.
  LibraryCallBuilder twice("cublaslt.matmul");
  twice.binding({1, 2, 8, 8}).binding({1, 8, 48}).binding({1, 8, 16});
  twice.ints("b_view", {32, 1, 2, 8, 8, 384, 8, 48, 1});
  twice.ints("dst_view", {0, 1, 2, 8, 8, 128, 4, 16, 1});
  expectRefused(twice, KILN_STATUS_INVALID_ARGUMENT, "writes some elements twice");
}

TEST(CudaLibraryCallCheckTest, MismatchedConvolutionShapesAreRefused) {
  LibraryCallBuilder window("cudnn.convolution");
  window.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}).binding({1, 8, 7, 8});
  window.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  expectRefused(window, KILN_STATUS_INVALID_ARGUMENT,
                "spatial dimension 0 of the result is 7; the window gives 8");

  LibraryCallBuilder groups = validConvolution();
  groups.ints("groups", {3});
  expectRefused(groups, KILN_STATUS_INVALID_ARGUMENT, "groups = 3 must divide");

  LibraryCallBuilder strides = validConvolution();
  strides.ints("strides", {1, 1, 1});
  expectRefused(strides, KILN_STATUS_INVALID_ARGUMENT, "'strides' has 3 values, expected 2");

  LibraryCallBuilder rank("cudnn.convolution");
  rank.binding({4, 8}).binding({8, 4}).binding({4, 8});
  expectRefused(rank, KILN_STATUS_INVALID_ARGUMENT, "x has rank 2");

  LibraryCallBuilder addend("cudnn.convolution");
  addend.binding({1, 4, 8, 8}).binding({8, 4, 3, 3}).binding({1, 8, 1, 1}).binding({1, 8, 6, 6});
  addend.strings("post_ops", {"add"});
  expectRefused(addend, KILN_STATUS_INVALID_ARGUMENT, "must have the result's dims");
}

TEST(CudaLibraryCallCheckTest, UnknownKeysAreRefused) {
  LibraryCallBuilder conv = validConvolution();
  conv.ints("padding", {1, 1});
  expectRefused(conv, KILN_STATUS_INVALID_ARGUMENT, "unknown int parameter 'padding'");
  LibraryCallBuilder matmul = validMatmul();
  matmul.floats("alpha", {1.0f});
  expectRefused(matmul, KILN_STATUS_INVALID_ARGUMENT, "unknown float parameter 'alpha'");
  LibraryCallBuilder tf32 = validMatmul();
  tf32.ints("allow_tf32", {2});
  expectRefused(tf32, KILN_STATUS_INVALID_ARGUMENT, "allow_tf32 must be 0 or 1");
}

TEST(CudaLibraryCallCheckTest, UnsupportedTypesAreRefused) {
  LibraryCallBuilder integer("cublaslt.matmul");
  integer.binding({8, 16}, BufferKind::Arena, 0, KILN_ELEMENT_TYPE_I32)
      .binding({16, 12}, BufferKind::Arena, 0, KILN_ELEMENT_TYPE_I32)
      .binding({8, 12}, BufferKind::Arena, 0, KILN_ELEMENT_TYPE_I32);
  expectRefused(integer, KILN_STATUS_INVALID_ARGUMENT, "take f32, f16 or bf16 tensors");

  LibraryCallBuilder mixed("cublaslt.matmul");
  mixed.binding({8, 16}, BufferKind::Arena, 0, kF16).binding({16, 12}).binding({8, 12});
  expectRefused(mixed, KILN_STATUS_INVALID_ARGUMENT, "binding 1 is f32 but binding 0 is f16");
}

//===----------------------------------------------------------------------===//
// The legacy convolution fallback's choices
//===----------------------------------------------------------------------===//

using ::kiln::runtime::cuda::Activation;
using ::kiln::runtime::cuda::ConvolutionProblem;
using ::kiln::runtime::cuda::LegacyAlgorithmCandidate;
using ::kiln::runtime::cuda::LegacyConvolutionChoice;
using ::kiln::runtime::cuda::LegacyEpilogue;

/// The problem of validConvolution (bias, addend, relu) as readConvolutionProblem leaves it.
ConvolutionProblem legacyProblem(int type = kF32) {
  ConvolutionProblem problem;
  problem.common.label = "library call 'cudnn.convolution' (test call)";
  problem.common.element_type = static_cast<kiln_element_type_t>(type);
  problem.common.epilogue.bias_binding = 2;
  problem.common.epilogue.addend_binding = 3;
  problem.common.epilogue.activation = Activation::kRelu;
  problem.common.result_binding = 4;
  problem.x_dims = {1, 4, 8, 8};
  problem.w_dims = {8, 4, 3, 3};
  problem.y_dims = {1, 8, 8, 8};
  problem.strides = problem.dilations = {1, 1};
  problem.pads_begin = problem.pads_end = {1, 1};
  return problem;
}

constexpr cudnnConvolutionFwdAlgo_t kGemm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
constexpr cudnnConvolutionFwdAlgo_t kPrecomp = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
constexpr cudnnConvolutionFwdAlgo_t kWinograd = CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
constexpr cudnnConvolutionFwdAlgo_t kFft = CUDNN_CONVOLUTION_FWD_ALGO_FFT;

std::vector<cudnnConvolutionFwdAlgo_t> algorithms(
    const std::vector<LegacyConvolutionChoice>& choices, LegacyEpilogue epilogue) {
  std::vector<cudnnConvolutionFwdAlgo_t> algos;
  for (const LegacyConvolutionChoice& choice : choices)
    if (choice.epilogue == epilogue) algos.push_back(choice.algo);
  return algos;
}

/// A cudnn.attention over a fused projection [2 x 24 x (H + 2 Hkv) * D] (H query heads and Hkv
/// key and value heads of D = 32; kv_group H / Hkv where they differ): Q, Kᵀ and V are views of
/// it, the mask [2 x 1 x 1 x 24] broadcasts over heads and rows, and dst is the merged heads
/// [2 x 24 x H*D]. `type` is every binding's.
LibraryCallBuilder validAttention(int type = kF16, int64_t h = 2, int64_t hkv = 2) {
  constexpr int64_t b = 2, s = 24, d = 32;
  const int64_t row = (h + 2 * hkv) * d;
  LibraryCallBuilder builder("cudnn.attention");
  for (int i = 0; i < 3; ++i)
    builder.binding({b, s, row}, BufferKind::Arena, 0, type);
  builder.binding({b, 1, 1, s}, BufferKind::Arena, 0, type)
      .binding({b, s, h * d}, BufferKind::Arena, 0, type);
  builder.ints("q_view", {0, b, h, s, d, s * row, d, row, 1})
      .ints("k_view", {h * d, b, hkv, d, s, s * row, d, 1, row})
      .ints("v_view", {(h + hkv) * d, b, hkv, s, d, s * row, d, row, 1})
      .ints("mask_view", {0, b, h, s, s, s, 0, 0, 1})
      .ints("dst_view", {0, b, h, s, d, s * h * d, d, h * d, 1})
      .floats("scale", {0.125f});
  if (h != hkv)
    builder.ints("kv_group", {h / hkv});
  return builder;
}

TEST(CudaLibraryCallCheckTest, HalfAttentionIsAcceptedAndOthersRefused) {
  LibraryCallBuilder half = validAttention();
  expectAccepted(half);
  LibraryCallBuilder f32 = validAttention(kF32);
  expectRefused(f32, KILN_STATUS_UNIMPLEMENTED, "takes f16 or bf16 tensors");
  LibraryCallBuilder guarded = validAttention();
  guarded.ints("zero_masked_rows", {1});
  expectRefused(guarded, KILN_STATUS_UNIMPLEMENTED, "'zero_masked_rows'");
  // Q with its head dim at stride 2: cuDNN reads the head dim with unit stride.
  LibraryCallBuilder strided = validAttention();
  strided.ints("q_view", {0, 2, 2, 24, 32, 24 * 192, 1, 192, 2});
  expectRefused(strided, KILN_STATUS_UNIMPLEMENTED, "along the head dim");
  LibraryCallBuilder mismatched = validAttention();
  mismatched.ints("v_view", {128, 2, 2, 24, 16, 24 * 192, 32, 192, 1});
  expectRefused(mismatched, KILN_STATUS_INVALID_ARGUMENT, "the views' dims do not agree");
  // Grouped queries: 4 query heads over 2 key and value heads; a group that does not divide
  // the heads is refused.
  LibraryCallBuilder grouped = validAttention(kF16, 4, 2);
  expectAccepted(grouped);
  LibraryCallBuilder uneven = validAttention(kF16, 4, 2);
  uneven.ints("kv_group", {3});
  expectRefused(uneven, KILN_STATUS_INVALID_ARGUMENT, "'kv_group' 3 does not divide");
}

TEST(CudaLibraryCallCheckTest, CollectivesCheckTheirDevicesAndSizes) {
  LibraryCallBuilder reduce("nccl.all_reduce");
  reduce.binding({2, 8}, BufferKind::Arena, 0, kF16).binding({2, 8}, BufferKind::Arena, 64, kF16);
  reduce.ints("devices", {2});
  expectAccepted(reduce);
  LibraryCallBuilder gather("nccl.all_gather");
  gather.binding({2, 8}).binding({4, 2, 8}, BufferKind::Arena, 128);
  gather.ints("devices", {4});
  expectAccepted(gather);
  // A gather's result holds every device's part; a sum's, one.
  LibraryCallBuilder short_gather("nccl.all_gather");
  short_gather.binding({2, 8}).binding({2, 2, 8}, BufferKind::Arena, 128);
  short_gather.ints("devices", {4});
  expectRefused(short_gather, KILN_STATUS_INVALID_ARGUMENT,
                "gathers 16 elements from 4 devices into 32; the result must hold 64");
  LibraryCallBuilder wide_sum("nccl.all_reduce");
  wide_sum.binding({2, 8}).binding({4, 8}, BufferKind::Arena, 128);
  wide_sum.ints("devices", {2});
  expectRefused(wide_sum, KILN_STATUS_INVALID_ARGUMENT, "the result must hold 16");
  LibraryCallBuilder alone("nccl.all_reduce");
  alone.binding({2, 8}).binding({2, 8}, BufferKind::Arena, 128);
  expectRefused(alone, KILN_STATUS_INVALID_ARGUMENT, "needs 'devices' of 2 or more");
}

TEST(CudnnLegacyConvolutionTest, AsymmetricPadsAreUnimplementedOnTheLegacyPath) {
  ConvolutionProblem symmetric = legacyProblem();
  kiln::Status status = kiln::runtime::cuda::checkLegacyConvolution(symmetric);
  EXPECT_TRUE(status.ok()) << status.toString();

  ConvolutionProblem asymmetric = legacyProblem();
  asymmetric.pads_end = {1, 2};
  status = kiln::runtime::cuda::checkLegacyConvolution(asymmetric);
  EXPECT_EQ(status.code(), KILN_STATUS_UNIMPLEMENTED) << status.toString();
  EXPECT_THAT(status.message(), HasSubstr("(test call)"));
  EXPECT_THAT(status.message(), HasSubstr("pads_begin 1x1 differ from pads_end 1x2"));
  EXPECT_THAT(status.message(), HasSubstr("pads both ends alike"));

  ConvolutionProblem huge = legacyProblem();
  huge.x_dims = {int64_t{1} << 20, 4, 1024, 1024};
  status = kiln::runtime::cuda::checkLegacyConvolution(huge);
  EXPECT_EQ(status.code(), KILN_STATUS_UNIMPLEMENTED) << status.toString();
  EXPECT_THAT(status.message(), HasSubstr("int dims and strides"));
}

TEST(CudnnLegacyConvolutionTest, MathTypeKeepsF32OffTensorCoresUnlessTf32IsAllowed) {
  using ::kiln::runtime::cuda::legacyMathType;
  ConvolutionProblem f32 = legacyProblem();
  EXPECT_EQ(legacyMathType(f32), CUDNN_FMA_MATH);
  f32.common.allow_tf32 = true;
  EXPECT_EQ(legacyMathType(f32), CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(legacyMathType(legacyProblem(kF16)), CUDNN_TENSOR_OP_MATH);
}

TEST(CudnnLegacyConvolutionTest, ReluRunsEveryUsableAlgorithmFused) {
  // Failed, over the cap, f16-converting and (for f32 without tf32) tensor-core candidates go.
  std::vector<LegacyAlgorithmCandidate> candidates = {
      {kWinograd, CUDNN_STATUS_NOT_SUPPORTED, 0, CUDNN_DEFAULT_MATH},
      {kFft, CUDNN_STATUS_SUCCESS, 1000, CUDNN_DEFAULT_MATH},
      {kGemm, CUDNN_STATUS_SUCCESS, 0, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION},
      {kPrecomp, CUDNN_STATUS_SUCCESS, 0, CUDNN_TENSOR_OP_MATH},
      {kGemm, CUDNN_STATUS_SUCCESS, 0, CUDNN_FMA_MATH},
      {kPrecomp, CUDNN_STATUS_SUCCESS, 100, CUDNN_DEFAULT_MATH},
  };
  std::vector<LegacyConvolutionChoice> f32 =
      kiln::runtime::cuda::rankLegacyChoices(legacyProblem(), candidates, 500);
  ASSERT_EQ(f32.size(), 2u);
  EXPECT_EQ(algorithms(f32, LegacyEpilogue::kBiasActivation),
            (std::vector<cudnnConvolutionFwdAlgo_t>{kGemm, kPrecomp}));
  for (const LegacyConvolutionChoice& choice : f32) EXPECT_EQ(choice.math, CUDNN_FMA_MATH);

  // f16 keeps tensor cores and the math type each candidate was rated with.
  std::vector<LegacyConvolutionChoice> f16 =
      kiln::runtime::cuda::rankLegacyChoices(legacyProblem(kF16), candidates, 500);
  ASSERT_EQ(f16.size(), 3u);
  EXPECT_EQ(f16[0].algo, kPrecomp);
  EXPECT_EQ(f16[0].math, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(f16[2].math, CUDNN_DEFAULT_MATH);
}

TEST(CudnnLegacyConvolutionTest, IdentityActivationIsFusedOnlyWithImplicitPrecompGemm) {
  std::vector<LegacyAlgorithmCandidate> candidates = {
      {kGemm, CUDNN_STATUS_SUCCESS, 0, CUDNN_FMA_MATH},
      {kPrecomp, CUDNN_STATUS_SUCCESS, 0, CUDNN_FMA_MATH},
  };
  // Bias and addend without relu: precomp fused first, then every algorithm unfused.
  ConvolutionProblem no_relu = legacyProblem();
  no_relu.common.epilogue.activation = Activation::kNone;
  std::vector<LegacyConvolutionChoice> ranked =
      kiln::runtime::cuda::rankLegacyChoices(no_relu, candidates, 0);
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].algo, kPrecomp);
  EXPECT_EQ(ranked[0].epilogue, LegacyEpilogue::kBiasActivation);
  EXPECT_EQ(algorithms(ranked, LegacyEpilogue::kSeparate),
            (std::vector<cudnnConvolutionFwdAlgo_t>{kGemm, kPrecomp}));

  // Without precomp on offer, nothing runs the identity activation.
  ranked = kiln::runtime::cuda::rankLegacyChoices(no_relu, {candidates[0]}, 0);
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_EQ(ranked[0].epilogue, LegacyEpilogue::kSeparate);

  // A bare convolution needs no epilogue call at all.
  ConvolutionProblem bare = no_relu;
  bare.common.epilogue.bias_binding = bare.common.epilogue.addend_binding = -1;
  ranked = kiln::runtime::cuda::rankLegacyChoices(bare, candidates, 0);
  EXPECT_EQ(algorithms(ranked, LegacyEpilogue::kSeparate),
            (std::vector<cudnnConvolutionFwdAlgo_t>{kGemm, kPrecomp}));
  EXPECT_TRUE(algorithms(ranked, LegacyEpilogue::kBiasActivation).empty());
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

/// Forces cudnn.convolution's legacy path (KILN_CUDNN_LEGACY=1) or not, for one scope.
class ScopedCudnnPath {
 public:
  explicit ScopedCudnnPath(bool legacy) {
    if (legacy)
      setenv("KILN_CUDNN_LEGACY", "1", 1);
    else
      unsetenv("KILN_CUDNN_LEGACY");
  }
  ~ScopedCudnnPath() { unsetenv("KILN_CUDNN_LEGACY"); }
  ScopedCudnnPath(const ScopedCudnnPath&) = delete;
  ScopedCudnnPath& operator=(const ScopedCudnnPath&) = delete;
};

/// The two paths a convolution test runs: the fused graph (which itself falls back to the legacy
/// API when no engine takes it) and the legacy API forced.
constexpr bool kConvolutionPaths[] = {false, true};

using ::kiln::testing::expectClose;
using ::kiln::testing::numElements;
using ::kiln::testing::randomValues;

/// Rounds `values` to `type` (f32: unchanged), so that the reference sees what the GPU sees.
std::vector<float> roundTo(int type, std::vector<float> values) {
  if (type == kF16)
    for (float& v : values) v = __half2float(__float2half_rn(v));
  return values;
}

/// Where a library-call test runs: cuBLASLt and cuDNN on a GPU (skipped without one), or the
/// simulated CUDA device's CPU references, through the same CudaApi.
enum class CallBackend { kGpu, kSimulator };

/// The CUDA device (or the simulator) of one test, parameterized by backend and element type.
class CudaLibraryCallGpuTest
    : public ::testing::TestWithParam<std::tuple<CallBackend, int>> {
 protected:
  void SetUp() override {
    if (backend() == CallBackend::kGpu) {
      kiln::Result<std::vector<kiln::runtime::CudaDeviceInfo>> devices =
          kiln::runtime::probeCudaDevices();
      if (!devices.ok()) GTEST_SKIP() << "no CUDA device: " << devices.status().message();
      api_ = kiln::runtime::cuda::createRealCudaApi();
    } else {
      api_ = kiln::runtime::cuda::sim::createSimCudaApi();
    }
    kiln::Result<std::vector<kiln::runtime::CudaDeviceInfo>> devices = api_->devices();
    ASSERT_TRUE(devices.ok()) << devices.status().toString();
    device_ = devices->front();
    ASSERT_TRUE(api_->setDevice(device_.ordinal).ok());
    ASSERT_TRUE(api_->streamCreate(&stream_).ok());
    // The context of the tests that prepare calls themselves (the real libraries only).
    context_.device = device_.ordinal;
    context_.compute_capability_major = device_.compute_capability_major;
    context_.compute_capability_minor = device_.compute_capability_minor;
    if (backend() == CallBackend::kGpu) {
      ASSERT_EQ(cublasLtCreate(&context_.cublaslt), CUBLAS_STATUS_SUCCESS);
      ASSERT_EQ(cudnnCreate(&context_.cudnn), CUDNN_STATUS_SUCCESS);
    }
  }

  void TearDown() override {
    if (!api_) return;
    for (void* buffer : buffers_) (void)api_->free(buffer);
    prepared_.clear();
    if (stream_) (void)api_->streamDestroy(stream_);
    if (context_.cudnn) cudnnDestroy(context_.cudnn);
    if (context_.cublaslt) cublasLtDestroy(context_.cublaslt);
  }

  CallBackend backend() const { return std::get<0>(GetParam()); }
  int elementType() const { return std::get<1>(GetParam()); }

  /// Runs validAttention(type, heads, kvHeads) on a seeded projection with the keys from
  /// `firstMasked` on of batch entry `maskedBatch` masked out (-10000, a padding mask), against
  /// referenceAttention. f16 only (cuDNN's fused attention).
  void checkAttention(int64_t heads, int64_t kvHeads, uint32_t seed, int maskedBatch,
                      int firstMasked);

  /// Runs `call` with `operands` (host f32 values, converted to the call's type) and returns the
  /// result as f32. Runs twice, so that a second enqueue with the same buffers is covered.
  std::vector<float> run(const kiln::artifact::LibraryCall& call, int type,
                         const std::vector<std::vector<float>>& operands, int64_t result_size) {
    std::unique_ptr<kiln::runtime::cuda::CudaLibraryCall> owned;
    kiln::Status status = api_->createLibraryCall(call, device_, stream_, nullptr, &owned);
    EXPECT_TRUE(status.ok()) << status.toString();
    if (!status.ok()) return {};
    kiln::runtime::cuda::CudaLibraryCall* prepared = owned.get();
    prepared_.push_back(std::move(owned));
    size_t element = type == kF16 ? 2 : 4;
    std::vector<void*> addresses;
    for (size_t i = 0; i <= operands.size(); ++i) {
      size_t count = i < operands.size() ? operands[i].size() : static_cast<size_t>(result_size);
      void* buffer = nullptr;
      EXPECT_TRUE(api_->malloc(&buffer, count * element).ok());
      buffers_.push_back(buffer);
      addresses.push_back(buffer);
      if (i == operands.size()) break;
      std::vector<uint8_t> bytes(count * element);
      for (size_t j = 0; j < count; ++j) {
        if (type == kF16) {
          __half h = __float2half_rn(operands[i][j]);
          std::memcpy(bytes.data() + 2 * j, &h, 2);
        } else {
          std::memcpy(bytes.data() + 4 * j, &operands[i][j], 4);
        }
      }
      EXPECT_TRUE(
          api_->memcpyAsync(buffer, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream_)
              .ok());
      EXPECT_TRUE(api_->streamSynchronize(stream_).ok());
    }
    void* workspace = nullptr;
    if (prepared->workspaceSize() > 0) {
      EXPECT_TRUE(api_->malloc(&workspace, prepared->workspaceSize()).ok());
      buffers_.push_back(workspace);
    }
    for (int repeat = 0; repeat < 2; ++repeat) {
      status = prepared->enqueue(stream_, addresses.data(), workspace);
      EXPECT_TRUE(status.ok()) << status.toString();
    }
    status = api_->streamSynchronize(stream_);
    EXPECT_TRUE(status.ok()) << status.toString();
    std::vector<uint8_t> bytes(static_cast<size_t>(result_size) * element);
    EXPECT_TRUE(api_->memcpyAsync(bytes.data(), addresses.back(), bytes.size(),
                                  cudaMemcpyDeviceToHost, stream_)
                    .ok());
    EXPECT_TRUE(api_->streamSynchronize(stream_).ok());
    std::vector<float> result(static_cast<size_t>(result_size));
    for (size_t j = 0; j < result.size(); ++j) {
      if (type == kF16) {
        __half h;
        std::memcpy(&h, bytes.data() + 2 * j, 2);
        result[j] = __half2float(h);
      } else {
        std::memcpy(&result[j], bytes.data() + 4 * j, 4);
      }
    }
    return result;
  }

  /// f16 results carry f16 rounding of values up to ~10 plus fp32-accumulated f16 inputs.
  void expectResult(const std::vector<float>& actual, const std::vector<float>& expected) {
    if (elementType() == kF16)
      expectClose(actual, expected, 2e-2f, 1e-2f);
    else
      expectClose(actual, expected, 1e-4f, 1e-4f);
  }

  std::unique_ptr<kiln::runtime::cuda::CudaApi> api_;
  kiln::runtime::CudaDeviceInfo device_;
  kiln::runtime::cuda::CudaLibraryContext context_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> buffers_;
  std::vector<std::unique_ptr<kiln::runtime::cuda::CudaLibraryCall>> prepared_;
};

/// Row-major reference matmul over batch dims broadcast NumPy-style; `a` and `b` already padded
/// to the result's rank.
std::vector<float> referenceMatmul(const std::vector<float>& a, const std::vector<int64_t>& a_dims,
                                   const std::vector<float>& b, const std::vector<int64_t>& b_dims,
                                   bool trans_a, bool trans_b, const std::vector<int64_t>& d_dims) {
  size_t rank = d_dims.size();
  int64_t m = d_dims[rank - 2], n = d_dims[rank - 1];
  int64_t k = trans_a ? a_dims[rank - 2] : a_dims[rank - 1];
  int64_t batch = numElements(d_dims) / (m * n);
  std::vector<float> d(static_cast<size_t>(numElements(d_dims)));
  for (int64_t t = 0; t < batch; ++t) {
    // The batch index of each operand: every dim where the operand has size 1 stays at 0.
    int64_t rest = t, a_batch = 0, b_batch = 0, a_scale = 1, b_scale = 1;
    for (int i = static_cast<int>(rank) - 3; i >= 0; --i) {
      int64_t index = rest % d_dims[i];
      rest /= d_dims[i];
      a_batch += (a_dims[i] == 1 ? 0 : index) * a_scale;
      b_batch += (b_dims[i] == 1 ? 0 : index) * b_scale;
      a_scale *= a_dims[i];
      b_scale *= b_dims[i];
    }
    const float* pa = a.data() + a_batch * m * k;
    const float* pb = b.data() + b_batch * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(trans_a ? pa[p * m + i] : pa[i * k + p]) *
                 double(trans_b ? pb[j * k + p] : pb[p * n + j]);
        d[t * m * n + i * n + j] = static_cast<float>(sum);
      }
  }
  return d;
}

TEST_P(CudaLibraryCallGpuTest, MatmulWithBiasAndRelu) {
  int type = elementType();
  const int64_t m = 33, k = 64, n = 40;
  std::vector<float> a = roundTo(type, randomValues({m, k}, 1));
  std::vector<float> b = roundTo(type, randomValues({n, k}, 2));  // stored transposed
  std::vector<float> bias = roundTo(type, randomValues({n}, 3));
  LibraryCallBuilder builder("cublaslt.matmul");
  builder.binding({m, k}, BufferKind::Arena, 0, type)
      .binding({n, k}, BufferKind::Arena, 0, type)
      .binding({n}, BufferKind::Arena, 0, type)
      .binding({m, n}, BufferKind::Arena, 0, type);
  builder.ints("trans_b", {1}).strings("post_ops", {"relu"});
  std::vector<float> actual = run(builder.build(), type, {a, b, bias}, m * n);
  if (HasFailure()) return;

  std::vector<float> expected = referenceMatmul(a, {m, k}, b, {n, k}, false, true, {m, n});
  for (int64_t i = 0; i < m * n; ++i) expected[i] = std::max(expected[i] + bias[i % n], 0.0f);
  expectResult(actual, expected);
}

TEST_P(CudaLibraryCallGpuTest, BatchedMatmulBroadcastsEitherOperand) {
  int type = elementType();
  struct Case {
    std::vector<int64_t> a, b, d;
  };
  // Both batched; b broadcast (folded into M); a broadcast (batch stride 0).
  for (const Case& c : {Case{{3, 17, 32}, {3, 32, 24}, {3, 17, 24}},
                        Case{{2, 3, 17, 32}, {32, 24}, {2, 3, 17, 24}},
                        Case{{17, 32}, {4, 32, 24}, {4, 17, 24}}}) {
    SCOPED_TRACE(kiln::runtime::formatTypeDims(c.a) + " @ " + kiln::runtime::formatTypeDims(c.b));
    std::vector<float> a = roundTo(type, randomValues(c.a, 4));
    std::vector<float> b = roundTo(type, randomValues(c.b, 5));
    LibraryCallBuilder builder("cublaslt.matmul");
    builder.binding(c.a, BufferKind::Arena, 0, type)
        .binding(c.b, BufferKind::Arena, 0, type)
        .binding(c.d, BufferKind::Arena, 0, type);
    std::vector<float> actual = run(builder.build(), type, {a, b}, numElements(c.d));
    if (HasFailure()) return;
    std::vector<int64_t> a_dims = c.a, b_dims = c.b;
    a_dims.insert(a_dims.begin(), c.d.size() - a_dims.size(), 1);
    b_dims.insert(b_dims.begin(), c.d.size() - b_dims.size(), 1);
    expectResult(actual, referenceMatmul(a, a_dims, b, b_dims, false, false, c.d));
  }
}

TEST_P(CudaLibraryCallGpuTest, MatmulWithAlphaAndAddend) {
  int type = elementType();
  const int64_t m = 24, k = 48, n = 16;
  std::vector<float> a = roundTo(type, randomValues({k, m}, 6));  // stored transposed
  std::vector<float> b = roundTo(type, randomValues({k, n}, 7));
  std::vector<float> addend = roundTo(type, randomValues({m, n}, 8));
  LibraryCallBuilder builder("cublaslt.matmul");
  builder.binding({k, m}, BufferKind::Arena, 0, type)
      .binding({k, n}, BufferKind::Arena, 0, type)
      .binding({m, n}, BufferKind::Arena, 0, type)
      .binding({m, n}, BufferKind::Arena, 0, type);
  builder.ints("trans_a", {1}).strings("post_ops", {"linear", "add"});
  builder.floats("post_op_args", {0.5f, 0.0f});
  std::vector<float> actual = run(builder.build(), type, {a, b, addend}, m * n);
  if (HasFailure()) return;
  std::vector<float> expected = referenceMatmul(a, {k, m}, b, {k, n}, true, false, {m, n});
  for (int64_t i = 0; i < m * n; ++i) expected[i] = 0.5f * expected[i] + addend[i];
  expectResult(actual, expected);
}

/// A cublaslt.matmul of a[m x k] and b[k x n] with a bias[n], writing d[m x n].
LibraryCallBuilder biasedMatmul(int type, int64_t m, int64_t k, int64_t n) {
  LibraryCallBuilder builder("cublaslt.matmul");
  builder.binding({m, k}, BufferKind::Arena, 0, type)
      .binding({k, n}, BufferKind::Arena, 0, type)
      .binding({n}, BufferKind::Arena, 0, type)
      .binding({m, n}, BufferKind::Arena, 0, type);
  return builder;
}

/// biasedMatmul's operands a, b and bias: random values from seeds `seed`, `seed + 1` and
/// `seed + 2`, rounded to `type`.
struct BiasedMatmulOperands {
  std::vector<float> a, b, bias;
  BiasedMatmulOperands(int type, int64_t m, int64_t k, int64_t n, int seed)
      : a(roundTo(type, randomValues({m, k}, seed))),
        b(roundTo(type, randomValues({k, n}, seed + 1))),
        bias(roundTo(type, randomValues({n}, seed + 2))) {}
};

// Alpha scales the product alone; the bias is added after it, then ReLU (cuBLASLt's order, which
// the compiler relies on when it scales a constant bias for a scale written after it).
TEST_P(CudaLibraryCallGpuTest, MatmulWithAlphaThenBiasAndRelu) {
  int type = elementType();
  const int64_t m = 20, k = 40, n = 24;
  const auto [a, b, bias] = BiasedMatmulOperands(type, m, k, n, 12);
  LibraryCallBuilder builder = biasedMatmul(type, m, k, n);
  builder.strings("post_ops", {"linear", "relu"}).floats("post_op_args", {0.25f, 0.0f});
  std::vector<float> actual = run(builder.build(), type, {a, b, bias}, m * n);
  if (HasFailure()) return;
  std::vector<float> expected = referenceMatmul(a, {m, k}, b, {k, n}, false, false, {m, n});
  for (int64_t i = 0; i < m * n; ++i)
    expected[i] = std::max(0.25f * expected[i] + bias[i % n], 0.0f);
  expectResult(actual, expected);
}

TEST_P(CudaLibraryCallGpuTest, MatmulWithBiasAndGelu) {
  int type = elementType();
  const int64_t m = 16, k = 32, n = 24;
  const auto [a, b, bias] = BiasedMatmulOperands(type, m, k, n, 9);
  LibraryCallBuilder builder = biasedMatmul(type, m, k, n);
  builder.strings("post_ops", {"gelu"});
  std::vector<float> actual = run(builder.build(), type, {a, b, bias}, m * n);
  if (HasFailure()) return;
  std::vector<float> expected = referenceMatmul(a, {m, k}, b, {k, n}, false, false, {m, n});
  for (int64_t i = 0; i < m * n; ++i) {
    float x = expected[i] + bias[i % n];
    expected[i] = 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
  }
  // cuBLASLt's GELU is the tanh approximation, within ~5e-4 of the erf form.
  if (type == kF16)
    expectClose(actual, expected, 2e-2f, 1e-2f);
  else
    expectClose(actual, expected, 1e-3f, 1e-4f);
}

/// NCHW reference convolution with groups, strides, dilations and pads.
std::vector<float> referenceConvolution(const std::vector<float>& x,
                                        const std::vector<int64_t>& x_dims,
                                        const std::vector<float>& w,
                                        const std::vector<int64_t>& w_dims,
                                        const std::vector<int64_t>& y_dims, int64_t stride,
                                        int64_t dilation, int64_t pad, int64_t groups) {
  int64_t batch = x_dims[0], channels = x_dims[1], height = x_dims[2], width = x_dims[3];
  int64_t features = w_dims[0], per_group = w_dims[1], kh = w_dims[2], kw = w_dims[3];
  int64_t oh = y_dims[2], ow = y_dims[3];
  std::vector<float> y(static_cast<size_t>(numElements(y_dims)));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < features; ++f) {
      int64_t group = f / (features / groups);
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0;
          for (int64_t c = 0; c < per_group; ++c)
            for (int64_t r = 0; r < kh; ++r)
              for (int64_t s = 0; s < kw; ++s) {
                int64_t hi = i * stride - pad + r * dilation, wi = j * stride - pad + s * dilation;
                if (hi < 0 || hi >= height || wi < 0 || wi >= width) continue;
                int64_t channel = group * per_group + c;
                sum += double(x[((b * channels + channel) * height + hi) * width + wi]) *
                       double(w[((f * per_group + c) * kh + r) * kw + s]);
              }
          y[((b * features + f) * oh + i) * ow + j] = static_cast<float>(sum);
        }
    }
  return y;
}

TEST_P(CudaLibraryCallGpuTest, ConvolutionWithBiasResidualAndRelu) {
  int type = elementType();
  const std::vector<int64_t> x_dims{2, 8, 10, 10}, w_dims{16, 8, 3, 3}, y_dims{2, 16, 10, 10};
  std::vector<float> x = roundTo(type, randomValues(x_dims, 12));
  std::vector<float> w = roundTo(type, randomValues(w_dims, 13));
  std::vector<float> bias = roundTo(type, randomValues({16}, 14));
  std::vector<float> residual = roundTo(type, randomValues(y_dims, 15));
  LibraryCallBuilder builder("cudnn.convolution");
  builder.binding(x_dims, BufferKind::Arena, 0, type)
      .binding(w_dims, BufferKind::Arena, 0, type)
      .binding({16}, BufferKind::Arena, 0, type)
      .binding(y_dims, BufferKind::Arena, 0, type)
      .binding(y_dims, BufferKind::Arena, 0, type);
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  builder.strings("post_ops", {"add", "relu"});
  std::vector<float> expected = referenceConvolution(x, x_dims, w, w_dims, y_dims, 1, 1, 1, 1);
  int64_t plane = 10 * 10;
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = std::max(expected[i] + bias[(i / plane) % 16] + residual[i], 0.0f);
  for (bool legacy : kConvolutionPaths) {
    SCOPED_TRACE(legacy ? "legacy API" : "fused graph");
    ScopedCudnnPath path(legacy);
    std::vector<float> actual =
        run(builder.build(), type, {x, w, bias, residual}, numElements(y_dims));
    if (HasFailure()) return;
    expectResult(actual, expected);
  }
}

TEST_P(CudaLibraryCallGpuTest, ConvolutionWithResidualAndReluButNoBias) {
  // The legacy path passes its zero bias and the residual as z with alpha2 = 1.
  int type = elementType();
  const std::vector<int64_t> x_dims{2, 8, 9, 9}, w_dims{12, 8, 3, 3}, y_dims{2, 12, 4, 4};
  std::vector<float> x = roundTo(type, randomValues(x_dims, 20));
  std::vector<float> w = roundTo(type, randomValues(w_dims, 21));
  std::vector<float> residual = roundTo(type, randomValues(y_dims, 22));
  LibraryCallBuilder builder("cudnn.convolution");
  builder.binding(x_dims, BufferKind::Arena, 0, type)
      .binding(w_dims, BufferKind::Arena, 0, type)
      .binding(y_dims, BufferKind::Arena, 0, type)
      .binding(y_dims, BufferKind::Arena, 0, type);
  builder.ints("strides", {2, 2}).ints("pads_begin", {0, 0}).ints("pads_end", {0, 0});
  builder.strings("post_ops", {"add", "relu"});
  std::vector<float> expected = referenceConvolution(x, x_dims, w, w_dims, y_dims, 2, 1, 0, 1);
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = std::max(expected[i] + residual[i], 0.0f);
  for (bool legacy : kConvolutionPaths) {
    SCOPED_TRACE(legacy ? "legacy API" : "fused graph");
    ScopedCudnnPath path(legacy);
    std::vector<float> actual = run(builder.build(), type, {x, w, residual}, numElements(y_dims));
    if (HasFailure()) return;
    expectResult(actual, expected);
  }
}

TEST_P(CudaLibraryCallGpuTest, ConvolutionWithBiasOnly) {
  // Without relu the legacy path runs the identity activation (IMPLICIT_PRECOMP_GEMM) or the
  // convolution then cudnnAddTensor; a negative result would be clamped if it ran ReLU.
  int type = elementType();
  const std::vector<int64_t> x_dims{1, 4, 7, 7}, w_dims{6, 4, 3, 3}, y_dims{1, 6, 7, 7};
  std::vector<float> x = roundTo(type, randomValues(x_dims, 23));
  std::vector<float> w = roundTo(type, randomValues(w_dims, 24));
  std::vector<float> bias = roundTo(type, randomValues({6}, 25));
  LibraryCallBuilder builder("cudnn.convolution");
  builder.binding(x_dims, BufferKind::Arena, 0, type)
      .binding(w_dims, BufferKind::Arena, 0, type)
      .binding({6}, BufferKind::Arena, 0, type)
      .binding(y_dims, BufferKind::Arena, 0, type);
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  std::vector<float> expected = referenceConvolution(x, x_dims, w, w_dims, y_dims, 1, 1, 1, 1);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] += bias[(i / 49) % 6];
  ASSERT_LT(*std::min_element(expected.begin(), expected.end()), 0.0f);
  for (bool legacy : kConvolutionPaths) {
    SCOPED_TRACE(legacy ? "legacy API" : "fused graph");
    ScopedCudnnPath path(legacy);
    std::vector<float> actual = run(builder.build(), type, {x, w, bias}, numElements(y_dims));
    if (HasFailure()) return;
    expectResult(actual, expected);
  }
}

TEST_P(CudaLibraryCallGpuTest, LegacyPathRefusesAsymmetricPads) {
  if (backend() == CallBackend::kSimulator) GTEST_SKIP() << "cuDNN's legacy API only";
  int type = elementType();
  LibraryCallBuilder builder("cudnn.convolution");
  builder.binding({1, 4, 8, 8}, BufferKind::Arena, 0, type)
      .binding({8, 4, 3, 3}, BufferKind::Arena, 0, type)
      .binding({1, 8, 7, 7}, BufferKind::Arena, 0, type);
  builder.ints("pads_begin", {0, 0}).ints("pads_end", {1, 1});
  ScopedCudnnPath path(/*legacy=*/true);
  std::unique_ptr<kiln::runtime::cuda::CudaLibraryCall> prepared;
  kiln::Status status =
      kiln::runtime::cuda::createCudaLibraryCall(builder.build(), context_, &prepared);
  EXPECT_EQ(status.code(), KILN_STATUS_UNIMPLEMENTED) << status.toString();
  EXPECT_THAT(status.message(), HasSubstr("pads both ends alike"));
}

TEST_P(CudaLibraryCallGpuTest, GroupedStridedDilatedConvolution) {
  int type = elementType();
  const std::vector<int64_t> x_dims{1, 6, 13, 13}, w_dims{9, 2, 3, 3}, y_dims{1, 9, 6, 6};
  std::vector<float> x = roundTo(type, randomValues(x_dims, 16));
  std::vector<float> w = roundTo(type, randomValues(w_dims, 17));
  LibraryCallBuilder builder("cudnn.convolution");
  builder.binding(x_dims, BufferKind::Arena, 0, type)
      .binding(w_dims, BufferKind::Arena, 0, type)
      .binding(y_dims, BufferKind::Arena, 0, type);
  builder.ints("strides", {2, 2}).ints("dilations", {2, 2}).ints("groups", {3});
  builder.ints("pads_begin", {1, 1}).ints("pads_end", {1, 1});
  std::vector<float> expected = referenceConvolution(x, x_dims, w, w_dims, y_dims, 2, 2, 1, 3);
  for (bool legacy : kConvolutionPaths) {
    SCOPED_TRACE(legacy ? "legacy API" : "fused graph");
    ScopedCudnnPath path(legacy);
    std::vector<float> actual = run(builder.build(), type, {x, w}, numElements(y_dims));
    if (HasFailure()) return;
    expectResult(actual, expected);
  }
}

/// softmax(scale * Q Kᵀ + mask) V in double per (batch, head), over the views validAttention
/// encodes: `qkv` is the fused projection [2 x 24 x (h + 2 hkv) * 32], `mask` [2 x 24], the
/// result the merged heads [2 x 24 x h * 32]; query head `head` reads key and value head
/// head / (h / hkv).
std::vector<float> referenceAttention(const std::vector<float> &qkv, const std::vector<float> &mask,
                                      float scale, int64_t h = 2, int64_t hkv = 2) {
  constexpr int64_t b = 2, s = 24, d = 32;
  const int64_t row = (h + 2 * hkv) * d;
  std::vector<float> out(static_cast<size_t>(b * s * h * d));
  for (int64_t n = 0; n < b; ++n)
    for (int64_t head = 0; head < h; ++head)
      for (int64_t i = 0; i < s; ++i) {
        const int64_t kv = head / (h / hkv);
        std::vector<double> scores(s);
        double largest = -INFINITY, sum = 0;
        for (int64_t j = 0; j < s; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += double(qkv[(n * s + i) * row + head * d + c]) *
                   double(qkv[(n * s + j) * row + h * d + kv * d + c]);
          scores[j] = scale * dot + mask[n * s + j];
          largest = std::max(largest, scores[j]);
        }
        for (double &score : scores)
          sum += (score = std::exp(score - largest));
        for (int64_t c = 0; c < d; ++c) {
          double value = 0;
          for (int64_t j = 0; j < s; ++j)
            value += scores[j] * double(qkv[(n * s + j) * row + (h + hkv) * d + kv * d + c]);
          out[(n * s + i) * h * d + head * d + c] = static_cast<float>(value / sum);
        }
      }
  return out;
}

void CudaLibraryCallGpuTest::checkAttention(int64_t heads, int64_t kvHeads, uint32_t seed,
                                            int maskedBatch, int firstMasked) {
  int type = elementType();
  if (type != kF16)
    GTEST_SKIP() << "cuDNN's fused attention is f16 and bf16 only";
  std::vector<float> qkv = roundTo(type, randomValues({2, 24, (heads + 2 * kvHeads) * 32}, seed));
  std::vector<float> mask(2 * 24, 0.0f);
  for (int j = firstMasked; j < 24; ++j)
    mask[maskedBatch * 24 + j] = -10000.0f;
  std::vector<float> actual = run(validAttention(type, heads, kvHeads).build(), type,
                                  {qkv, qkv, qkv, mask}, 2 * 24 * heads * 32);
  if (HasFailure())
    return;
  expectResult(actual, referenceAttention(qkv, mask, 0.125f, heads, kvHeads));
}

// The second sequence's last 5 keys are masked out, as a padding mask does.
TEST_P(CudaLibraryCallGpuTest, AttentionThroughViewsWithMask) { checkAttention(2, 2, 11, 1, 19); }

// Grouped-query attention: 4 query heads, 2 key and value heads (kv_group 2) read once each;
// the first sequence's last 7 keys masked.
TEST_P(CudaLibraryCallGpuTest, GroupedQueryAttention) { checkAttention(4, 2, 12, 0, 17); }

INSTANTIATE_TEST_SUITE_P(
    BackendsAndElementTypes, CudaLibraryCallGpuTest,
    ::testing::Combine(::testing::Values(CallBackend::kGpu, CallBackend::kSimulator),
                       ::testing::Values(kF32, kF16)),
    [](const ::testing::TestParamInfo<std::tuple<CallBackend, int>>& info) {
      return std::string(std::get<0>(info.param) == CallBackend::kGpu ? "Gpu" : "Simulator") +
             (std::get<1>(info.param) == kF16 ? "F16" : "F32");
    });

}  // namespace
