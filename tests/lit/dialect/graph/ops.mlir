// RUN: kiln-opt --split-input-file %s | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt --split-input-file --mlir-print-op-generic %s | kiln-opt --split-input-file | FileCheck %s

// Tests that constants of every element type round-trip.
// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2xf32>, tensor<2xf16>, tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2xi64>, tensor<2xi32>, tensor<2xi16>, tensor<2xi8>, tensor<2xui8>, tensor<2xi1>, tensor<2xui16>, tensor<2xui32>, tensor<2xui64>) {
  // CHECK: graph.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>
  %0 = graph.constant dense<[1.5, -2.0]> : tensor<2xf32>
  // CHECK: graph.constant dense<{{.*}}> : tensor<2xf16>
  %1 = graph.constant dense<[1.5, -2.0]> : tensor<2xf16>
  // CHECK: graph.constant dense<{{.*}}> : tensor<2xbf16>
  %2 = graph.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  // CHECK: graph.constant dense<{{.*}}> : tensor<2xf8E4M3FN>
  %3 = graph.constant dense<[1.5, -2.0]> : tensor<2xf8E4M3FN>
  // CHECK: graph.constant dense<{{.*}}> : tensor<2xf8E5M2>
  %4 = graph.constant dense<[1.5, -2.0]> : tensor<2xf8E5M2>
  // CHECK: graph.constant dense<[7, -9]> : tensor<2xi64>
  %5 = graph.constant dense<[7, -9]> : tensor<2xi64>
  // CHECK: graph.constant dense<[7, -9]> : tensor<2xi32>
  %6 = graph.constant dense<[7, -9]> : tensor<2xi32>
  // CHECK: graph.constant dense<[7, -9]> : tensor<2xi16>
  %7 = graph.constant dense<[7, -9]> : tensor<2xi16>
  // CHECK: graph.constant dense<[7, -9]> : tensor<2xi8>
  %8 = graph.constant dense<[7, -9]> : tensor<2xi8>
  // CHECK: graph.constant dense<[7, 200]> : tensor<2xui8>
  %9 = graph.constant dense<[7, 200]> : tensor<2xui8>
  // CHECK: graph.constant dense<[true, false]> : tensor<2xi1>
  %10 = graph.constant dense<[true, false]> : tensor<2xi1>
  // CHECK: graph.constant dense<[7, 65535]> : tensor<2xui16>
  %11 = graph.constant dense<[7, 65535]> : tensor<2xui16>
  // CHECK: graph.constant dense<[7, 4294967295]> : tensor<2xui32>
  %12 = graph.constant dense<[7, 4294967295]> : tensor<2xui32>
  // CHECK: graph.constant dense<[7, 18446744073709551615]> : tensor<2xui64>
  %13 = graph.constant dense<[7, 18446744073709551615]> : tensor<2xui64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<2xf32>, tensor<2xf16>, tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2xi64>, tensor<2xi32>, tensor<2xi16>, tensor<2xi8>, tensor<2xui8>, tensor<2xi1>, tensor<2xui16>, tensor<2xui32>, tensor<2xui64>
}

// -----

// Tests that unary elementwise ops keep their operand's type, dynamic dimensions included.
// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x?xf32>, %i: tensor<4xi32>, %b: tensor<3xi1>) {
  // CHECK: graph.abs %{{.*}} : tensor<2x?xf32>
  %0 = graph.abs %x : tensor<2x?xf32>
  // CHECK: graph.ceil
  %1 = graph.ceil %x : tensor<2x?xf32>
  // CHECK: graph.cos
  %2 = graph.cos %x : tensor<2x?xf32>
  // CHECK: graph.erf
  %3 = graph.erf %x : tensor<2x?xf32>
  // CHECK: graph.exp
  %4 = graph.exp %x : tensor<2x?xf32>
  // CHECK: graph.floor
  %5 = graph.floor %x : tensor<2x?xf32>
  // CHECK: graph.log
  %6 = graph.log %x : tensor<2x?xf32>
  // CHECK: graph.neg %{{.*}} : tensor<4xi32>
  %7 = graph.neg %i : tensor<4xi32>
  // CHECK: graph.not %{{.*}} : tensor<3xi1>
  %8 = graph.not %b : tensor<3xi1>
  // CHECK: graph.reciprocal
  %9 = graph.reciprocal %x : tensor<2x?xf32>
  // CHECK: graph.round
  %10 = graph.round %x : tensor<2x?xf32>
  // CHECK: graph.rsqrt
  %11 = graph.rsqrt %x : tensor<2x?xf32>
  // CHECK: graph.sigmoid
  %12 = graph.sigmoid %x : tensor<2x?xf32>
  // CHECK: graph.sign %{{.*}} : tensor<4xi32>
  %13 = graph.sign %i : tensor<4xi32>
  // CHECK: graph.sin
  %14 = graph.sin %x : tensor<2x?xf32>
  // CHECK: graph.sqrt
  %15 = graph.sqrt %x : tensor<2x?xf32>
  // CHECK: graph.tanh
  %16 = graph.tanh %x : tensor<2x?xf32>
  return
}

