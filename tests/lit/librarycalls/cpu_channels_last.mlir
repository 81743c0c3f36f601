// RUN: kiln-opt --split-input-file --kiln-select-cpu-library-calls --kiln-cpu-channels-last --canonicalize --cse %s | FileCheck %s

// Tests an inception block in f32: the model's input is transposed once, for the stem
// convolution, whose channels-last result two convolutions and the padded max pool (an
// onednn.pooling call, made channels-last) read; the pool feeds a third convolution, the three
// branches are concatenated along the last axis, and the result is transposed back once at the
// output. The channels-first declarations are gone.
// CHECK-LABEL: func.func @inception
// CHECK-NOT: func.func private @onednn.pooling_{{[0-9]+}}(tensor<1x8x6x6xf32>
// CHECK-NOT: func.func private @onednn.convolution_{{[0-9]+}}(tensor<1x8x6x6xf32>
// CHECK: %[[T:.+]] = graph.transpose %arg0, [0, 2, 3, 1] : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
// CHECK: %[[XT:.+]] = call @onednn.convolution_{{[0-9]+}}(%[[T]], %{{.+}}) {channels_last = true
// CHECK-DAG: %[[A:.+]] = call @onednn.convolution_{{[0-9]+}}(%[[XT]], %{{.+}}, %{{.+}}) {channels_last = true{{.*}}} : (tensor<1x6x6x8xf32>, tensor<4x1x1x8xf32>, tensor<4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-DAG: %[[P:.+]] = call @onednn.pooling_{{[0-9]+}}(%[[XT]]) {channels_last = true{{.*}}} : (tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
// CHECK-DAG: %[[B:.+]] = call @onednn.convolution_{{[0-9]+}}(%[[XT]], %{{.+}}) {channels_last = true{{.*}}} : (tensor<1x6x6x8xf32>, tensor<2x3x3x8xf32>) -> tensor<1x6x6x2xf32>
// CHECK-DAG: %[[C:.+]] = call @onednn.convolution_{{[0-9]+}}(%[[P]], %{{.+}}) {channels_last = true{{.*}}} : (tensor<1x6x6x8xf32>, tensor<2x1x1x8xf32>) -> tensor<1x6x6x2xf32>
// CHECK: %[[CAT:.+]] = graph.concat %[[A]], %[[B]], %[[C]] {axis = 3 : i64} : (tensor<1x6x6x4xf32>, tensor<1x6x6x2xf32>, tensor<1x6x6x2xf32>) -> tensor<1x6x6x8xf32>
// CHECK: %[[Y:.+]] = graph.transpose %[[CAT]], [0, 3, 1, 2] : tensor<1x6x6x8xf32> -> tensor<1x8x6x6xf32>
// CHECK-NOT: graph.transpose
// CHECK: return %[[Y]]
func.func @inception(%arg0: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %ws = graph.constant dense<0.75> : tensor<8x8x1x1xf32>
  %w1 = graph.constant dense<0.5> : tensor<4x8x1x1xf32>
  %b1 = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w2 = graph.constant dense<0.25> : tensor<2x8x3x3xf32>
  %w3 = graph.constant dense<0.125> : tensor<2x8x1x1xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %x = graph.conv %arg0, %ws {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %0 = graph.conv %x, %w1, %b1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %1 = graph.max %0, %zero : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %2 = graph.conv %x, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<2x8x3x3xf32>) -> tensor<1x2x6x6xf32>
  %3 = graph.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %4 = graph.conv %3, %w3 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<2x8x1x1xf32>) -> tensor<1x2x6x6xf32>
  %5 = graph.concat %1, %2, %4 {axis = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %5 : tensor<1x8x6x6xf32>
}

// -----

