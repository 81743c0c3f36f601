// RUN: kiln-opt --split-input-file --kiln-select-cuda-library-calls %s | FileCheck %s

// Tests that a convolution with its bias, a residual add of the result's shape and ReLU becomes
// one cuDNN call with the post-ops add, relu and the residual as its last operand.
// CHECK-LABEL: func.func private @cudnn.convolution_0
// CHECK-SAME: (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
// CHECK-SAME: attributes {kiln.library_call = "cudnn.convolution"}
// CHECK-LABEL: func.func @conv_block
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x16x16xf32>, %[[W:.+]]: tensor<8x8x3x3xf32>, %[[B:.+]]: tensor<8xf32>, %[[R:.+]]: tensor<1x8x16x16xf32>)
// CHECK: %[[Y:.+]] = call @cudnn.convolution_0(%[[X]], %[[W]], %[[B]], %[[R]])
// CHECK-SAME: post_ops = ["add", "relu"]
// CHECK-NOT: graph.max
// CHECK: return %[[Y]]
func.func @conv_block(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>, %r: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %0 = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %1 = graph.add %0, %r : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %2 = graph.max %1, %zero : (tensor<1x8x16x16xf32>, tensor<f32>) -> tensor<1x8x16x16xf32>
  return %2 : tensor<1x8x16x16xf32>
}

// -----

