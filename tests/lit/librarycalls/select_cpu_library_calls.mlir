// RUN: kiln-opt --split-input-file --kiln-select-cpu-library-calls %s | FileCheck %s

// Tests that a convolution, its channel bias add, residual add and ReLU become one oneDNN call
// whose bias is the reshaped constant and whose post-ops add the residual, then clamp at zero.
// CHECK-LABEL: func.func private @onednn.convolution_0
// CHECK-SAME: (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// CHECK-SAME: attributes {kiln.library_call = "onednn.convolution"}
// CHECK-LABEL: func.func @resnet_block
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x16x16xf32>)
// CHECK: %[[W:.+]] = graph.constant dense<5.000000e-01> : tensor<8x8x3x3xf32>
// CHECK: %[[B:.+]] = graph.constant dense<2.500000e-01> : tensor<8xf32>
// CHECK: %[[Y:.+]] = call @onednn.convolution_0(%[[X]], %[[W]], %[[B]], %[[X]])
// CHECK-SAME: dilations = array<i64: 1, 1>, groups = 1 : i64, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, post_ops = ["add", "relu"], strides = array<i64: 1, 1>
// CHECK-NOT: graph.
// CHECK: return %[[Y]]
func.func @resnet_block(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = graph.constant dense<0.5> : tensor<8x8x3x3xf32>
  %b = graph.constant dense<0.25> : tensor<8x1x1xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %1 = graph.add %0, %b : (tensor<1x8x16x16xf32>, tensor<8x1x1xf32>) -> tensor<1x8x16x16xf32>
  %2 = graph.add %x, %1 : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %3 = graph.max %2, %zero : (tensor<1x8x16x16xf32>, tensor<f32>) -> tensor<1x8x16x16xf32>
  return %3 : tensor<1x8x16x16xf32>
}

// -----

// Tests that a depthwise 1-D convolution keeps its own bias, strides, dilations and pads, and
// that ONNX Clip (max then min with constants) becomes one clip post-op.
// CHECK-LABEL: func.func @depthwise_clip
// CHECK: %[[Y:.+]] = call @onednn.convolution_0(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}})
// CHECK-SAME: dilations = array<i64: 2>, groups = 4 : i64, pads_begin = array<i64: 1>, pads_end = array<i64: 2>, post_op_args = array<f32: -1.000000e+00, 6.000000e+00>, post_ops = ["clip"], strides = array<i64: 2>
// CHECK-NEXT: return %[[Y]]
func.func @depthwise_clip(%x: tensor<2x4x20xf32>, %w: tensor<4x1x3xf32>, %b: tensor<4xf32>) -> tensor<2x4x10xf32> {
  %lo = graph.constant dense<-1.0> : tensor<f32>
  %hi = graph.constant dense<6.0> : tensor<f32>
  %0 = graph.conv %x, %w, %b {groups = 4 : i64, strides = array<i64: 2>, dilations = array<i64: 2>, pad_low = array<i64: 1>, pad_high = array<i64: 2>} : (tensor<2x4x20xf32>, tensor<4x1x3xf32>, tensor<4xf32>) -> tensor<2x4x10xf32>
  %1 = graph.max %0, %lo : (tensor<2x4x10xf32>, tensor<f32>) -> tensor<2x4x10xf32>
  %2 = graph.min %1, %hi : (tensor<2x4x10xf32>, tensor<f32>) -> tensor<2x4x10xf32>
  return %2 : tensor<2x4x10xf32>
}

// -----

