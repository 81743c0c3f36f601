// RUN: kiln-opt --split-input-file --kiln-select-cuda-library-calls --kiln-cuda-channels-last --canonicalize --cse %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-select-cuda-library-calls --kiln-cuda-channels-last=all-types --canonicalize --cse %s | FileCheck %s --check-prefix=ALL

// Tests a residual block in f16: the input is transposed once (shared by the first convolution
// and the residual add), the filters are reordered at compile time, the clip between the
// convolutions runs on the channels-last value, and the global pool becomes a reduction over
// H and W of the last convolution's NHWC result, reshaped: no transpose is left in between.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x16x16xf16>)
// CHECK-DAG: %[[W1:.+]] = graph.constant dense<5.000000e-01> : tensor<4x3x3x8xf16>
// CHECK-DAG: %[[W2:.+]] = graph.constant dense<2.500000e-01> : tensor<8x1x1x4xf16>
// CHECK-DAG: %[[SIX:.+]] = graph.constant dense<6.000000e+00> : tensor<1x1x1x1xf16>
// CHECK: %[[XT:.+]] = graph.transpose %[[X]], [0, 2, 3, 1] : tensor<1x8x16x16xf16> -> tensor<1x16x16x8xf16>
// CHECK: %[[C1:.+]] = call @cudnn.convolution_{{[0-9]+}}(%[[XT]], %[[W1]], %{{.+}}) {channels_last = true
// CHECK-SAME: post_ops = ["relu"]
// CHECK-SAME: -> tensor<1x16x16x4xf16>
// CHECK: %[[CLIP:.+]] = graph.min %[[C1]], %[[SIX]] : (tensor<1x16x16x4xf16>, tensor<1x1x1x1xf16>) -> tensor<1x16x16x4xf16>
// CHECK: %[[C2:.+]] = call @cudnn.convolution_{{[0-9]+}}(%[[CLIP]], %[[W2]], %[[XT]]) {channels_last = true
// CHECK-SAME: post_ops = ["add", "relu"]
// CHECK: %[[MEAN:.+]] = graph.reduce_mean %[[C2]] {axes = array<i64: 1, 2>, keepdims = true} : (tensor<1x16x16x8xf16>) -> tensor<1x1x1x8xf16>
// CHECK: %[[R:.+]] = graph.reshape %[[MEAN]] to [1, 8, 1, 1]
// CHECK-NOT: graph.transpose
// CHECK: return %[[R]]
func.func @block(%x: tensor<1x8x16x16xf16>) -> tensor<1x8x1x1xf16> {
  %w1 = graph.constant dense<0.5> : tensor<4x8x3x3xf16>
  %w2 = graph.constant dense<0.25> : tensor<8x4x1x1xf16>
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf16>
  %zero = graph.constant dense<0.0> : tensor<f16>
  %six = graph.constant dense<6.0> : tensor<f16>
  %0 = graph.conv %x, %w1, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x16x16xf16>, tensor<4x8x3x3xf16>, tensor<4xf16>) -> tensor<1x4x16x16xf16>
  %1 = graph.max %0, %zero : (tensor<1x4x16x16xf16>, tensor<f16>) -> tensor<1x4x16x16xf16>
  %2 = graph.min %1, %six : (tensor<1x4x16x16xf16>, tensor<f16>) -> tensor<1x4x16x16xf16>
  %3 = graph.conv %2, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x4x16x16xf16>, tensor<8x4x1x1xf16>) -> tensor<1x8x16x16xf16>
  %4 = graph.add %3, %x : (tensor<1x8x16x16xf16>, tensor<1x8x16x16xf16>) -> tensor<1x8x16x16xf16>
  %5 = graph.max %4, %zero : (tensor<1x8x16x16xf16>, tensor<f16>) -> tensor<1x8x16x16xf16>
  %6 = graph.global_avg_pool %5 : (tensor<1x8x16x16xf16>) -> tensor<1x8x1x1xf16>
  return %6 : tensor<1x8x1x1xf16>
}

// -----