// Tests a depthwise 1-D convolution (N x C x L as N x L x C, grouped weights C x K x 1) whose
// result a reshape reads: the reshape needs channels-first, so the transpose stays before it.
// CHECK-LABEL: func.func @conv1d_then_reshape
// CHECK: %[[C:.+]] = call @onednn.convolution_{{[0-9]+}}(%{{.+}}, %{{.+}}) {channels_last = true{{.*}}groups = 4 : i64{{.*}}} : (tensor<1x10x4xf32>, tensor<4x3x1xf32>) -> tensor<1x8x4xf32>
// CHECK: %[[T:.+]] = graph.transpose %[[C]], [0, 2, 1] : tensor<1x8x4xf32> -> tensor<1x4x8xf32>
// CHECK: graph.reshape %[[T]]
func.func @conv1d_then_reshape(%x: tensor<1x4x10xf32>) -> tensor<1x32xf32> {
  %w = graph.constant dense<0.5> : tensor<4x1x3xf32>
  %0 = graph.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, groups = 4 : i64} : (tensor<1x4x10xf32>, tensor<4x1x3xf32>) -> tensor<1x4x8xf32>
  %1 = graph.reshape %0 to [1, 32] : tensor<1x4x8xf32> -> tensor<1x32xf32>
  return %1 : tensor<1x32xf32>
}

// -----

// Tests the hard-sigmoid gate of a squeeze-and-excitation block (MobileNetV3's, as the ONNX
// importer writes HardSigmoid and HardSwish: x * 1/6 + 0.5, clipped to [0, 1]) on a 1 x 1
// convolution: the scale becomes a linear post-op, and the shift, whose linear post-op would
// disagree with the first, an `add` post-op reading a rank-0 constant. Made channels-last, that
// scalar is broadcast-aligned to the result's rank (1 x 1 x 1 x 1) before it is permuted; it used
// to be permuted at its own rank, indexing its shape out of bounds (a crash of kiln compile).
// CHECK-LABEL: func.func @hard_sigmoid_gate
// CHECK: %[[HALF:.+]] = graph.constant dense<5.000000e-01> : tensor<1x1x1x1xf32>
// CHECK: call @onednn.convolution_{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}, %[[HALF]]) {channels_last = true{{.*}}post_ops = ["linear", "add", "clip"]{{.*}}} : (tensor<1x1x1x8xf32>, tensor<16x1x1x8xf32>, tensor<16xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x16xf32>
func.func @hard_sigmoid_gate(%x: tensor<1x8x1x1xf32>) -> tensor<1x16x1x1xf32> {
  %w = graph.constant dense<0.5> : tensor<16x8x1x1xf32>
  %b = graph.constant dense<0.25> : tensor<16xf32>
  %sixth = graph.constant dense<0.1666666666> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %0 = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x1x1xf32>, tensor<16x8x1x1xf32>, tensor<16xf32>) -> tensor<1x16x1x1xf32>
  %1 = graph.mul %0, %sixth : (tensor<1x16x1x1xf32>, tensor<f32>) -> tensor<1x16x1x1xf32>
  %2 = graph.add %1, %half : (tensor<1x16x1x1xf32>, tensor<f32>) -> tensor<1x16x1x1xf32>
  %3 = graph.min %2, %one : (tensor<1x16x1x1xf32>, tensor<f32>) -> tensor<1x16x1x1xf32>
  %4 = graph.max %3, %zero : (tensor<1x16x1x1xf32>, tensor<f32>) -> tensor<1x16x1x1xf32>
  return %4 : tensor<1x16x1x1xf32>
}

// -----

// Tests a residual addend that broadcasts from a lower rank and is not a constant (a per-channel
// C x 1 x 1 value computed at run time, added after the bias): it is reshaped to the result's
// rank and transposed with the rest (a reshape and a transpose of unit dims, which fold into one
// reshape to 1 x 1 x 1 x C).
// CHECK-LABEL: func.func @per_channel_addend
// CHECK: %[[T:.+]] = graph.reshape %arg1 to [1, 1, 1, 4] : tensor<4x1x1xf32> -> tensor<1x1x1x4xf32>
// CHECK: call @onednn.convolution_{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]]) {channels_last = true{{.*}}post_ops = ["add"]{{.*}}} : (tensor<1x6x6x8xf32>, tensor<4x1x1x8xf32>, tensor<4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x6x6x4xf32>
func.func @per_channel_addend(%x: tensor<1x8x6x6xf32>, %shift: tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %w = graph.constant dense<0.5> : tensor<4x8x1x1xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %1 = graph.add %0, %shift : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  return %1 : tensor<1x4x6x6xf32>
}
