// RUN: kiln-opt --split-input-file --kiln-select-cuda-library-calls %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-select-cuda-library-calls="fuse-attention=false" %s | FileCheck %s --check-prefix=UNFUSED

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
// (scaled by beta before the call) is the call's add; a bias-shaped C next to alpha != 1 is the
// call's bias, which cuBLASLt adds after the scaling, as gemm does.
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
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8x6xf32>, %[[C:.+]]: tensor<6xf32>)
// CHECK: call @cublaslt.matmul_{{[0-9]+}}(%[[A]], %[[B]], %[[C]]) {post_op_args = array<f32: 2.000000e+00, 0.000000e+00>, post_ops = ["linear"]}
// CHECK-NOT: graph.gemm
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

// -----

// Tests that f32 attention is one kiln.attention call on CUDA (the kernel
// kiln-generate-cuda-attention writes for it reads any strides): at batch 1 and 2 Q, Kᵀ and V are
// read out of the projection as they lie and the merged heads are written in place, no transpose
// left.
// CHECK-LABEL: func.func @attention_batch1
// CHECK: call @kiln.attention_{{[0-9]+}}(%[[P:.+]], %[[P]], %[[P]]) {dst_view = array<i64: 0, 1, 2, 8, 8, 128, 8, 16, 1>, k_view = array<i64: 16, 1, 2, 8, 8, 384, 8, 1, 48>, q_view = array<i64: 0, 1, 2, 8, 8, 384, 8, 48, 1>, scale = array<f32: 1.000000e+00>, v_view = array<i64: 32, 1, 2, 8, 8, 384, 8, 48, 1>}
// CHECK-NOT: graph.transpose
// CHECK-LABEL: func.func @attention_batch2
// CHECK-NOT: graph.transpose
// CHECK: call @kiln.attention_{{[0-9]+}}(%[[P2:.+]], %[[P2]], %[[P2]]) {dst_view = array<i64: 0, 2, 2, 8, 8, 128, 8, 16, 1>, k_view = array<i64: 16, 2, 2, 8, 8, 384, 8, 1, 48>, q_view = array<i64: 0, 2, 2, 8, 8, 384, 8, 48, 1>, scale = array<f32: 1.000000e+00>, v_view = array<i64: 32, 2, 2, 8, 8, 384, 8, 48, 1>}
// CHECK-NOT: graph.transpose
//
// Without fused attention, cuBLASLt reads the products' operands through strides only where its
// matrix layouts express them: at batch 1 everything (one strided batch of heads, rows 48 apart,
// Kᵀ as a column-major layout); at batch 2 the batch (384 apart) and the heads (8 apart) of the
// projection do not nest as one stride, so the big transpose stays and the products read its
// pieces (Kᵀ still by strides), and the merged heads are written by a transpose.
// UNFUSED-LABEL: func.func @attention_batch1
// UNFUSED: call @cublaslt.matmul_{{[0-9]+}}(%[[P:.+]], %[[P]]) {a_view = array<i64: 0, 1, 2, 8, 8, 384, 8, 48, 1>, b_view = array<i64: 16, 1, 2, 8, 8, 384, 8, 1, 48>}
// UNFUSED: call @cublaslt.matmul_{{[0-9]+}}(%{{.+}}, %[[P]]) {b_view = array<i64: 32, 1, 2, 8, 8, 384, 8, 48, 1>, dst_view = array<i64: 0, 1, 2, 8, 8, 128, 8, 16, 1>}
// UNFUSED-NOT: graph.transpose
// UNFUSED-LABEL: func.func @attention_batch2
// UNFUSED: %[[T:.+]] = graph.transpose %{{.+}}, [2, 0, 3, 1, 4]
// UNFUSED-NEXT: call @cublaslt.matmul_{{[0-9]+}}(%[[T]], %[[T]]) {a_view = array<i64: 0, 2, 2, 8, 8, 128, 64, 8, 1>, b_view = array<i64: 256, 2, 2, 8, 8, 128, 64, 1, 8>}
// UNFUSED: %[[O:.+]] = call @cublaslt.matmul_{{[0-9]+}}(%{{.+}}, %[[T]]) {b_view = array<i64: 512, 2, 2, 8, 8, 128, 64, 8, 1>}
// UNFUSED-NEXT: graph.transpose %[[O]], [0, 2, 1, 3]
func.func @attention_batch1(%qkv: tensor<1x8x48xf32>) -> tensor<1x8x16xf32> {
  %0 = graph.reshape %qkv to [1, 8, 3, 2, 8] : tensor<1x8x48xf32> -> tensor<1x8x3x2x8xf32>
  %1 = graph.transpose %0, [2, 0, 3, 1, 4] : tensor<1x8x3x2x8xf32> -> tensor<3x1x2x8x8xf32>
  %2:3 = graph.split %1 {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} : (tensor<3x1x2x8x8xf32>) -> (tensor<1x1x2x8x8xf32>, tensor<1x1x2x8x8xf32>, tensor<1x1x2x8x8xf32>)
  %q = graph.reshape %2#0 to [1, 2, 8, 8] : tensor<1x1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %k = graph.reshape %2#1 to [1, 2, 8, 8] : tensor<1x1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %v = graph.reshape %2#2 to [1, 2, 8, 8] : tensor<1x1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %kt = graph.transpose %k, [0, 1, 3, 2] : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ot = graph.transpose %o, [0, 2, 1, 3] : tensor<1x2x8x8xf32> -> tensor<1x8x2x8xf32>
  %r = graph.reshape %ot to [1, 8, 16] : tensor<1x8x2x8xf32> -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}