// Tests that a filter's values move to K x R x S x C (not only its shape), that a per-channel
// constant (C x 1 x 1, broadcast) becomes 1 x 1 x 1 x C, that the max pool between grouped
// convolutions pools the channels-last value, and that the result is transposed back once at
// the output. The declarations of the channels-first calls are gone.
// CHECK-LABEL: func.func @pool_between
// CHECK-NOT: func.func private @cudnn.convolution_{{[0-9]+}}(tensor<1x2x4x4xbf16>
// CHECK-DAG: %[[S:.+]] = graph.constant dense<{{\[\[\[\[}}5.000000e-01, 2.000000e+00]]]]> : tensor<1x1x1x2xbf16>
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]], {{\[\[\[}}5.000000e+00, 7.000000e+00], [6.000000e+00, 8.000000e+00]]]]> : tensor<2x1x2x2xbf16>
// CHECK: %[[XT:.+]] = graph.transpose %arg0, [0, 2, 3, 1]
// CHECK: %[[C:.+]] = call @cudnn.convolution_{{[0-9]+}}(%[[XT]], %[[W]]) {channels_last = true
// CHECK: %[[M:.+]] = graph.mul %[[C]], %[[S]] : (tensor<1x4x4x2xbf16>, tensor<1x1x1x2xbf16>)
// CHECK: %[[P:.+]] = graph.max_pool %[[M]] {channels_last = true, {{.*}}} : (tensor<1x4x4x2xbf16>) -> tensor<1x2x2x2xbf16>
// CHECK: %[[G:.+]] = call @cudnn.convolution_{{[0-9]+}}(%[[P]], %{{.+}}) {channels_last = true, {{.*}}groups = 2
// CHECK-SAME: -> tensor<1x2x2x4xbf16>
// CHECK: %[[Y:.+]] = graph.transpose %[[G]], [0, 3, 1, 2] : tensor<1x2x2x4xbf16> -> tensor<1x4x2x2xbf16>
// CHECK: return %[[Y]]
func.func @pool_between(%x: tensor<1x2x4x4xbf16>) -> tensor<1x4x2x2xbf16> {
  %w = graph.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]], [[[5.0, 6.0]], [[7.0, 8.0]]]]> : tensor<2x2x1x2xbf16>
  %w2 = graph.constant dense<1.0> : tensor<4x1x3x3xbf16>
  %s = graph.constant dense<[[[0.5]], [[2.0]]]> : tensor<2x1x1xbf16>
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 1>, groups = 1 : i64} : (tensor<1x2x4x4xbf16>, tensor<2x2x1x2xbf16>) -> tensor<1x2x4x4xbf16>
  %1 = graph.mul %0, %s : (tensor<1x2x4x4xbf16>, tensor<2x1x1xbf16>) -> tensor<1x2x4x4xbf16>
  %2 = graph.max_pool %1 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x2x4x4xbf16>) -> tensor<1x2x2x2xbf16>
  %3 = graph.conv %2, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 2 : i64} : (tensor<1x2x2x2xbf16>, tensor<4x1x3x3xbf16>) -> tensor<1x4x2x2xbf16>
  return %3 : tensor<1x4x2x2xbf16>
}

// -----

// Tests an inception-style concatenation: the branches' channels-last results are concatenated
// along the last axis, and the SiLU after it (x * sigmoid(x), the transposed value read twice)
// runs channels-last too; one transpose at the output.
// CHECK-LABEL: func.func @concat_silu
// CHECK: %[[A:.+]] = call @cudnn.convolution_{{[0-9]+}}
// CHECK: %[[B:.+]] = call @cudnn.convolution_{{[0-9]+}}
// CHECK: %[[C:.+]] = graph.concat %[[A]], %[[B]] {axis = 3 : i64} : (tensor<1x3x3x2xf16>, tensor<1x3x3x3xf16>) -> tensor<1x3x3x5xf16>
// CHECK: %[[S:.+]] = graph.sigmoid %[[C]] : tensor<1x3x3x5xf16>
// CHECK: %[[M:.+]] = graph.mul %[[C]], %[[S]]
// CHECK: %[[Y:.+]] = graph.transpose %[[M]], [0, 3, 1, 2]
// CHECK: return %[[Y]]
func.func @concat_silu(%x: tensor<1x2x3x3xf16>) -> tensor<1x5x3x3xf16> {
  %wa = graph.constant dense<1.0> : tensor<2x2x1x1xf16>
  %wb = graph.constant dense<0.5> : tensor<3x2x3x3xf16>
  %a = graph.conv %x, %wa {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x2x3x3xf16>, tensor<2x2x1x1xf16>) -> tensor<1x2x3x3xf16>
  %b = graph.conv %x, %wb {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x2x3x3xf16>, tensor<3x2x3x3xf16>) -> tensor<1x3x3x3xf16>
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<1x2x3x3xf16>, tensor<1x3x3x3xf16>) -> tensor<1x5x3x3xf16>
  %s = graph.sigmoid %c : tensor<1x5x3x3xf16>
  %m = graph.mul %c, %s : (tensor<1x5x3x3xf16>, tensor<1x5x3x3xf16>) -> tensor<1x5x3x3xf16>
  return %m : tensor<1x5x3x3xf16>
}

// -----

// Tests that f32 convolutions keep NCHW unless all-types is set.
// CHECK-LABEL: func.func @f32_conv
// CHECK-NOT: graph.transpose
// CHECK-NOT: channels_last
// CHECK: return
// ALL-LABEL: func.func @f32_conv
// ALL: graph.transpose %arg0, [0, 2, 3, 1]
// ALL: call @cudnn.convolution_{{[0-9]+}}({{.*}}) {channels_last = true
// ALL: graph.transpose %{{.+}}, [0, 3, 1, 2]
func.func @f32_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Tests that an f32 convolution that may use TF32 tensor cores (kiln-assign-precision's
// kiln.math = "tf32", allow_tf32 on the call) takes NHWC like a half-precision one.
// CHECK-LABEL: func.func @tf32_conv
// CHECK: graph.transpose %arg0, [0, 2, 3, 1]
// CHECK: call @cudnn.convolution_{{[0-9]+}}({{.*}}) {allow_tf32 = true, channels_last = true
func.func @tf32_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64, kiln.math = "tf32"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}
