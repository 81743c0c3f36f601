// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-form-program="entry=forward" %s | FileCheck %s

// Tests that the entry function becomes a program: the argument an input with its name, the
// weight a constant, each call result an allocation written by its step (the library call with
// the call's attributes as parameters), the returned result written straight into the output;
// the dispatch function moves into @kernels, the library declaration is erased, and the
// elementwise dispatch may write its output over its input.
// CHECK-LABEL: module @chain
// CHECK-NOT: func.func @forward
// CHECK-NOT: kiln.library_call
// CHECK: program.program @forward device(cpu) {
// CHECK-NEXT: %[[X:.+]] = program.input 0 "x" : memref<2x8xf32>
// CHECK-NEXT: %[[W:.+]] = program.constant dense<5.000000e-01> : tensor<8x4xf32> -> memref<8x4xf32>
// CHECK-NEXT: %[[T:.+]] = program.alloc : memref<2x4xf32>
// CHECK-NEXT: program.library_call "onednn.matmul" ins(%[[X]], %[[W]] : memref<2x8xf32>, memref<8x4xf32>) outs(%[[T]] : memref<2x4xf32>) params({trans_b = false}) {description = "onednn.matmul (fc)"}
// CHECK-NEXT: %[[Y:.+]] = program.output 0 "y" : memref<2x4xf32>
// CHECK-NEXT: program.dispatch @kernels::@dispatch_0 ins(%[[T]] : memref<2x4xf32>) outs(%[[Y]] : memref<2x4xf32>) {description = "linalg.generic (relu)", in_place = array<i64: 0, 0>}
// CHECK-NEXT: }
// CHECK: module @kernels {
// CHECK-NEXT: func.func private @dispatch_0
module @chain {
  func.func private @onednn.matmul_0(tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> attributes {kiln.library_call = "onednn.matmul"}
  func.func @forward(%x: tensor<2x8xf32> {kiln.name = "x"}) -> (tensor<2x4xf32> {kiln.name = "y"}) {
    %w = arith.constant dense<0.5> : tensor<8x4xf32>
    %0 = call @onednn.matmul_0(%x, %w) {trans_b = false} : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> loc("fc")
    %1 = call @dispatch_0(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    return %1 : tensor<2x4xf32>
  }
  func.func private @dispatch_0(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {kiln.description = "linalg.generic (relu)", kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = arith.maximumf %in, %zero : f32
      linalg.yield %1 : f32
    } -> tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}

// -----

// Tests that a dispatch reading its input other than at the element it writes (a transpose) and
// one whose output starts from its input get no in_place pairs.
// CHECK-LABEL: module @not_in_place
// CHECK: program.dispatch @kernels::@transpose
// CHECK-NOT: in_place
// CHECK: program.dispatch @kernels::@accumulate
// CHECK-NOT: in_place
// CHECK: module @kernels
module @not_in_place {
  func.func @forward(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %0 = call @transpose(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = call @accumulate(%0) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
  }
  func.func private @transpose(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.dispatch} {
    %e = tensor.empty() : tensor<4x4xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
  func.func private @accumulate(%arg0: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {kiln.dispatch} {
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x4xf32>) outs(%arg0 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = arith.addf %in, %out : f32
      linalg.yield %1 : f32
    } -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
}

// -----

// Tests the outputs no step can write directly: an input returned as it is, a constant, and the
// second return of a result are copied; a result returned through a reshape is written into its
// first output, seen with the result's shape through a view; a declared unsigned type is kept.
// CHECK-LABEL: module @outputs
// CHECK: %[[X:.+]] = program.input 0 "input_0" {declared_type = tensor<4xui8>} : memref<4xi8>
// CHECK: %[[C:.+]] = program.constant
// CHECK: %[[O2:.+]] = program.output 2 "output_2" : memref<2x2xi8>
// CHECK-NEXT: %[[V:.+]] = program.view %[[O2]] : memref<2x2xi8> to memref<4xi8>
// CHECK-NEXT: program.dispatch @kernels::@negate ins(%[[X]] : memref<4xi8>) outs(%[[V]] : memref<4xi8>)
// CHECK-NEXT: %[[R:.+]] = program.view %[[V]] : memref<4xi8> to memref<2x2xi8>
// CHECK-NEXT: %[[O0:.+]] = program.output 0 "output_0" {declared_type = tensor<4xui8>} : memref<4xi8>
// CHECK-NEXT: program.copy %[[X]] to %[[O0]] {description = "output 0"}
// CHECK-NEXT: %[[O1:.+]] = program.output 1 "output_1" : memref<4xi8>
// CHECK-NEXT: program.copy %[[C]] to %[[O1]] {description = "output 1"}
// CHECK-NEXT: %[[O3:.+]] = program.output 3 "output_3" : memref<2x2xi8>
// CHECK-NEXT: program.copy %[[R]] to %[[O3]] {description = "output 3"}
module @outputs {
  func.func @forward(%x: tensor<4xi8> {kiln.declared_type = tensor<4xui8>}) -> (tensor<4xi8> {kiln.declared_type = tensor<4xui8>}, tensor<4xi8>, tensor<2x2xi8>, tensor<2x2xi8>) {
    %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi8>
    %0 = call @negate(%x) : (tensor<4xi8>) -> tensor<4xi8>
    %1 = tensor.expand_shape %0 [[0, 1]] output_shape [2, 2] : tensor<4xi8> into tensor<2x2xi8>
    return %x, %c, %1, %1 : tensor<4xi8>, tensor<4xi8>, tensor<2x2xi8>, tensor<2x2xi8>
  }
  func.func private @negate(%arg0: tensor<4xi8>) -> tensor<4xi8> attributes {kiln.dispatch} {
    return %arg0 : tensor<4xi8>
  }
}

// -----

// Tests that a step's result returned twice is written into the first output and copied from
// there into the second (the allocation the first output replaced is gone by then).
// CHECK-LABEL: module @returned_twice
// CHECK: %[[O0:.+]] = program.output 0 "output_0" : memref<4xf32>
// CHECK-NEXT: program.dispatch @kernels::@negate ins(%{{.+}} : memref<4xf32>) outs(%[[O0]] : memref<4xf32>)
// CHECK-NEXT: %[[O1:.+]] = program.output 1 "output_1" : memref<4xf32>
// CHECK-NEXT: program.copy %[[O0]] to %[[O1]] {description = "output 1"}
module @returned_twice {
  func.func @forward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = call @negate(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0, %0 : tensor<4xf32>, tensor<4xf32>
  }
  func.func private @negate(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    return %arg0 : tensor<4xf32>
  }
}

// -----

// Tests that an op left in the entry function, which no kernel computes, is an error naming it.
module @uncompiled {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{'math.exp' was not compiled into a kernel}}
    %0 = "math.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Tests that an input dimension left dynamic without a range is an error that says how to give
// one.
module @dynamic {
  // expected-error @+1 {{dimension 0 of input 0 is dynamic without a range; give one with --shape-range}}
  func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    return %x : tensor<?x4xf32>
  }
}

// -----

// Tests a program for a range of shapes: each ranged input dimension is a symbol; buffers take
// the shape at the symbols' upper bounds, and kiln.dims the run's, through kernels (a dispatch's
// result sized from its argument) and views (a collapse multiplies the dimensions).
// (The maps print before the module.)
// CHECK: #[[XDIMS:.+]] = affine_map<()[s0, s1] -> (s0, s1, 4)>
// CHECK-NEXT: #[[FLAT:.+]] = affine_map<()[s0, s1] -> (s0 * s1, 4)>
// CHECK-LABEL: module @ranges
// CHECK: program.program @forward device(cpu) attributes {kiln.symbols = [{dim = 0 : i64, input = 0 : i64, max = 8 : i64, min = 1 : i64, name = "x.0"}, {dim = 1 : i64, input = 0 : i64, max = 16 : i64, min = 2 : i64, name = "x.1"}]}
// CHECK: %[[X:.+]] = program.input 0 "x" {kiln.dims = #[[XDIMS]]} : memref<8x16x4xf32>
// CHECK: %[[Y:.+]] = program.output 0 "y" {kiln.dims = #[[FLAT]]} : memref<128x4xf32>
// CHECK: %[[E:.+]] = program.view %[[Y]] {kiln.dims = #[[XDIMS]]} : memref<128x4xf32> to memref<8x16x4xf32>
// CHECK: program.dispatch @kernels::@dispatch_0 ins(%[[X]] : memref<8x16x4xf32>) outs(%[[E]] : memref<8x16x4xf32>)
module @ranges {
  func.func private @dispatch_0(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> attributes {kiln.dispatch} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = tensor.dim %x, %c0 : tensor<?x?x4xf32>
    %m = tensor.dim %x, %c1 : tensor<?x?x4xf32>
    %e = tensor.empty(%n, %m) : tensor<?x?x4xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<?x?x4xf32>) outs(%e : tensor<?x?x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = math.exp %in : f32
      linalg.yield %1 : f32
    } -> tensor<?x?x4xf32>
    return %0 : tensor<?x?x4xf32>
  }
  func.func @forward(%x: tensor<?x?x4xf32> {kiln.name = "x", kiln.dim_bounds = array<i64: 1, 8, 2, 16, 4, 4>}) -> (tensor<?x4xf32> {kiln.name = "y"}) {
    %0 = call @dispatch_0(%x) : (tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
    %1 = tensor.collapse_shape %0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    return %1 : tensor<?x4xf32>
  }
}

// -----

// Tests that a contiguous slice at an aligned offset becomes a view of its source's bytes from
// that offset (no step), and that returning it copies those bytes into the output.
// CHECK-LABEL: module @slice_view
// CHECK: %[[X:.+]] = program.input 0 "x" : memref<4x64xf32>
// CHECK: %[[ROW:.+]] = program.view %[[X]] {byte_offset = 256 : i64} : memref<4x64xf32> to memref<64xf32>
// CHECK: %[[Y:.+]] = program.output 0
// CHECK: program.copy %[[ROW]] to %[[Y]]
module @slice_view {
  func.func @forward(%x: tensor<4x64xf32> {kiln.name = "x"}) -> tensor<64xf32> {
    %row = tensor.extract_slice %x[1, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<64xf32>
    return %row : tensor<64xf32>
  }
}

// -----

// Tests that a oneDNN convolution may write its result over its residual addend: the first
// 'add' operand of the result's type is accumulated into by the sum post-op, so the call lists
// it (input 2 with the weights and no bias) in_place with its output.
// CHECK-LABEL: module @residual
// CHECK: program.library_call "onednn.convolution" ins(%{{.*}}, %{{.*}}, %[[SKIP:.+]] : memref<1x4x6x6xf32>, memref<4x4x1x1xf32>, memref<1x4x6x6xf32>) outs(%{{.*}} : memref<1x4x6x6xf32>)
// CHECK-SAME: in_place = array<i64: 2, 0>
module @residual {
  func.func private @onednn.convolution_0(tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> attributes {kiln.library_call = "onednn.convolution"}
  func.func @forward(%x: tensor<1x4x6x6xf32> {kiln.name = "x"}) -> (tensor<1x4x6x6xf32> {kiln.name = "y"}) {
    %w = arith.constant dense<0.25> : tensor<4x4x1x1xf32>
    %0 = call @onednn.convolution_0(%x, %w, %x) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>, groups = 1 : i64, post_ops = ["add", "relu"]} : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
    return %0 : tensor<1x4x6x6xf32>
  }
}

// -----

// Tests that a oneDNN matmul may write its result over a residual added first (after the bias,
// input 3), and that one added after another post-op is not listed (a binary post-op reads it).
// CHECK-LABEL: module @matmul_residual
// CHECK: program.library_call "onednn.matmul" ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8x8xf32>, memref<8xf32>, memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32>)
// CHECK-SAME: in_place = array<i64: 3, 0>
// CHECK: program.library_call "onednn.matmul"
// CHECK-SAME: params({post_ops = ["relu", "add"]}) {description = "onednn.matmul"}{{$}}
module @matmul_residual {
  func.func private @onednn.matmul_0(tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> attributes {kiln.library_call = "onednn.matmul"}
  func.func @forward(%x: tensor<4x8xf32> {kiln.name = "x"}) -> (tensor<4x8xf32> {kiln.name = "y"}) {
    %w = arith.constant dense<0.25> : tensor<8x8xf32>
    %b = arith.constant dense<0.5> : tensor<8xf32>
    %0 = call @onednn.matmul_0(%x, %w, %b, %x) {post_ops = ["add"]} : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = call @onednn.matmul_0(%0, %w, %b, %0) {post_ops = ["relu", "add"]} : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
}

// -----

// Tests that a clamp of a dynamic size (a slice's limit against its dimension, as exporters
// write it) is decided by the ranges: the dimension is at most 8, so min(dim, 100) is the
// dimension and the result's upper bound 8.
// CHECK-LABEL: module @clamp
// CHECK: program.output 0 "y" {kiln.dims = #{{.+}}} : memref<8x4xf32>
module @clamp {
  func.func private @dispatch_0(%x: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {kiln.dispatch} {
    %c0 = arith.constant 0 : index
    %c100 = arith.constant 100 : index
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %m = arith.minsi %n, %c100 : index
    %e = tensor.empty(%m) : tensor<?x4xf32>
    %0 = tensor.extract_slice %x[0, 0] [%m, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
    %1 = linalg.copy ins(%0 : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
    return %1 : tensor<?x4xf32>
  }
  func.func @forward(%x: tensor<?x4xf32> {kiln.name = "x", kiln.dim_bounds = array<i64: 1, 8, 4, 4>}) -> (tensor<?x4xf32> {kiln.name = "y"}) {
    %0 = call @dispatch_0(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}
