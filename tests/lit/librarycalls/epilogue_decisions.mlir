// RUN: kiln-opt --split-input-file --kiln-select-cpu-library-calls %s | FileCheck %s --check-prefix=CPU
// RUN: kiln-opt --split-input-file --kiln-select-cuda-library-calls %s | FileCheck %s --check-prefix=CUDA

// Tests that scales by constants after a product (a multiplication, a division by the
// reciprocal) join the call as one `linear` (cuBLASLt's alpha on CUDA), with ReLU after them,
// and that the fusion planner's report names the call and its steps.
// CPU: module attributes {kiln.epilogue_report = ["library epilogues (cpu device model): 1 calls take 3 ops in 3 steps: 1 kernels,
// CPU-SAME: "onednn.matmul (graph.matmul) with scale, scale, relu: 3 ops;
// CPU-LABEL: func.func @scales
// CPU: %[[Y:.+]] = call @onednn.matmul_0(%{{.+}}, %{{.+}}) {post_op_args = array<f32: 1.250000e-01, 0.000000e+00>, post_ops = ["linear", "relu"]}
// CPU-NEXT: return %[[Y]]
// CUDA: module attributes {kiln.epilogue_report = ["library epilogues (a100 device model): 1 calls take 3 ops in 3 steps
// CUDA-LABEL: func.func @scales
// CUDA: %[[Y:.+]] = call @cublaslt.matmul_0(%{{.+}}, %{{.+}}) {post_op_args = array<f32: 1.250000e-01, 0.000000e+00>, post_ops = ["linear", "relu"]}
// CUDA-NEXT: return %[[Y]]
func.func @scales(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %quarter = graph.constant dense<0.25> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = graph.mul %quarter, %0 : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = graph.div %1, %two : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %3 = graph.max %2, %zero : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}

// -----