func.func @attention_batch2(%qkv: tensor<2x8x48xf32>) -> tensor<2x8x16xf32> {
  %0 = graph.reshape %qkv to [2, 8, 3, 2, 8] : tensor<2x8x48xf32> -> tensor<2x8x3x2x8xf32>
  %1 = graph.transpose %0, [2, 0, 3, 1, 4] : tensor<2x8x3x2x8xf32> -> tensor<3x2x2x8x8xf32>
  %2:3 = graph.split %1 {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} : (tensor<3x2x2x8x8xf32>) -> (tensor<1x2x2x8x8xf32>, tensor<1x2x2x8x8xf32>, tensor<1x2x2x8x8xf32>)
  %q = graph.reshape %2#0 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %k = graph.reshape %2#1 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %v = graph.reshape %2#2 to [2, 2, 8, 8] : tensor<1x2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %kt = graph.transpose %k, [0, 1, 3, 2] : tensor<2x2x8x8xf32> -> tensor<2x2x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<2x2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %ot = graph.transpose %o, [0, 2, 1, 3] : tensor<2x2x8x8xf32> -> tensor<2x8x2x8xf32>
  %r = graph.reshape %ot to [2, 8, 16] : tensor<2x8x2x8xf32> -> tensor<2x8x16xf32>
  return %r : tensor<2x8x16xf32>
}

// -----

