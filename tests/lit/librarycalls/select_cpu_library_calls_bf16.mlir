// RUN: kiln-opt --split-input-file --kiln-select-cpu-library-calls %s | FileCheck %s --check-prefix=WIDEN
// RUN: kiln-opt --split-input-file --kiln-select-cpu-library-calls=native-bf16=true %s | FileCheck %s --check-prefix=NATIVE

// Tests that bf16 convolutions and products are bf16 oneDNN calls with their epilogue where the
// CPU computes bf16 (native-bf16, which the pipeline sets on AVX512-BF16 hosts), and the f32
// calls between casts otherwise; f16 is widened either way (no f16 oneDNN kernels on these CPUs).
// WIDEN-LABEL: func.func @half
// WIDEN: graph.cast %{{.+}} : tensor<1x4x8x8xbf16> to f32
// WIDEN: call @onednn.convolution_{{[0-9]+}}({{.*}}) {{.*}}: (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// WIDEN: graph.cast %{{.+}} : tensor<1x4x8x8xf32> to bf16
// WIDEN: call @onednn.matmul_{{[0-9]+}}({{.*}}) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// NATIVE-LABEL: func.func @half
// NATIVE-NOT: graph.cast %{{.+}} : tensor<1x4x8x8xbf16>
// NATIVE: call @onednn.convolution_{{[0-9]+}}({{.*}}) {{.*}}post_ops = ["relu"]{{.*}}: (tensor<1x4x8x8xbf16>, tensor<4x4x3x3xbf16>, tensor<4xbf16>) -> tensor<1x4x8x8xbf16>
// NATIVE: graph.cast %{{.+}} : tensor<4x8xf16> to f32
// NATIVE: call @onednn.matmul_{{[0-9]+}}({{.*}}) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// NATIVE: graph.cast %{{.+}} : tensor<4x3xf32> to f16
func.func @half(%x: tensor<1x4x8x8xbf16>, %w: tensor<4x4x3x3xbf16>, %b: tensor<4xbf16>, %h: tensor<4x8xf16>, %hw: tensor<8x3xf16>) -> (tensor<1x4x8x8xbf16>, tensor<4x3xf16>) {
  %0 = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xbf16>, tensor<4x4x3x3xbf16>, tensor<4xbf16>) -> tensor<1x4x8x8xbf16>
  %zero = graph.constant dense<0.0> : tensor<bf16>
  %1 = graph.max %0, %zero : (tensor<1x4x8x8xbf16>, tensor<bf16>) -> tensor<1x4x8x8xbf16>
  %2 = graph.matmul %h, %hw : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  return %1, %2 : tensor<1x4x8x8xbf16>, tensor<4x3xf16>
}

// -----

// Tests that GELU's erf form with bf16 constants (1 / sqrt 2 and 0.5 rounded to bf16) still
// becomes oneDNN's gelu_erf post-op: the constants' rounding (2e-3) is more than the erf and tanh
// forms differ, so the erf op tells the form.
// NATIVE-LABEL: func.func @gelu_bf16
// NATIVE: call @onednn.matmul_{{[0-9]+}}({{.*}}) {post_ops = ["gelu_erf"]} : (tensor<4x8xbf16>, tensor<8x3xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
// NATIVE-NOT: graph.erf
// NATIVE: return
func.func @gelu_bf16(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>, %bias: tensor<3xbf16>) -> tensor<4x3xbf16> {
  %0 = graph.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
  %1 = graph.add %0, %bias : (tensor<4x3xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
  %sqrt2 = graph.constant dense<1.4140625> : tensor<bf16>
  %one = graph.constant dense<1.0> : tensor<bf16>
  %half = graph.constant dense<0.5> : tensor<bf16>
  %2 = graph.div %1, %sqrt2 : (tensor<4x3xbf16>, tensor<bf16>) -> tensor<4x3xbf16>
  %3 = graph.erf %2 : tensor<4x3xbf16>
  %4 = graph.add %3, %one : (tensor<4x3xbf16>, tensor<bf16>) -> tensor<4x3xbf16>
  %5 = graph.mul %1, %4 : (tensor<4x3xbf16>, tensor<4x3xbf16>) -> tensor<4x3xbf16>
  %6 = graph.mul %5, %half : (tensor<4x3xbf16>, tensor<bf16>) -> tensor<4x3xbf16>
  return %6 : tensor<4x3xbf16>
}

// -----

// Tests that a bf16 product cast to f32 and added to an f32 residual (a half-precision
// transformer's residual stream, which stays fp32) is one call writing f32, with the residual as
// its `add` post-op; without native bf16 the cast stays where the widened call's result is
// narrowed.
// NATIVE-LABEL: func.func @residual_f32
// NATIVE: %[[Y:.+]] = call @onednn.matmul_{{[0-9]+}}(%arg0, %arg1, %arg2, %arg3) {post_ops = ["add"]} : (tensor<4x8xbf16>, tensor<8x3xbf16>, tensor<3xbf16>, tensor<4x3xf32>) -> tensor<4x3xf32>
// NATIVE-NOT: graph.cast
// NATIVE-NOT: graph.add
// NATIVE: return %[[Y]]
// WIDEN-LABEL: func.func @residual_f32
// WIDEN: call @onednn.matmul_{{[0-9]+}}
// WIDEN: graph.cast %{{.+}} : tensor<4x3xf32> to bf16
// WIDEN: graph.cast %{{.+}} : tensor<4x3xbf16> to f32
// WIDEN: graph.add
func.func @residual_f32(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>, %bias: tensor<3xbf16>, %r: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = graph.matmul %a, %b : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
  %1 = graph.add %0, %bias : (tensor<4x3xbf16>, tensor<3xbf16>) -> tensor<4x3xbf16>
  %2 = graph.cast %1 : tensor<4x3xbf16> to f32
  %3 = graph.add %2, %r : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %3 : tensor<4x3xf32>
}