// -----

// Tests that binary ops broadcast by NumPy's rules and may refine a dynamic result dimension.
// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x1x3xf32>, %b: tensor<5x1xf32>, %d: tensor<?x3xf32>, %p: tensor<2xi1>, %q: tensor<2xi1>, %i: tensor<2x3xi64>, %j: tensor<3xi64>) {
  // CHECK: graph.add %{{.*}}, %{{.*}} : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  %0 = graph.add %a, %b : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  // CHECK: graph.sub %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<5x1xf32>) -> tensor<5x3xf32>
  %1 = graph.sub %d, %b : (tensor<?x3xf32>, tensor<5x1xf32>) -> tensor<5x3xf32>
  // CHECK: graph.mul %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<7x3xf32>
  %2 = graph.mul %d, %d : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<7x3xf32>
  // CHECK: graph.div
  %3 = graph.div %i, %j : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.max
  %4 = graph.max %a, %b : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  // CHECK: graph.min
  %5 = graph.min %a, %b : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  // CHECK: graph.pow
  %6 = graph.pow %a, %b : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  // CHECK: graph.rem
  %7 = graph.rem %i, %j : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.and
  %8 = graph.and %p, %q : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: graph.or
  %9 = graph.or %p, %q : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: graph.xor
  %10 = graph.xor %p, %q : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  // CHECK: graph.shift_left %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %11 = graph.shift_left %i, %j : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.shift_right
  %12 = graph.shift_right %i, %j : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  return
}

// -----

// Tests that compare prints its direction as a keyword and select broadcasts three operands.
// CHECK-LABEL: func.func @compare_select
func.func @compare_select(%x: tensor<4x3xf32>, %y: tensor<3xf32>, %c: tensor<4x1xi1>) -> tensor<4x3xf32> {
  // CHECK: graph.compare lt, %{{.*}}, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %0 = graph.compare lt, %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  // CHECK: graph.compare ge
  %1 = graph.compare ge, %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  // CHECK: graph.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = graph.select %c, %x, %y : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %2 : tensor<4x3xf32>
}

// -----

// Tests that cast names only the target element type; the shape follows the operand.
// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<2x?xf32>) -> tensor<2x?xbf16> {
  // CHECK: %[[H:.+]] = graph.cast %{{.*}} : tensor<2x?xf32> to f16
  %0 = graph.cast %x : tensor<2x?xf32> to f16
  // CHECK: graph.cast %[[H]] : tensor<2x?xf16> to bf16
  %1 = graph.cast %0 : tensor<2x?xf16> to bf16
  return %1 : tensor<2x?xbf16>
}

// -----