// Tests that a clip is not fused (cuDNN's fused engines take ReLU only): the call ends before
// it, and the clip stays for a generated kernel.
// CHECK-LABEL: func.func @conv_clip
// CHECK: %[[Y:.+]] = call @cudnn.convolution_0
// CHECK-NOT: post_ops
// CHECK: graph.max %[[Y]]
// CHECK: graph.min
func.func @conv_clip(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32> {
  %lo = graph.constant dense<-1.0> : tensor<f32>
  %hi = graph.constant dense<6.0> : tensor<f32>
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x2x5x5xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x5x5xf32>
  %1 = graph.max %0, %lo : (tensor<1x3x5x5xf32>, tensor<f32>) -> tensor<1x3x5x5xf32>
  %2 = graph.min %1, %hi : (tensor<1x3x5x5xf32>, tensor<f32>) -> tensor<1x3x5x5xf32>
  return %2 : tensor<1x3x5x5xf32>
}

// -----

// Tests that a classifier's gemm with a bias C of shape N (alpha = beta = 1, M = 1) is a
// cuBLASLt call with that bias, and that f16 matrix products are selected too.
// CHECK-LABEL: func.func @classifier
// CHECK: call @cublaslt.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}, %{{.+}}) {trans_b = true} : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
func.func @classifier(%x: tensor<1x512xf32>, %w: tensor<1000x512xf32>, %b: tensor<1000xf32>) -> tensor<1x1000xf32> {
  %0 = graph.gemm %x, %w, %b {trans_b = true} : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  return %0 : tensor<1x1000xf32>
}

// CHECK-LABEL: func.func @half_attention
// CHECK: %[[S:.+]] = call @cublaslt.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}) : (tensor<2x4x8x16xf16>, tensor<2x4x16x8xf16>) -> tensor<2x4x8x8xf16>
// CHECK-NOT: post_ops
func.func @half_attention(%q: tensor<2x4x8x16xf16>, %k: tensor<2x4x16x8xf16>) -> tensor<2x4x8x8xf16> {
  %0 = graph.matmul %q, %k : (tensor<2x4x8x16xf16>, tensor<2x4x16x8xf16>) -> tensor<2x4x8x8xf16>
  return %0 : tensor<2x4x8x8xf16>
}

// -----

// Tests that gemm's alpha is cuBLASLt's (a leading linear with shift 0) and that a full-shape C
// (scaled by beta before the call) is the call's add; a bias-shaped C next to alpha != 1 would
// be added after the scaling, so that gemm stays a graph op.
// CHECK-LABEL: func.func @gemm_alpha_beta
// CHECK: %[[C2:.+]] = graph.mul %{{.+}}, %{{.+}} : (tensor<5x6xf32>, tensor<f32>) -> tensor<5x6xf32>
// CHECK: call @cublaslt.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}, %[[C2]])
// CHECK-SAME: post_op_args = array<f32: 5.000000e-01, 0.000000e+00>, post_ops = ["linear", "add"]
// CHECK-SAME: trans_a = true, trans_b = true
func.func @gemm_alpha_beta(%a: tensor<3x5xf32>, %b: tensor<6x3xf32>, %c: tensor<5x6xf32>) -> tensor<5x6xf32> {
  %0 = graph.gemm %a, %b, %c {trans_a = true, trans_b = true, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<3x5xf32>, tensor<6x3xf32>, tensor<5x6xf32>) -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}

// CHECK-LABEL: func.func @gemm_alpha_bias
// CHECK-NOT: call
// CHECK: graph.gemm
func.func @gemm_alpha_bias(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = graph.gemm %a, %b, %c {alpha = 2.0 : f32} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Tests that a matmul whose operands each broadcast only some batch dimensions stays a graph op
// (a generated kernel): cuBLASLt's strided batches take an operand with all of the result's batch
// dimensions or none, so the runtime would refuse the call. One that broadcasts all of them
// (a shared weight) still becomes a call.
// CHECK-LABEL: func.func @partial_batch_broadcast
// CHECK: graph.matmul
// CHECK-LABEL: func.func @whole_batch_broadcast
// CHECK: call @cublaslt.matmul
func.func @partial_batch_broadcast(%a: tensor<3x1x3x4xf32>, %b: tensor<1x2x4x2xf32>) -> tensor<3x2x3x2xf32> {
  %0 = graph.matmul %a, %b : (tensor<3x1x3x4xf32>, tensor<1x2x4x2xf32>) -> tensor<3x2x3x2xf32>
  return %0 : tensor<3x2x3x2xf32>
}
func.func @whole_batch_broadcast(%a: tensor<3x2x3x4xf32>, %b: tensor<4x2xf32>) -> tensor<3x2x3x2xf32> {
  %0 = graph.matmul %a, %b : (tensor<3x2x3x4xf32>, tensor<4x2xf32>) -> tensor<3x2x3x2xf32>
  return %0 : tensor<3x2x3x2xf32>
}

// -----

// Tests that an ONNX Gelu (the erf form, as the importer writes it) after a matrix product is not
// fused into cuBLASLt's GELU epilogue, which computes the tanh approximation: the call carries no
// post-op and the erf math stays for a generated kernel.
// CHECK-LABEL: func.func @matmul_erf_gelu
// CHECK: %[[Y:.+]] = call @cublaslt.matmul_{{[0-9]+}}
// CHECK-NOT: post_ops
// CHECK: graph.mul %[[Y]]
// CHECK: graph.erf
// CHECK-NOT: call @cublaslt
func.func @matmul_erf_gelu(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %rsqrt2 = graph.constant dense<0.707106769> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %1 = graph.mul %0, %rsqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.erf %1 : tensor<4x8xf32>
  %3 = graph.add %2, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = graph.mul %0, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = graph.mul %4, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %5 : tensor<4x8xf32>
}

// -----

// Tests that GELU's tanh approximation (GPT-2's form) after a matrix product becomes cuBLASLt's
// GELU epilogue, which computes exactly that approximation.
// CHECK-LABEL: func.func @matmul_tanh_gelu
// CHECK: %[[Y:.+]] = call @cublaslt.matmul_{{[0-9]+}}(%{{.+}}, %{{.+}}) {post_ops = ["gelu"]}
// CHECK-NOT: graph.tanh
// CHECK: return %[[Y]]
func.func @matmul_tanh_gelu(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %c = graph.constant dense<0.044715> : tensor<f32>
  %s = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %x = graph.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
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