// Tests that a scale after the bias joins a oneDNN call (`linear` after the bias) and stays out
// of a cuBLASLt call, whose alpha scales the product before the bias, when the bias is no
// constant to scale with it: the report says so.
// CPU-LABEL: func.func @scale_after_bias
// CPU: %[[Y:.+]] = call @onednn.matmul_0(%{{.+}}, %{{.+}}, %{{.+}}) {post_op_args = array<f32: 5.000000e-01, 0.000000e+00>, post_ops = ["linear"]}
// CPU-NEXT: return %[[Y]]
// CUDA: module attributes {kiln.epilogue_report = ["library epilogues (a100 device model): 1 calls take 1 ops in 1 steps
// CUDA-SAME: "cublaslt.matmul (graph.matmul) with bias: 1 ops;
// CUDA-SAME: "not in the epilogue of cublaslt.matmul (graph.matmul): graph.mul: cuBLASLt's alpha scales the product alone, before its bias (a bias that is no f32 constant is not scaled with it)"]}
// CUDA-LABEL: func.func @scale_after_bias
// CUDA: %[[P:.+]] = call @cublaslt.matmul_0(%{{.+}}, %{{.+}}, %{{.+}}) :
// CUDA-NEXT: %[[Y:.+]] = graph.mul %[[P]], %{{.+}}
// CUDA-NEXT: return %[[Y]]
func.func @scale_after_bias(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = graph.add %0, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = graph.mul %1, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// Tests the vetoes that are the graph's, not the library's: a result read by a ReLU and by the
// function's return keeps its ReLU out (the call writes one value); a division by zero and a
// constant divided by the result are no scales.
// CPU: module attributes {kiln.epilogue_report = ["library epilogues (cpu device model): 0 calls take 0 ops in 0 steps: 0 kernels, 0.0 MiB, 0.0 us modeled saved; 2 steps stay out",
// CPU-SAME: "not in the epilogue of onednn.matmul (graph.matmul): graph.max: the value before it has 2 readers",
// CPU-SAME: "not in the epilogue of onednn.matmul (graph.matmul): graph.div: a scale by 0 or by a factor f32 cannot hold"]}
// CPU-LABEL: func.func @vetoes
// CPU: %[[P:.+]] = call @onednn.matmul_0
// CPU-NEXT: %[[R:.+]] = graph.max %[[P]]
// CPU: %[[Q:.+]] = call @onednn.matmul_0
// CPU-NEXT: %[[D:.+]] = graph.div %[[Q]]
// CPU: %[[S:.+]] = call @onednn.matmul_0
// CPU-NEXT: %[[I:.+]] = graph.div %{{.+}}, %[[S]]
// CPU-NEXT: return %[[P]], %[[R]], %[[D]], %[[I]]
func.func @vetoes(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %three = graph.constant dense<3.0> : tensor<f32>
  %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = graph.max %0, %zero : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %2 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %3 = graph.div %2, %zero : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %4 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %5 = graph.div %three, %4 : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0, %1, %3, %5 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Tests the cost model's veto: an addend computed for the call alone (a bias and a mask added,
// broadcast to the scores' shape, as Swin's shifted windows export it) would be a kernel of its
// own, its result written and read back; out of the call the softmax's kernel computes it from
// the bias and the mask. The scale joins the call, the add stays with the softmax, and the
// report gives both modeled times.
// CPU: module attributes {kiln.epilogue_report = ["library epilogues (cpu device model): 1 calls take 1 ops in 1 steps
// CPU-SAME: "onednn.matmul (graph.matmul) with scale: 1 ops;
// CPU-SAME: "not in the epilogue of onednn.matmul (graph.matmul): graph.add: modeled slower in the call ({{[0-9.]+}} us, its operand a kernel's result of its own) than in its reader's kernel ({{[0-9.]+}} us)"]}
// CPU-LABEL: func.func @addend_for_the_call_alone
// CPU: %[[BM:.+]] = graph.add
// CPU: %[[S:.+]] = call @onednn.matmul_0(%{{.+}}, %{{.+}}) {post_op_args = array<f32: 1.250000e-01, 0.000000e+00>, post_ops = ["linear"]}
// CPU-NEXT: %[[A:.+]] = graph.add %[[S]], %[[BM]]
// CPU-NEXT: graph.softmax %[[A]]
// CUDA: module attributes {kiln.epilogue_report = ["library epilogues (a100 device model): 1 calls take 1 ops in 1 steps
// CUDA-SAME: "not in the epilogue of cublaslt.matmul (graph.matmul): graph.add: modeled slower in the call
// CUDA-LABEL: func.func @addend_for_the_call_alone
// CUDA: %[[S:.+]] = call @cublaslt.matmul_0(%{{.+}}, %{{.+}}) {post_op_args = array<f32: 1.250000e-01, 0.000000e+00>, post_ops = ["linear"]}
// CUDA-NEXT: graph.add %[[S]]
func.func @addend_for_the_call_alone(%q: tensor<4x2x64x32xf32>, %k: tensor<4x2x32x64xf32>, %mask: tensor<4x1x64x64xf32>) -> tensor<4x2x64x64xf32> {
  %bias = graph.constant dense<0.5> : tensor<1x2x64x64xf32>
  %scale = graph.constant dense<0.125> : tensor<f32>
  %bm = graph.add %bias, %mask : (tensor<1x2x64x64xf32>, tensor<4x1x64x64xf32>) -> tensor<4x2x64x64xf32>
  %s = graph.matmul %q, %k : (tensor<4x2x64x32xf32>, tensor<4x2x32x64xf32>) -> tensor<4x2x64x64xf32>
  %s1 = graph.mul %s, %scale : (tensor<4x2x64x64xf32>, tensor<f32>) -> tensor<4x2x64x64xf32>
  %s2 = graph.add %s1, %bm : (tensor<4x2x64x64xf32>, tensor<4x2x64x64xf32>) -> tensor<4x2x64x64xf32>
  %p = graph.softmax %s2 {axis = 3 : i64} : tensor<4x2x64x64xf32>
  return %p : tensor<4x2x64x64xf32>
}

// -----

// Tests the two orders of a scale and a constant bias on CUDA, where cuBLASLt adds the bias
// after alpha scales the product: a scale after the bias scales a copy of the constant bias
// (0.5 * 3 = 1.5) and becomes alpha; a bias after the scale is the call's bias as it is. On the
// CPU oneDNN adds the bias first: there the first is a bias and a `linear`, the second a
// `linear` and an `add` of the bias.
// CUDA-LABEL: func.func @scale_and_constant_bias
// CUDA-DAG: %[[SCALED:.+]] = graph.constant dense<1.500000e+00> : tensor<16xf32>
// CUDA-DAG: %[[BIAS:.+]] = graph.constant dense<3.000000e+00> : tensor<16xf32>
// CUDA: %[[P:.+]] = call @cublaslt.matmul_0(%{{.+}}, %{{.+}}, %[[SCALED]]) {post_op_args = array<f32: 5.000000e-01, 0.000000e+00>, post_ops = ["linear"]}
// CUDA: %[[Q:.+]] = call @cublaslt.matmul_0(%{{.+}}, %{{.+}}, %[[BIAS]]) {post_op_args = array<f32: 2.500000e-01, 0.000000e+00>, post_ops = ["linear"]}
// CUDA-NEXT: return %[[P]], %[[Q]]
// CPU-LABEL: func.func @scale_and_constant_bias
// CPU: call @onednn.matmul_0(%{{.+}}, %{{.+}}, %{{.+}}) {post_op_args = array<f32: 5.000000e-01, 0.000000e+00>, post_ops = ["linear"]}
// CPU: call @onednn.matmul_0(%{{.+}}, %{{.+}}, %{{.+}}) {post_op_args = array<f32: 2.500000e-01, 0.000000e+00>, post_ops = ["linear", "add"]}
func.func @scale_and_constant_bias(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %b = graph.constant dense<3.0> : tensor<16xf32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %four = graph.constant dense<4.0> : tensor<f32>
  %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = graph.add %0, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = graph.mul %1, %half : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %3 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %4 = graph.div %3, %four : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %5 = graph.add %4, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %2, %5 : tensor<4x16xf32>, tensor<4x16xf32>
}