// Tests the data-movement ops.
// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %ids: tensor<6xi64>, %v: tensor<f32>, %d: tensor<?x3x4xf32>) {
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  %0 = graph.concat %x, %y {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x8x4xf32>
  // CHECK: graph.expand %{{.*}} to [3, 2, 1, 4] : tensor<2x3x4xf32> -> tensor<3x2x3x4xf32>
  %1 = graph.expand %x to [3, 2, 1, 4] : tensor<2x3x4xf32> -> tensor<3x2x3x4xf32>
  // CHECK: graph.flatten %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %2 = graph.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<2x6x4xf32>
  %3 = graph.gather %x, %ids {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<6xi64>) -> tensor<2x6x4xf32>
  // CHECK: graph.pad constant %{{.*}}, %{{.*}} low [0, 1, 2] high [1, 0, -1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3x4x5xf32>
  %4 = graph.pad constant %x, %v low [0, 1, 2] high [1, 0, -1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3x4x5xf32>
  // CHECK: graph.pad reflect %{{.*}} low [1, 2, 3] high [1, 2, 3] : (tensor<2x3x4xf32>) -> tensor<4x7x10xf32>
  %5 = graph.pad reflect %x low [1, 2, 3] high [1, 2, 3] : (tensor<2x3x4xf32>) -> tensor<4x7x10xf32>
  // CHECK: graph.pad edge
  %6 = graph.pad edge %x low [0, 0, 5] high [0, 0, 5] : (tensor<2x3x4xf32>) -> tensor<2x3x14xf32>
  // CHECK: graph.reshape %{{.*}} to [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
  %7 = graph.reshape %d to [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
  // CHECK: graph.reshape %{{.*}} to [4, -1] : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %8 = graph.reshape %x to [4, -1] : tensor<2x3x4xf32> -> tensor<4x6xf32>
  // CHECK: graph.slice %{{.*}} {limits = array<i64: 2, 3, 0>, starts = array<i64: 1, 0, 3>, strides = array<i64: 1, 2, -2>} : (tensor<2x3x4xf32>) -> tensor<1x2x2xf32>
  %9 = graph.slice %x {starts = array<i64: 1, 0, 3>, limits = array<i64: 2, 3, 0>, strides = array<i64: 1, 2, -2>} : (tensor<2x3x4xf32>) -> tensor<1x2x2xf32>
  // CHECK: graph.slice %{{.*}} {limits = array<i64: 2, 3, -1>, starts = array<i64: 0, 0, 3>, strides = array<i64: 1, 1, -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %10 = graph.slice %x {starts = array<i64: 0, 0, 3>, limits = array<i64: 2, 3, -1>, strides = array<i64: 1, 1, -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: %{{.*}}:3 = graph.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x1xf32>, tensor<2x3x2xf32>)
  %11:3 = graph.split %x {axis = 2 : i64, sizes = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x1xf32>, tensor<2x3x2xf32>)
  // CHECK: graph.squeeze %{{.*}} {axes = array<i64: 2>} : (tensor<2x3x1xf32>) -> tensor<2x3xf32>
  %12 = graph.squeeze %11#0 {axes = array<i64: 2>} : (tensor<2x3x1xf32>) -> tensor<2x3xf32>
  // CHECK: graph.transpose %{{.*}}, [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %13 = graph.transpose %x, [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: graph.unsqueeze %{{.*}} {axes = array<i64: 0, 4>} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4x1xf32>
  %14 = graph.unsqueeze %x {axes = array<i64: 0, 4>} : (tensor<2x3x4xf32>) -> tensor<1x2x3x4x1xf32>
  return
}

// -----

// Tests the reductions, with and without kept dimensions.
// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi32>) {
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  %0 = graph.reduce_sum %x {axes = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  // CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %1 = graph.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  // CHECK: graph.reduce_max
  %2 = graph.reduce_max %i {axes = array<i64: 0>} : (tensor<2x3xi32>) -> tensor<3xi32>
  // CHECK: graph.reduce_min
  %3 = graph.reduce_min %x {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK: graph.reduce_prod
  %4 = graph.reduce_prod %i {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<2x1xi32>
  return
}

// -----

// Tests matmul's batch broadcasting and vector promotion, and gemm with transposes and addend.
// CHECK-LABEL: func.func @linear_algebra
func.func @linear_algebra(%a: tensor<2x12x128x64xf32>, %b: tensor<12x64x128xf32>, %v: tensor<64xf32>, %x: tensor<8x64xf32>, %w: tensor<32x64xf32>, %c: tensor<32xf32>) {
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<2x12x128x64xf32>, tensor<12x64x128xf32>) -> tensor<2x12x128x128xf32>
  %0 = graph.matmul %a, %b : (tensor<2x12x128x64xf32>, tensor<12x64x128xf32>) -> tensor<2x12x128x128xf32>
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<2x12x128x64xf32>, tensor<64xf32>) -> tensor<2x12x128xf32>
  %1 = graph.matmul %a, %v : (tensor<2x12x128x64xf32>, tensor<64xf32>) -> tensor<2x12x128xf32>
  // CHECK: graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, trans_b = true} : (tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %2 = graph.gemm %x, %w, %c {trans_b = true, alpha = 0.5 : f32} : (tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  // CHECK: graph.gemm %{{.*}}, %{{.*}} {trans_a = true} : (tensor<64x8xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  %t = graph.transpose %x, [1, 0] : tensor<8x64xf32> -> tensor<64x8xf32>
  %u = graph.transpose %w, [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  %3 = graph.gemm %t, %u {trans_a = true} : (tensor<64x8xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  return
}

// -----

// Tests convolution in 1, 2 and 3 spatial dimensions, grouped and with bias, and pooling.
// CHECK-LABEL: func.func @conv_pool
func.func @conv_pool(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>, %s: tensor<2x8x100xf16>, %sw: tensor<8x2x5xf16>, %v: tensor<1x4x8x8x8xf32>, %vw: tensor<4x4x3x3x3xf32>, %dyn: tensor<?x3x?x?xf32>) {
  // CHECK: graph.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, pad_high = array<i64: 3, 3>, pad_low = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %0 = graph.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 3, 3>, pad_high = array<i64: 3, 3>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  // CHECK: graph.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2>, groups = 4 : i64, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 3>} : (tensor<2x8x100xf16>, tensor<8x2x5xf16>) -> tensor<2x8x31xf16>
  %1 = graph.conv %s, %sw {strides = array<i64: 3>, dilations = array<i64: 2>, pad_low = array<i64: 0>, pad_high = array<i64: 0>, groups = 4 : i64} : (tensor<2x8x100xf16>, tensor<8x2x5xf16>) -> tensor<2x8x31xf16>
  // CHECK: graph.conv {{.*}} -> tensor<1x4x8x8x8xf32>
  %2 = graph.conv %v, %vw {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>, pad_low = array<i64: 1, 1, 1>, pad_high = array<i64: 1, 1, 1>} : (tensor<1x4x8x8x8xf32>, tensor<4x4x3x3x3xf32>) -> tensor<1x4x8x8x8xf32>
  // CHECK: graph.conv {{.*}} : (tensor<?x3x?x?xf32>, tensor<64x3x7x7xf32>) -> tensor<?x64x?x?xf32>
  %3 = graph.conv %dyn, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 3, 3>, pad_high = array<i64: 3, 3>} : (tensor<?x3x?x?xf32>, tensor<64x3x7x7xf32>) -> tensor<?x64x?x?xf32>
  // CHECK: graph.max_pool %{{.*}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %4 = graph.max_pool %0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: graph.avg_pool %{{.*}} {ceil_mode = true, count_include_pad = true, {{.*}}} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
  %5 = graph.avg_pool %4 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, ceil_mode = true, count_include_pad = true} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
  // CHECK: graph.global_avg_pool %{{.*}} : (tensor<1x64x56x56xf32>) -> tensor<1x64x1x1xf32>
  %6 = graph.global_avg_pool %4 : (tensor<1x64x56x56xf32>) -> tensor<1x64x1x1xf32>
  // CHECK: graph.global_max_pool %{{.*}} : (tensor<2x8x100xf16>) -> tensor<2x8x1xf16>
  %7 = graph.global_max_pool %s : (tensor<2x8x100xf16>) -> tensor<2x8x1xf16>
  return
}

// -----

// Tests the normalization ops and softmax.
// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<1x64x56x56xf32>, %c: tensor<64xf32>, %h: tensor<2x128x768xf32>, %g: tensor<768xf32>) {
  // CHECK: graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  %0 = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.0e-3 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  %1 = graph.layer_norm %h, %g, %g {axis = 2 : i64} : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  // CHECK: graph.layer_norm %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<2x128x768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  %2 = graph.layer_norm %h, %g {axis = 2 : i64, epsilon = 1.0e-12 : f32} : (tensor<2x128x768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
  // CHECK: graph.softmax %{{.*}} {axis = 2 : i64} : tensor<2x128x768xf32>
  %3 = graph.softmax %h {axis = 2 : i64} : tensor<2x128x768xf32>
  // CHECK: graph.log_softmax %{{.*}} {axis = 0 : i64} : tensor<2x128x768xf32>
  %4 = graph.log_softmax %h {axis = 0 : i64} : tensor<2x128x768xf32>
  return
}

// -----

// Tests the float predicates, arctangent, index reductions, cumulative sum and top-k.
// CHECK-LABEL: func.func @index_ops
func.func @index_ops(%x: tensor<8x?xf32>, %i: tensor<2x5xi32>) {
  // CHECK: graph.is_nan %{{.*}} : (tensor<8x?xf32>) -> tensor<8x?xi1>
  %0 = graph.is_nan %x : (tensor<8x?xf32>) -> tensor<8x?xi1>
  // CHECK: graph.is_inf %{{.*}} : (tensor<8x?xf32>) -> tensor<8x?xi1>
  %1 = graph.is_inf %x : (tensor<8x?xf32>) -> tensor<8x?xi1>
  // CHECK: graph.atan %{{.*}} : tensor<8x?xf32>
  %2 = graph.atan %x : tensor<8x?xf32>
  // CHECK: graph.arg_max %{{.*}} {axis = 1 : i64, keepdims = true} : (tensor<8x?xf32>) -> tensor<8x1xi64>
  %3 = graph.arg_max %x {axis = 1 : i64, keepdims = true} : (tensor<8x?xf32>) -> tensor<8x1xi64>
  // CHECK: graph.arg_min %{{.*}} {axis = 0 : i64, select_last_index = true} : (tensor<2x5xi32>) -> tensor<5xi64>
  %4 = graph.arg_min %i {axis = 0 : i64, select_last_index = true} : (tensor<2x5xi32>) -> tensor<5xi64>
  // CHECK: graph.cumsum %{{.*}} {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x5xi32>
  %5 = graph.cumsum %i {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x5xi32>
  // CHECK: graph.cumprod %{{.*}} {axis = 0 : i64} : tensor<2x5xi32>
  %cp = graph.cumprod %i {axis = 0 : i64} : tensor<2x5xi32>
  // CHECK: graph.top_k %{{.*}} {axis = 1 : i64, k = 3 : i64, largest = false} : (tensor<2x5xi32>) -> (tensor<2x3xi32>, tensor<2x3xi64>)
  %6:2 = graph.top_k %i {axis = 1 : i64, k = 3 : i64, largest = false} : (tensor<2x5xi32>) -> (tensor<2x3xi32>, tensor<2x3xi64>)
  return
}

// -----

// Tests gathers and scatters by element and by index vector, with reductions printed by name.
// CHECK-LABEL: func.func @gather_scatter
func.func @gather_scatter(%x: tensor<3x4xf32>, %e: tensor<3x2xi64>, %u: tensor<3x2xf32>, %t: tensor<4x5x6xf32>, %n: tensor<2x2xi64>, %v: tensor<2x6xf32>) {
  // CHECK: graph.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  %0 = graph.gather_elements %x, %e {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  // CHECK: graph.gather_nd %{{.*}}, %{{.*}} : (tensor<4x5x6xf32>, tensor<2x2xi64>) -> tensor<2x6xf32>
  %1 = graph.gather_nd %t, %n : (tensor<4x5x6xf32>, tensor<2x2xi64>) -> tensor<2x6xf32>
  // CHECK: graph.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<4x5x6xf32>, tensor<4x1xi64>) -> tensor<4x6xf32>
  %b = graph.slice %n {starts = array<i64: 0, 0>, limits = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (tensor<2x2xi64>) -> tensor<2x1xi64>
  %b4 = graph.concat %b, %b {axis = 0 : i64} : (tensor<2x1xi64>, tensor<2x1xi64>) -> tensor<4x1xi64>
  %2 = graph.gather_nd %t, %b4 {batch_dims = 1 : i64} : (tensor<4x5x6xf32>, tensor<4x1xi64>) -> tensor<4x6xf32>
  // CHECK: graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = #graph<scatter_reduction add>} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  %3 = graph.scatter_elements %x, %e, %u {axis = 1 : i64, reduction = #graph<scatter_reduction add>} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x5x6xf32>, tensor<2x2xi64>, tensor<2x6xf32>) -> tensor<4x5x6xf32>
  %4 = graph.scatter_nd %t, %n, %v : (tensor<4x5x6xf32>, tensor<2x2xi64>, tensor<2x6xf32>) -> tensor<4x5x6xf32>
  return
}

// -----

// Tests transposed convolution and resize.
// CHECK-LABEL: func.func @upsampling
func.func @upsampling(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<8xf32>) {
  // CHECK: graph.conv_transpose %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %0 = graph.conv_transpose %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  // CHECK: graph.resize %{{.*}} {coordinate_transform = #graph<coordinate_transform align_corners>, mode = #graph<resize_mode linear>, scales = array<f32: 1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00>, sizes = array<i64: 1, 16, 16, 16>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x16x16xf32>
  %1 = graph.resize %x {mode = #graph<resize_mode linear>, coordinate_transform = #graph<coordinate_transform align_corners>, scales = array<f32: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 16, 16, 16>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x16x16xf32>
  // CHECK: graph.resize %{{.*}} {cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = true, mode = #graph<resize_mode cubic>, nearest_rounding = #graph<nearest_rounding floor>, {{.*}}} : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  %2 = graph.resize %x {mode = #graph<resize_mode cubic>, nearest_rounding = #graph<nearest_rounding floor>, cubic_coeff_a = -0.5 : f32, exclude_outside = true, scales = array<f32: 1.0, 1.0, 0.5, 0.5>, sizes = array<i64: 1, 16, 4, 4>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  return
}