// Tests that ReLU followed by min(x, 6) is one clip (ReLU6), and that a value with a second use
// ends the epilogue there.
// CHECK-LABEL: func.func @relu6_then_shared
// CHECK: %[[Y:.+]] = call @onednn.convolution_0
// CHECK-SAME: post_op_args = array<f32: 0.000000e+00, 6.000000e+00>, post_ops = ["clip"]
// CHECK: graph.add %[[Y]], %[[Y]]
func.func @relu6_then_shared(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32> {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %six = graph.constant dense<6.0> : tensor<f32>
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  %1 = graph.max %0, %zero : (tensor<1x3x5x5xf32>, tensor<f32>) -> tensor<1x3x5x5xf32>
  %2 = graph.min %1, %six : (tensor<1x3x5x5xf32>, tensor<f32>) -> tensor<1x3x5x5xf32>
  %3 = graph.add %2, %2 : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  return %3 : tensor<1x3x5x5xf32>
}

// -----

// Tests that ONNX Gemm with transB and a bias vector becomes a matmul call with that bias, and
// that two call sites of one signature share one declaration while another signature gets its own.
// CHECK: func.func private @onednn.matmul_1(tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32> attributes {kiln.library_call = "onednn.matmul"}
// CHECK: func.func private @onednn.matmul_0(tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32> attributes {kiln.library_call = "onednn.matmul"}
// CHECK-LABEL: func.func @gemm_bias
// CHECK: %[[A:.+]] = call @onednn.matmul_0(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) :
// CHECK: %[[B:.+]] = call @onednn.matmul_0(%[[A]], %{{[a-z0-9_]+}}) {post_ops = ["relu"]}
// CHECK: call @onednn.matmul_1(%[[B]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {trans_b = true}
func.func @gemm_bias(%x: tensor<4x16xf32>, %m: tensor<16x16xf32>, %w: tensor<32x16xf32>, %b: tensor<32xf32>) -> tensor<4x32xf32> {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %0 = graph.matmul %x, %m : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %1 = graph.matmul %0, %m : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %2 = graph.max %1, %zero : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %3 = graph.gemm %2, %w, %b {trans_b = true} : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %3 : tensor<4x32xf32>
}

// -----

// Tests that gemm's alpha becomes a linear post-op and beta * c is computed before the call and
// added by a binary post-op (oneDNN 2.6 would run a second linear post-op with the first one's
// parameters).
// CHECK-LABEL: func.func @gemm_alpha_beta
// CHECK-SAME: (%[[A:.+]]: tensor<3x5xf32>, %[[B:.+]]: tensor<6x3xf32>, %[[C:.+]]: tensor<5x1xf32>)
// CHECK: %[[BETA:.+]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[SCALED:.+]] = graph.mul %[[C]], %[[BETA]]
// CHECK: call @onednn.matmul_0(%[[A]], %[[B]], %[[SCALED]])
// CHECK-SAME: post_op_args = array<f32: 5.000000e-01, 0.000000e+00>, post_ops = ["linear", "add"], trans_a = true, trans_b = true
func.func @gemm_alpha_beta(%a: tensor<3x5xf32>, %b: tensor<6x3xf32>, %c: tensor<5x1xf32>) -> tensor<5x6xf32> {
  %0 = graph.gemm %a, %b, %c {trans_a = true, trans_b = true, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<3x5xf32>, tensor<6x3xf32>, tensor<5x1xf32>) -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}

// -----

// Tests that a scalar added after gemm's alpha is a binary add, not a second linear post-op with
// other parameters.
// CHECK-LABEL: func.func @linear_twice
// CHECK: %[[SHIFT:.+]] = graph.constant dense<3.000000e+00>
// CHECK: call @onednn.matmul_0(%{{.+}}, %{{.+}}, %{{.+}}, %[[SHIFT]])
// CHECK-SAME: post_op_args = array<f32: 2.000000e+00, 0.000000e+00>, post_ops = ["linear", "add", "add"]
func.func @linear_twice(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = graph.constant dense<3.0> : tensor<f32>
  %0 = graph.gemm %a, %b, %c {alpha = 2.0 : f32} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = graph.add %0, %shift : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}

// -----

// Tests that a batched matmul with a broadcast weight takes its last-axis bias add as the bias.
// CHECK-LABEL: func.func @batched_bias
// CHECK: call @onednn.matmul_0(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<2x7x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<2x7x3xf32>
// CHECK-NOT: = graph.add
func.func @batched_bias(%x: tensor<2x7x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<2x7x3xf32> {
  %0 = graph.matmul %x, %w : (tensor<2x7x8xf32>, tensor<8x3xf32>) -> tensor<2x7x3xf32>
  %1 = graph.add %0, %b : (tensor<2x7x3xf32>, tensor<3xf32>) -> tensor<2x7x3xf32>
  return %1 : tensor<2x7x3xf32>
}

// -----

// Tests that what the oneDNN calls do not take stays a graph op: a 1-D matmul operand and an
// addend oneDNN cannot broadcast (which ends the epilogue). A product of dynamic shapes (a
// contraction over a dynamic length here) is a call the runtime sets up per shape. An f16
// matmul is computed in f32 by oneDNN between casts (f16 storage, f32 accumulation).
// CHECK-LABEL: func.func @not_selected
// CHECK: graph.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<8xf32>, tensor<8x3xf32>)
// CHECK: call @onednn.matmul_0(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<4x?xf32>, tensor<?x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[HA:.+]] = graph.cast %{{[a-z0-9_]+}} : tensor<4x8xf16> to f32
// CHECK: %[[HB:.+]] = graph.cast %{{[a-z0-9_]+}} : tensor<8x3xf16> to f32
// CHECK: %[[HP:.+]] = call @onednn.matmul_1(%[[HA]], %[[HB]]) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK: graph.cast %[[HP]] : tensor<4x3xf32> to f16
// CHECK: %[[Y:.+]] = call @onednn.matmul_2
// CHECK: graph.add %[[Y]], %{{[a-z0-9_]+}} : (tensor<2x4x3xf32>, tensor<2x1x3xf32>)
func.func @not_selected(%v: tensor<8xf32>, %w: tensor<8x3xf32>, %d: tensor<4x?xf32>, %dw: tensor<?x3xf32>, %h: tensor<4x8xf16>, %hw: tensor<8x3xf16>, %bx: tensor<2x4x8xf32>, %odd: tensor<2x1x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>, tensor<4x3xf16>, tensor<2x4x3xf32>) {
  %0 = graph.matmul %v, %w : (tensor<8xf32>, tensor<8x3xf32>) -> tensor<3xf32>
  %1 = graph.matmul %d, %dw : (tensor<4x?xf32>, tensor<?x3xf32>) -> tensor<4x3xf32>
  %2 = graph.matmul %h, %hw : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  %3 = graph.matmul %bx, %w : (tensor<2x4x8xf32>, tensor<8x3xf32>) -> tensor<2x4x3xf32>
  %4 = graph.add %3, %odd : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  return %0, %1, %2, %4 : tensor<3xf32>, tensor<4x3xf32>, tensor<4x3xf16>, tensor<2x4x3xf32>
}

// -----

// Tests that over a dynamic batch (a program for a range of shapes, whose calls the runtime sets
// up per shape) a product of rows with static weights and a convolution stay oneDNN calls, with
// their bias and the convolution's residual add and ReLU as post-ops.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: call @onednn.matmul_0(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) : (tensor<?x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK: call @onednn.convolution_0(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {{.*}}post_ops = ["add", "relu"]{{.*}} : (tensor<?x4x6x6xf32>, tensor<4x4x3x3xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
// CHECK-NOT: graph.add
// CHECK-NOT: graph.max
func.func @dynamic_batch(%x: tensor<?x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>, %image: tensor<?x4x6x6xf32>, %f: tensor<4x4x3x3xf32>) -> (tensor<?x3xf32>, tensor<?x4x6x6xf32>) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %0 = graph.matmul %x, %w : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  %1 = graph.add %0, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %2 = graph.conv %image, %f {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<?x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<?x4x6x6xf32>
  %3 = graph.add %2, %image : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %4 = graph.max %3, %zero : (tensor<?x4x6x6xf32>, tensor<f32>) -> tensor<?x4x6x6xf32>
  return %1, %4 : tensor<?x3xf32>, tensor<?x4x6x6xf32>
}

// -----

// Tests that GELU's exact form after a matrix product, in the two orders exporters write it (the
// half applied last, after a division by sqrt(2); the half applied first, after a product with
// 1/sqrt(2)), becomes oneDNN's gelu_erf post-op after the bias, with none of its math left.
// CHECK-LABEL: func.func @matmul_erf_gelu
// CHECK: %[[Y:.+]] = call @onednn.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}) {post_ops = ["gelu_erf"]}
// CHECK: %[[Z:.+]] = call @onednn.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}) {post_ops = ["gelu_erf"]}
// CHECK-NOT: graph.erf
// CHECK: return %[[Y]], %[[Z]]
func.func @matmul_erf_gelu(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %bias: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %rsqrt2 = graph.constant dense<0.707106769> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %m = graph.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %0 = graph.add %m, %bias : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = graph.div %0, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.erf %1 : tensor<4x8xf32>
  %3 = graph.add %2, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = graph.mul %0, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = graph.mul %4, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %n = graph.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %6 = graph.mul %half, %n : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = graph.mul %n, %rsqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %8 = graph.erf %7 : tensor<4x8xf32>
  %9 = graph.add %one, %8 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %10 = graph.mul %6, %9 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %5, %10 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that a matrix product whose result is also read outside GELU (a third reader) keeps its
// GELU as graph ops: the fused call would not produce the value the third reader needs.
// CHECK-LABEL: func.func @gelu_with_another_reader
// CHECK: %[[Y:.+]] = call @onednn.matmul_{{[0-9]+}}
// CHECK-NOT: post_ops
// CHECK: graph.erf
func.func @gelu_with_another_reader(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %0 = graph.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = graph.div %0, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.erf %1 : tensor<4x8xf32>
  %3 = graph.add %2, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = graph.mul %0, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = graph.mul %4, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %6 = graph.neg %0 : tensor<4x8xf32>
  return %5, %6 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that GELU's tanh approximation as GPT-2's export writes it (x * x * x, the constants
// sqrt(2 / pi) and 0.044715) after a matrix product with a bias becomes oneDNN's gelu_tanh
// post-op.
// CHECK-LABEL: func.func @matmul_tanh_gelu
// CHECK: %[[Y:.+]] = call @onednn.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}) {post_ops = ["gelu_tanh"]}
// CHECK-NOT: graph.tanh
// CHECK: return %[[Y]]
func.func @matmul_tanh_gelu(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = graph.constant dense<0.044715> : tensor<f32>
  %s = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %m = graph.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %x = graph.add %m, %bias : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %0 = graph.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = graph.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = graph.mul %1, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = graph.add %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = graph.mul %3, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = graph.tanh %4 : tensor<4x8xf32>
  %6 = graph.add %5, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %7 = graph.mul %x, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = graph.mul %7, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// Tests that elementwise math after a product that is not GELU (a tanh without the cubic term)
// is left alone.
// CHECK-LABEL: func.func @not_gelu
// CHECK: call @onednn.matmul_{{[0-9]+}}
// CHECK-NOT: post_ops
// CHECK: graph.tanh
func.func @not_gelu(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %s = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %x = graph.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %4 = graph.mul %x, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = graph.tanh %4 : tensor<4x8xf32>
  %6 = graph.add %5, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %7 = graph.mul %x, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = graph.mul %7, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// Tests that attention (the product of Q and Kᵀ, its scaling, the mask, the softmax and the
// product with V) becomes one kiln.attention call that reads Q, Kᵀ and V through the reshape,
// transpose and split of the fused projection and writes the merged heads, as strides: the views
// index the projection (offsets 0, 16 and 32 elements; heads 8 apart, tokens 48 apart) and the
// result (tokens 16 apart); the mask broadcasts over heads and query rows (strides 0); no score
// matrix, softmax or data movement is left.
// CHECK-LABEL: func.func @attention_views
// CHECK-SAME: (%[[QKV:.+]]: tensor<2x8x48xf32>, %[[MASK:.+]]: tensor<2x1x1x8xf32>)
// CHECK: %[[P:.+]] = graph.reshape %[[QKV]] to [2, 8, 3, 2, 8]
// CHECK-NEXT: %[[O:.+]] = call @kiln.attention_0(%[[P]], %[[P]], %[[P]], %[[MASK]]) {dst_view = array<i64: 0, 2, 2, 8, 8, 128, 8, 16, 1>, k_view = array<i64: 16, 2, 2, 8, 8, 384, 8, 1, 48>, mask_view = array<i64: 0, 2, 2, 8, 8, 8, 0, 0, 1>, q_view = array<i64: 0, 2, 2, 8, 8, 384, 8, 48, 1>, scale = array<f32: 3.500000e-01>, v_view = array<i64: 32, 2, 2, 8, 8, 384, 8, 48, 1>} : (tensor<2x8x3x2x8xf32>, tensor<2x8x3x2x8xf32>, tensor<2x8x3x2x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x8x16xf32>
// CHECK-NOT: graph.softmax
// CHECK-NOT: graph.transpose
// CHECK-NOT: graph.split
// CHECK: return %[[O]]
func.func @attention_views(%qkv: tensor<2x8x48xf32>, %mask: tensor<2x1x1x8xf32>) -> tensor<2x8x16xf32> {
  %scale = graph.constant dense<0.35> : tensor<f32>
  %0 = graph.reshape %qkv to [2, 8, 3, 2, 8] : tensor<2x8x48xf32> -> tensor<2x8x3x2x8xf32>
  %1 = graph.transpose %0, [2, 0, 3, 1, 4] : tensor<2x8x3x2x8xf32> -> tensor<3x2x2x8x8xf32>
  %2:3 = graph.split %1 {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} : (tensor<3x2x2x8x8xf32>) -> (tensor<1x2x2x8x8xf32>, tensor<1x2x2x8x8xf32>, tensor<1x2x2x8x8xf32>)
  %q = graph.reshape %2#0 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %k = graph.reshape %2#1 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %v = graph.reshape %2#2 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %kt = graph.transpose %k, [0, 1, 3, 2] : tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %s1 = graph.mul %s, %scale : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8x8xf32>
  %s2 = graph.add %s1, %mask : (tensor<2x2x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x2x8x8xf32>
  %p = graph.softmax %s2 {axis = 3 : i64} : tensor<2x2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %ot = graph.transpose %o, [0, 2, 1, 3] : tensor<2x2x8x8xf32> -> tensor<2x8x2x8xf32>
  %r = graph.reshape %ot to [2, 8, 16] : tensor<2x8x2x8xf32> -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

// Tests grouped-query attention as Llama's export writes it: 4 query heads and 2 key and value
// heads sliced out of one projection [1, 8, 64], K and V repeated per group (reshape, expand,
// reshape). The call reads K and V once, before the repeat, out of the projection (offsets 32
// and 48; 2 heads 8 apart) with kv_group 2; no repeat is left.
// CHECK-LABEL: func.func @attention_grouped_queries
// CHECK-SAME: (%[[QKV:.+]]: tensor<1x8x64xf32>)
// CHECK-NOT: graph.expand
// CHECK: %[[O:.+]] = call @kiln.attention_0(%[[QKV]], %[[QKV]], %[[QKV]]) {dst_view = array<i64: 0, 1, 4, 8, 8, 256, 8, 32, 1>, k_view = array<i64: 32, 1, 2, 8, 8, 512, 8, 1, 64>, kv_group = 2 : i64, q_view = array<i64: 0, 1, 4, 8, 8, 512, 8, 64, 1>, scale = array<f32: 3.500000e-01>, v_view = array<i64: 48, 1, 2, 8, 8, 512, 8, 64, 1>} : (tensor<1x8x64xf32>, tensor<1x8x64xf32>, tensor<1x8x64xf32>) -> tensor<1x8x32xf32>
// CHECK-NOT: graph.expand
// CHECK: return %[[O]]
func.func @attention_grouped_queries(%qkv: tensor<1x8x64xf32>) -> tensor<1x8x32xf32> {
  %scale = graph.constant dense<0.35> : tensor<f32>
  %q0 = graph.slice %qkv {limits = array<i64: 1, 8, 32>, starts = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x8x64xf32>) -> tensor<1x8x32xf32>
  %k0 = graph.slice %qkv {limits = array<i64: 1, 8, 48>, starts = array<i64: 0, 0, 32>, strides = array<i64: 1, 1, 1>} : (tensor<1x8x64xf32>) -> tensor<1x8x16xf32>
  %v0 = graph.slice %qkv {limits = array<i64: 1, 8, 64>, starts = array<i64: 0, 0, 48>, strides = array<i64: 1, 1, 1>} : (tensor<1x8x64xf32>) -> tensor<1x8x16xf32>
  %q1 = graph.reshape %q0 to [1, 8, 4, 8] : tensor<1x8x32xf32> -> tensor<1x8x4x8xf32>
  %k1 = graph.reshape %k0 to [1, 8, 2, 8] : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %v1 = graph.reshape %v0 to [1, 8, 2, 8] : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %q = graph.transpose %q1, [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %k = graph.transpose %k1, [0, 2, 1, 3] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %v = graph.transpose %v1, [0, 2, 1, 3] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %k2 = graph.reshape %k to [1, 2, 1, 8, 8] : tensor<1x2x8x8xf32> -> tensor<1x2x1x8x8xf32>
  %k3 = graph.expand %k2 to [1, 2, 2, 8, 8] : tensor<1x2x1x8x8xf32> -> tensor<1x2x2x8x8xf32>
  %kr = graph.reshape %k3 to [1, 4, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<1x4x8x8xf32>
  %v2 = graph.reshape %v to [1, 2, 1, 8, 8] : tensor<1x2x8x8xf32> -> tensor<1x2x1x8x8xf32>
  %v3 = graph.expand %v2 to [1, 2, 2, 8, 8] : tensor<1x2x1x8x8xf32> -> tensor<1x2x2x8x8xf32>
  %vr = graph.reshape %v3 to [1, 4, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<1x4x8x8xf32>
  %kt = graph.transpose %kr, [0, 1, 3, 2] : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %s1 = graph.mul %s, %scale : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %p = graph.softmax %s1 {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %o = graph.matmul %p, %vr : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %ot = graph.transpose %o, [0, 2, 1, 3] : tensor<1x4x8x8xf32> -> tensor<1x8x4x8xf32>
  %r = graph.reshape %ot to [1, 8, 32] : tensor<1x8x4x8xf32> -> tensor<1x8x32xf32>
  return %r : tensor<1x8x32xf32>
}

// -----

// Tests attention over dynamic shapes (a program for a range of batches and sequences): one
// kiln.attention call with no views, reading Q, Kᵀ, V and the mask as they lie (the runtime sets
// it up per shape with the run's strides, the mask's dims of 1 broadcast); the transposes before
// it stay.
// CHECK-LABEL: func.func @attention_dynamic
// CHECK: %[[KT:.+]] = graph.transpose %arg1
// CHECK: %[[O:.+]] = call @kiln.attention_0(%arg0, %[[KT]], %arg2, %arg3) {scale = array<f32: 1.250000e-01>} : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>, tensor<?x2x?x8xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x8xf32>
// CHECK-NOT: graph.softmax
// CHECK: return %[[O]]
func.func @attention_dynamic(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>, %mask: tensor<?x1x1x?xf32>) -> tensor<?x2x?x8xf32> {
  %scale = graph.constant dense<8.0> : tensor<f32>
  %kt = graph.transpose %k, [0, 1, 3, 2] : tensor<?x2x?x8xf32> -> tensor<?x2x8x?xf32>
  %s = graph.matmul %q, %kt : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
  %s1 = graph.div %s, %scale : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %s2 = graph.add %s1, %mask : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
  %p = graph.softmax %s2 {axis = 3 : i64} : tensor<?x2x?x?xf32>
  %o = graph.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// Tests that a repeat that is not per head (the sequence repeated, not the heads) is no group:
// the attention reads the repeated value as it is, without kv_group.
// CHECK-LABEL: func.func @attention_repeated_sequence
// CHECK: graph.expand
// CHECK: call @kiln.attention_0
// CHECK-NOT: kv_group
func.func @attention_repeated_sequence(%q: tensor<1x2x8x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %k2 = graph.reshape %k to [1, 2, 4, 1, 8] : tensor<1x2x4x8xf32> -> tensor<1x2x4x1x8xf32>
  %k3 = graph.expand %k2 to [1, 2, 4, 2, 8] : tensor<1x2x4x1x8xf32> -> tensor<1x2x4x2x8xf32>
  %kr = graph.reshape %k3 to [1, 2, 8, 8] : tensor<1x2x4x2x8xf32> -> tensor<1x2x8x8xf32>
  %kt = graph.transpose %kr, [0, 1, 3, 2] : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return %o : tensor<1x2x8x8xf32>
}

// -----

// Tests that attention's products read Q, K (transposed) and V through the reshape, transpose
// and split of the fused projection, and write the merged heads, as strides, where the attention
// is not one call (the probabilities are a result too): the views index the projection and the
// result (tokens 16 apart), and no data movement is left. The scores' scale is the call's (the
// mask, broadcast over heads and rows, is not).
// CHECK-LABEL: func.func @attention_products_views
// CHECK-SAME: (%[[QKV:.+]]: tensor<2x8x48xf32>, %[[MASK:.+]]: tensor<2x1x1x8xf32>)
// CHECK: %[[P:.+]] = graph.reshape %[[QKV]] to [2, 8, 3, 2, 8]
// CHECK-NEXT: %[[S:.+]] = call @onednn.matmul_0(%[[P]], %[[P]]) {a_view = array<i64: 0, 2, 2, 8, 8, 384, 8, 48, 1>, b_view = array<i64: 16, 2, 2, 8, 8, 384, 8, 1, 48>, post_op_args = array<f32: 3.500000e-01, 0.000000e+00>, post_ops = ["linear"]}
// CHECK-NEXT: graph.add %[[S]], %[[MASK]]
// CHECK: %[[W:.+]] = graph.softmax
// CHECK-NEXT: %[[O:.+]] = call @onednn.matmul_1(%[[W]], %[[P]]) {b_view = array<i64: 32, 2, 2, 8, 8, 384, 8, 48, 1>, dst_view = array<i64: 0, 2, 2, 8, 8, 128, 8, 16, 1>} : (tensor<2x2x8x8xf32>, tensor<2x8x3x2x8xf32>) -> tensor<2x8x16xf32>
// CHECK-NOT: kiln.attention
// CHECK-NOT: graph.transpose
// CHECK-NOT: graph.split
// CHECK: return %[[O]], %[[W]]
func.func @attention_products_views(%qkv: tensor<2x8x48xf32>, %mask: tensor<2x1x1x8xf32>) -> (tensor<2x8x16xf32>, tensor<2x2x8x8xf32>) {
  %scale = graph.constant dense<0.35> : tensor<f32>
  %0 = graph.reshape %qkv to [2, 8, 3, 2, 8] : tensor<2x8x48xf32> -> tensor<2x8x3x2x8xf32>
  %1 = graph.transpose %0, [2, 0, 3, 1, 4] : tensor<2x8x3x2x8xf32> -> tensor<3x2x2x8x8xf32>
  %2:3 = graph.split %1 {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} : (tensor<3x2x2x8x8xf32>) -> (tensor<1x2x2x8x8xf32>, tensor<1x2x2x8x8xf32>, tensor<1x2x2x8x8xf32>)
  %q = graph.reshape %2#0 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %k = graph.reshape %2#1 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %v = graph.reshape %2#2 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %kt = graph.transpose %k, [0, 1, 3, 2] : tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %s1 = graph.mul %s, %scale : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8x8xf32>
  %s2 = graph.add %s1, %mask : (tensor<2x2x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x2x8x8xf32>
  %p = graph.softmax %s2 {axis = 3 : i64} : tensor<2x2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %ot = graph.transpose %o, [0, 2, 1, 3] : tensor<2x2x8x8xf32> -> tensor<2x8x2x8xf32>
  %r = graph.reshape %ot to [2, 8, 16] : tensor<2x8x2x8xf32> -> tensor<2x8x16xf32>
  return %r, %p : tensor<2x8x16xf32>, tensor<2x2x8x8xf32>
}

// -----

// Tests attention whose Q broadcasts over the batch (rank 2 against Kᵀ of rank 3: its batch
// stride is 0), scaled by a division after a multiplication (scale 2 / 4), without a mask and
// with nothing to read through: the operands are their own dense views.
// CHECK-LABEL: func.func @attention_broadcast_query
// CHECK: %[[O:.+]] = call @kiln.attention_0(%arg0, %arg1, %arg2) {dst_view = array<i64: 0, 2, 8, 4, 32, 4, 1>, k_view = array<i64: 0, 2, 16, 8, 128, 8, 1>, q_view = array<i64: 0, 2, 8, 16, 0, 16, 1>, scale = array<f32: 5.000000e-01>, v_view = array<i64: 0, 2, 8, 4, 32, 4, 1>}
// CHECK-NOT: graph.softmax
// CHECK: return %[[O]]
func.func @attention_broadcast_query(%q: tensor<8x16xf32>, %kt: tensor<2x16x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %four = graph.constant dense<4.0> : tensor<f32>
  %s = graph.matmul %q, %kt : (tensor<8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %s1 = graph.mul %two, %s : (tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s2 = graph.div %s1, %four : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %p = graph.softmax %s2 {axis = 2 : i64} : tensor<2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

// Tests the ONNX Attention operator's guard: the rows where the mask is -inf everywhere are
// zeroed after the softmax; the guard becomes the call's zero_masked_rows and goes with the
// softmax. A guard that reads another tensor than the added mask, or zeroes to another value,
// keeps the softmax.
// CHECK-LABEL: func.func @attention_guard
// CHECK: %[[O:.+]] = call @kiln.attention_0(%arg0, %arg1, %arg2, %arg3) {dst_view = array<i64: 0, 8, 4, 4, 1>, k_view = array<i64: 0, 16, 8, 8, 1>, mask_view = array<i64: 0, 8, 8, 8, 1>, q_view = array<i64: 0, 8, 16, 16, 1>, scale = array<f32: 2.500000e-01>, v_view = array<i64: 0, 8, 4, 4, 1>, zero_masked_rows = array<i64: 1>}
// CHECK-NOT: graph.reduce_max %arg3
// CHECK: graph.softmax
// CHECK: graph.reduce_max %arg4
// CHECK: graph.softmax
// CHECK: return %[[O]]
func.func @attention_guard(%q: tensor<8x16xf32>, %kt: tensor<16x8xf32>, %v: tensor<8x4xf32>, %mask: tensor<8x8xf32>, %other: tensor<8x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %c = graph.constant dense<0.25> : tensor<f32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %ninf = graph.constant dense<0xFF800000> : tensor<f32>
  %s = graph.matmul %q, %kt : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %sc = graph.mul %s, %c : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %m = graph.add %sc, %mask : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = graph.softmax %m {axis = 1 : i64} : tensor<8x8xf32>
  %mx = graph.reduce_max %mask {axes = array<i64: 1>, keepdims = true} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %no = graph.compare eq, %mx, %ninf : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xi1>
  %g = graph.select %no, %zero, %p : (tensor<8x1xi1>, tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %o = graph.matmul %g, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %s2 = graph.matmul %q, %kt : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %m2 = graph.add %s2, %mask : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %p2 = graph.softmax %m2 {axis = 1 : i64} : tensor<8x8xf32>
  %mx2 = graph.reduce_max %other {axes = array<i64: 1>, keepdims = true} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %no2 = graph.compare eq, %mx2, %ninf : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xi1>
  %g2 = graph.select %no2, %zero, %p2 : (tensor<8x1xi1>, tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %o2 = graph.matmul %g2, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %s3 = graph.matmul %q, %kt : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %m3 = graph.add %s3, %mask : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %p3 = graph.softmax %m3 {axis = 1 : i64} : tensor<8x8xf32>
  %mx3 = graph.reduce_max %mask {axes = array<i64: 1>, keepdims = true} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %no3 = graph.compare eq, %mx3, %ninf : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xi1>
  %g3 = graph.select %no3, %one, %p3 : (tensor<8x1xi1>, tensor<f32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %o3 = graph.matmul %g3, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o, %o2, %o3 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Tests what is not one attention call: a scaling after the mask (the mask would be scaled too),
// a softmax along another axis, and a tensor (not a splat) as the scale. Their products stay
// oneDNN calls and the softmaxes stay.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT: kiln.attention
// CHECK-COUNT-3: graph.softmax
// CHECK-NOT: kiln.attention
func.func @not_attention(%q: tensor<8x16xf32>, %kt: tensor<16x8xf32>, %v: tensor<8x4xf32>, %mask: tensor<8x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %c = graph.constant dense<0.25> : tensor<f32>
  %s = graph.matmul %q, %kt : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %m = graph.add %s, %mask : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %sc = graph.mul %m, %c : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %p = graph.softmax %sc {axis = 1 : i64} : tensor<8x8xf32>
  %o = graph.matmul %p, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %s2 = graph.matmul %q, %kt : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %p2 = graph.softmax %s2 {axis = 0 : i64} : tensor<8x8xf32>
  %o2 = graph.matmul %p2, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %s3 = graph.matmul %q, %kt : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %t = graph.mul %s3, %mask : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %p3 = graph.softmax %t {axis = 1 : i64} : tensor<8x8xf32>
  %o3 = graph.matmul %p3, %v : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %o, %o2, %o3 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Tests that a transpose with a second reader stays for that reader while the product reads
// through it, that a result with an 'add' post-op keeps its own layout, and that a slice with a
// negative step is not read through.
// CHECK-LABEL: func.func @shared_and_stopped
// CHECK: %[[T:.+]] = graph.transpose %arg0, [1, 0]
// CHECK: %[[R:.+]] = graph.slice %arg1
// CHECK: %[[Y:.+]] = call @onednn.matmul_0(%arg0, %[[R]], %arg2) {a_view = array<i64: 0, 6, 4, 1, 6>, post_ops = ["add"]}
// CHECK: graph.transpose %[[Y]], [1, 0]
// CHECK: graph.add %[[T]], %{{.+}}
func.func @shared_and_stopped(%x: tensor<4x6xf32>, %w: tensor<4x5xf32>, %c: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %t = graph.transpose %x, [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %r = graph.slice %w {starts = array<i64: 3, 3>, limits = array<i64: -1, -1>, strides = array<i64: -1, -1>} : (tensor<4x5xf32>) -> tensor<4x4xf32>
  %m = graph.matmul %t, %r : (tensor<6x4xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
  %a = graph.add %m, %c : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %u = graph.transpose %a, [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %v = graph.transpose %u, [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %s = graph.add %t, %v : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  return %s : tensor<6x4xf32>
}

// -----

// Tests that f32 max and average pools with padding become oneDNN pooling calls, which read the
// padding as absent (no padded copy): ResNet's stem pool; a ceil-mode pool whose last window
// reaches one past the input (pads_end 0 + 1); an average that excludes the padding. A pool
// without padding (a generated kernel reads it in place), an average that counts the padding
// where ceil mode adds positions (which it must not count), an f16 pool and a channels-last pool
// stay graph ops.
// CHECK-LABEL: func.func @pools
// CHECK: call @onednn.pooling_0(%arg0) {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, kind = ["max"], pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32>
// CHECK: call @onednn.pooling_1(%arg1) {dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, kind = ["max"], pads_begin = array<i64: 0, 0>, pads_end = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x5x5xf32>
// CHECK: call @onednn.pooling_2(%arg0) {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, kind = ["avg_exclude_pad"], pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, strides = array<i64: 1, 1>}
// CHECK: graph.avg_pool %arg1
// CHECK: graph.max_pool %arg2
// CHECK: graph.max_pool %arg0 {{.*}}channels_last = true
// CHECK: graph.max_pool %arg1 {{.*}}pad_low = array<i64: 0, 0>
func.func @pools(%x: tensor<1x8x16x16xf32>, %y: tensor<1x2x9x9xf32>, %h: tensor<1x2x9x9xf16>) -> (tensor<1x8x8x8xf32>, tensor<1x2x5x5xf32>, tensor<1x8x16x16xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf16>, tensor<1x4x8x16xf32>, tensor<1x2x3x3xf32>) {
  %0 = graph.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32>
  %1 = graph.max_pool %y {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x5x5xf32>
  %2 = graph.avg_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %3 = graph.avg_pool %y {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x5x5xf32>
  %4 = graph.max_pool %h {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x9x9xf16>) -> tensor<1x2x5x5xf16>
  %5 = graph.max_pool %x {channels_last = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x8x16x16xf32>) -> tensor<1x4x8x16xf32>
  %6 = graph.max_pool %y {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 3, 3>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x3x3xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<1x8x8x8xf32>, tensor<1x2x5x5xf32>, tensor<1x8x16x16xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf16>, tensor<1x4x8x16xf32>, tensor<1x2x3x3xf32>
}

// -----

// Tests that SiLU as exporters write it (x * Sigmoid(x), either operand order) after a
// convolution with a bias (a tensor operand: the post-op add), and after a matrix product (Llama's gate), becomes oneDNN's swish
// post-op, with none of its math left; a sigmoid alone (a gate read by another product) stays.
// CHECK-LABEL: func.func @conv_silu
// CHECK: call @onednn.convolution_{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}) {{.*}}post_ops = ["add", "swish"]
// CHECK: call @onednn.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}) {post_ops = ["swish"]}
// CHECK: call @onednn.matmul_{{[0-9]+}}
// CHECK-NOT: post_ops
// CHECK: graph.sigmoid
// CHECK-NOT: graph.sigmoid
func.func @conv_silu(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<1x8x1x1xf32>, %a: tensor<4x16xf32>, %m: tensor<16x8xf32>) -> (tensor<1x8x16x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %1 = graph.add %0, %b : (tensor<1x8x16x16xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x16x16xf32>
  %2 = graph.sigmoid %1 : tensor<1x8x16x16xf32>
  %3 = graph.mul %1, %2 : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %4 = graph.matmul %a, %m : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %5 = graph.sigmoid %4 : tensor<4x8xf32>
  %6 = graph.mul %5, %4 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = graph.matmul %a, %m : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %8 = graph.sigmoid %7 : tensor<4x8xf32>
  return %3, %6, %8 : tensor<1x8x16x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Tests that a matrix product whose result is permuted so that its rows are no longer contiguous
// (ConvNeXt's linear layer written back to channels-first) keeps its layout: oneDNN would write
// such a dst_view only with its reference matmul, seconds where its own kernels take
// milliseconds, so the transpose stays a kernel; a permutation that keeps the rows' elements
// contiguous (the heads merged back in attention) is still written through.
// CHECK-LABEL: func.func @channels_first_result
// CHECK: %[[Y:.+]] = call @onednn.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}) : (tensor<1x8x8x32xf32>, tensor<32x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT: graph.transpose %[[Y]], [0, 3, 1, 2]
// CHECK: call @onednn.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}) {dst_view = array<i64: 0, 1, 8, 8, 16, 1024, 16, 128, 1>}
// CHECK-NOT: graph.transpose
func.func @channels_first_result(%x: tensor<1x8x8x32xf32>, %w: tensor<32x16xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>) {
  %0 = graph.matmul %x, %w : (tensor<1x8x8x32xf32>, tensor<32x16xf32>) -> tensor<1x8x8x16xf32>
  %1 = graph.transpose %0, [0, 3, 1, 2] : tensor<1x8x8x16xf32> -> tensor<1x16x8x8xf32>
  %2 = graph.matmul %x, %w : (tensor<1x8x8x32xf32>, tensor<32x16xf32>) -> tensor<1x8x8x16xf32>
  %3 = graph.transpose %2, [0, 2, 1, 3] : tensor<1x8x8x16xf32> -> tensor<1x8x8x16xf32>
  return %1, %3 : tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>
}