// Tests that a result transposed after the product is not written through strides on CUDA:
// that would be a column-major D, which the cuBLASLt call does not write (the runtime refuses
// it), so the transpose stays.
// CHECK-LABEL: func.func @transposed_result
// CHECK: %[[M:.+]] = call @cublaslt.matmul_{{[0-9]+}}(%arg0, %arg1) :
// CHECK-NEXT: graph.transpose %[[M]], [1, 0]
func.func @transposed_result(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<6x4xf32> {
  %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %t = graph.transpose %m, [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  return %t : tensor<6x4xf32>
}

// -----

// Tests that half-precision attention in the form kiln-assign-precision leaves it (f16 products,
// the scores widened to f32 for the mask and the softmax, the probabilities narrowed back) becomes
// one cudnn.attention call that reads Q, Kᵀ and V through the fused projection's reshape,
// transpose and split as strides and writes the merged heads; the f32 mask is converted to f16
// once, for both attentions that share it.
// CHECK-LABEL: func.func @half_attention_views
// CHECK-SAME: (%[[QKV:.+]]: tensor<2x8x96xf16>, %[[QKV2:.+]]: tensor<2x8x96xf16>, %[[MASK:.+]]: tensor<2x1x1x8xf32>)
// CHECK: %[[P:.+]] = graph.reshape %[[QKV]] to [2, 8, 3, 2, 16]
// CHECK: %[[M:.+]] = graph.cast %[[MASK]] : tensor<2x1x1x8xf32> to f16
// CHECK-NEXT: %[[O:.+]] = call @cudnn.attention_0(%[[P]], %[[P]], %[[P]], %[[M]]) {dst_view = array<i64: 0, 2, 2, 8, 16, 256, 16, 32, 1>, k_view = array<i64: 32, 2, 2, 16, 8, 768, 16, 1, 96>, mask_view = array<i64: 0, 2, 2, 8, 8, 8, 0, 0, 1>, q_view = array<i64: 0, 2, 2, 8, 16, 768, 16, 96, 1>, scale = array<f32: 2.500000e-01>, v_view = array<i64: 64, 2, 2, 8, 16, 768, 16, 96, 1>} : (tensor<2x8x3x2x16xf16>, tensor<2x8x3x2x16xf16>, tensor<2x8x3x2x16xf16>, tensor<2x1x1x8xf16>) -> tensor<2x8x32xf16>
// CHECK-NOT: graph.cast
// CHECK: %[[O2:.+]] = call @cudnn.attention_0(%{{.+}}, %{{.+}}, %{{.+}}, %[[M]])
// CHECK-NOT: graph.softmax
// CHECK-NOT: graph.transpose
// CHECK: return %[[O]], %[[O2]]
func.func @half_attention_views(%qkv: tensor<2x8x96xf16>, %qkv2: tensor<2x8x96xf16>, %mask: tensor<2x1x1x8xf32>) -> (tensor<2x8x32xf16>, tensor<2x8x32xf16>) {
  %scale = graph.constant dense<0.25> : tensor<f16>
  %a0 = graph.reshape %qkv to [2, 8, 3, 2, 16] : tensor<2x8x96xf16> -> tensor<2x8x3x2x16xf16>
  %a1 = graph.transpose %a0, [2, 0, 3, 1, 4] : tensor<2x8x3x2x16xf16> -> tensor<3x2x2x8x16xf16>
  %a2:3 = graph.split %a1 {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} : (tensor<3x2x2x8x16xf16>) -> (tensor<1x2x2x8x16xf16>, tensor<1x2x2x8x16xf16>, tensor<1x2x2x8x16xf16>)
  %aq = graph.reshape %a2#0 to [2, 2, 8, 16] : tensor<1x2x2x8x16xf16> -> tensor<2x2x8x16xf16>
  %ak = graph.reshape %a2#1 to [2, 2, 8, 16] : tensor<1x2x2x8x16xf16> -> tensor<2x2x8x16xf16>
  %av = graph.reshape %a2#2 to [2, 2, 8, 16] : tensor<1x2x2x8x16xf16> -> tensor<2x2x8x16xf16>
  %akt = graph.transpose %ak, [0, 1, 3, 2] : tensor<2x2x8x16xf16> -> tensor<2x2x16x8xf16>
  %as = graph.matmul %aq, %akt : (tensor<2x2x8x16xf16>, tensor<2x2x16x8xf16>) -> tensor<2x2x8x8xf16>
  %as1 = graph.mul %as, %scale : (tensor<2x2x8x8xf16>, tensor<f16>) -> tensor<2x2x8x8xf16>
  %as2 = graph.cast %as1 : tensor<2x2x8x8xf16> to f32
  %as3 = graph.add %as2, %mask : (tensor<2x2x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x2x8x8xf32>
  %ap = graph.softmax %as3 {axis = 3 : i64} : tensor<2x2x8x8xf32>
  %ap16 = graph.cast %ap : tensor<2x2x8x8xf32> to f16
  %ao = graph.matmul %ap16, %av : (tensor<2x2x8x8xf16>, tensor<2x2x8x16xf16>) -> tensor<2x2x8x16xf16>
  %aot = graph.transpose %ao, [0, 2, 1, 3] : tensor<2x2x8x16xf16> -> tensor<2x8x2x16xf16>
  %ar = graph.reshape %aot to [2, 8, 32] : tensor<2x8x2x16xf16> -> tensor<2x8x32xf16>
  %b0 = graph.reshape %qkv2 to [2, 8, 3, 2, 16] : tensor<2x8x96xf16> -> tensor<2x8x3x2x16xf16>
  %b1 = graph.transpose %b0, [2, 0, 3, 1, 4] : tensor<2x8x3x2x16xf16> -> tensor<3x2x2x8x16xf16>
  %b2:3 = graph.split %b1 {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} : (tensor<3x2x2x8x16xf16>) -> (tensor<1x2x2x8x16xf16>, tensor<1x2x2x8x16xf16>, tensor<1x2x2x8x16xf16>)
  %bq = graph.reshape %b2#0 to [2, 2, 8, 16] : tensor<1x2x2x8x16xf16> -> tensor<2x2x8x16xf16>
  %bk = graph.reshape %b2#1 to [2, 2, 8, 16] : tensor<1x2x2x8x16xf16> -> tensor<2x2x8x16xf16>
  %bv = graph.reshape %b2#2 to [2, 2, 8, 16] : tensor<1x2x2x8x16xf16> -> tensor<2x2x8x16xf16>
  %bkt = graph.transpose %bk, [0, 1, 3, 2] : tensor<2x2x8x16xf16> -> tensor<2x2x16x8xf16>
  %bs = graph.matmul %bq, %bkt : (tensor<2x2x8x16xf16>, tensor<2x2x16x8xf16>) -> tensor<2x2x8x8xf16>
  %bs1 = graph.mul %bs, %scale : (tensor<2x2x8x8xf16>, tensor<f16>) -> tensor<2x2x8x8xf16>
  %bs2 = graph.cast %bs1 : tensor<2x2x8x8xf16> to f32
  %bs3 = graph.add %bs2, %mask : (tensor<2x2x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x2x8x8xf32>
  %bp = graph.softmax %bs3 {axis = 3 : i64} : tensor<2x2x8x8xf32>
  %bp16 = graph.cast %bp : tensor<2x2x8x8xf32> to f16
  %bo = graph.matmul %bp16, %bv : (tensor<2x2x8x8xf16>, tensor<2x2x8x16xf16>) -> tensor<2x2x8x16xf16>
  %bot = graph.transpose %bo, [0, 2, 1, 3] : tensor<2x2x8x16xf16> -> tensor<2x8x2x16xf16>
  %br = graph.reshape %bot to [2, 8, 32] : tensor<2x8x2x16xf16> -> tensor<2x8x32xf16>
  return %ar, %br : tensor<2x8x32xf16>, tensor<2x8x32xf16>
}

// -----

// Tests what stays products and a softmax on CUDA: f16 attention whose head dim (12) is not a
// multiple of 8 (cuDNN's fused attention does not take it, and the generated kernel is f32 only),
// f32 attention with heads longer than the generated kernel keeps in registers (160 > 128), and
// f32 attention over dynamic shapes (the kernel reads through views fixed at compile time).
// CHECK-LABEL: func.func @half_attention_odd_head
// CHECK-NOT: attention
// CHECK: graph.softmax
// CHECK-LABEL: func.func @attention_long_head
// CHECK-NOT: attention
// CHECK: graph.softmax
// CHECK-LABEL: func.func @attention_dynamic
// CHECK-NOT: attention
// CHECK: graph.softmax
func.func @half_attention_odd_head(%q: tensor<2x8x12xf16>, %kt: tensor<2x12x8xf16>, %v: tensor<2x8x12xf16>) -> tensor<2x8x12xf16> {
  %s = graph.matmul %q, %kt : (tensor<2x8x12xf16>, tensor<2x12x8xf16>) -> tensor<2x8x8xf16>
  %s2 = graph.cast %s : tensor<2x8x8xf16> to f32
  %p = graph.softmax %s2 {axis = 2 : i64} : tensor<2x8x8xf32>
  %p16 = graph.cast %p : tensor<2x8x8xf32> to f16
  %o = graph.matmul %p16, %v : (tensor<2x8x8xf16>, tensor<2x8x12xf16>) -> tensor<2x8x12xf16>
  return %o : tensor<2x8x12xf16>
}
func.func @attention_long_head(%q: tensor<2x8x160xf32>, %kt: tensor<2x160x8xf32>, %v: tensor<2x8x160xf32>) -> tensor<2x8x160xf32> {
  %s = graph.matmul %q, %kt : (tensor<2x8x160xf32>, tensor<2x160x8xf32>) -> tensor<2x8x8xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x160xf32>) -> tensor<2x8x160xf32>
  return %o : tensor<2x8x160xf32>
}
func.func @attention_dynamic(%q: tensor<?x8x16xf32>, %kt: tensor<?x16x8xf32>, %v: tensor<?x8x16xf32>) -> tensor<?x8x16xf32> {
  %s = graph.matmul %q, %kt : (tensor<?x8x16xf32>, tensor<?x16x8xf32>) -> tensor<?x8x8xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<?x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<?x8x8xf32>, tensor<?x8x16xf32>) -> tensor<?x8x16xf32>
  return %o : tensor<?x8x16xf32>
}
