// RUN: kiln-opt --split-input-file --kiln-refine-shapes %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-refine-shapes="bind=input=8x3x32x32" %s | FileCheck %s --check-prefix=BIND
// RUN: not kiln-opt --split-input-file --kiln-refine-shapes="bind=input=8x4x32x32" %s 2>&1 | FileCheck %s --check-prefix=CONFLICT
// RUN: not kiln-opt --split-input-file --kiln-refine-shapes="bind=nosuch=8" %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kiln-opt --split-input-file --kiln-refine-shapes="bind=input" %s 2>&1 | FileCheck %s --check-prefix=MALFORMED

// Tests that static shapes known from operands replace dynamic result types, through the
// function's return type; and that binding an input's batch makes the whole program static.
// CHECK-LABEL: func.func @conv_net
// CHECK-SAME: (%{{.+}}: tensor<?x3x32x32xf32> {kiln.name = "input"}) -> tensor<?x10xf32>
// CHECK: graph.conv {{.*}} -> tensor<?x16x16x16xf32>
// CHECK: graph.global_avg_pool {{.*}} -> tensor<?x16x1x1xf32>
// CHECK: graph.reshape {{.*}} -> tensor<?x16xf32>
// CHECK: graph.gemm {{.*}} -> tensor<?x10xf32>
// BIND-LABEL: func.func @conv_net
// BIND-SAME: (%{{.+}}: tensor<8x3x32x32xf32> {kiln.name = "input"}) -> tensor<8x10xf32>
// BIND: graph.conv {{.*}} -> tensor<8x16x16x16xf32>
// BIND: graph.gemm {{.*}} -> tensor<8x10xf32>
// CONFLICT: error: shape binding 'input=8x4x32x32' does not fit argument 0 of type 'tensor<?x3x32x32xf32>'
// UNKNOWN: error: shape binding 'nosuch=8' names no argument
// MALFORMED: error: malformed shape binding 'input', expected NAME=DIMS like input=1x3x224x224
func.func @conv_net(%x: tensor<?x3x32x32xf32> {kiln.name = "input"}) -> tensor<?x?xf32> {
  %w = graph.constant dense<0.5> : tensor<16x3x3x3xf32>
  %fc = graph.constant dense<0.25> : tensor<10x16xf32>
  %b = graph.constant dense<1.0> : tensor<10xf32>
  %0 = graph.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<?x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  %1 = graph.global_avg_pool %0 : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %2 = graph.reshape %1 to [-1, 16] : tensor<?x?x?x?xf32> -> tensor<?x?xf32>
  %3 = graph.gemm %2, %fc, %b {trans_b = true} : (tensor<?x?xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<?x?xf32>
  return %3 : tensor<?x?xf32>
}

// -----

// Tests that binding a dynamic dimension clamps the slice bounds that lay past it (an unbounded
// limit, a start past the bound size), which only a dynamic dimension allows: a graph program
// imported without its shapes still compiles once they are bound.
// CHECK-LABEL: func.func @slice_past_dynamic_dim
// CHECK: graph.slice {{.*}}limits = array<i64: 9223372036854775807, 3, 32, 32>{{.*}} -> tensor<?x3x32x32xf32>
// CHECK: graph.slice {{.*}}starts = array<i64: 10, 0, 0, 0>{{.*}} -> tensor<?x3x32x32xf32>
// BIND-LABEL: func.func @slice_past_dynamic_dim
// BIND-SAME: -> (tensor<4x3x32x32xf32>, tensor<0x3x32x32xf32>)
// BIND: graph.slice {{.*}}limits = array<i64: 8, 3, 32, 32>, starts = array<i64: 1, 0, 0, 0>{{.*}} -> tensor<4x3x32x32xf32>
// BIND: graph.slice {{.*}}limits = array<i64: 8, 3, 32, 32>, starts = array<i64: 8, 0, 0, 0>{{.*}} -> tensor<0x3x32x32xf32>
func.func @slice_past_dynamic_dim(%x: tensor<?x3x32x32xf32> {kiln.name = "input"}) -> (tensor<?x3x32x32xf32>, tensor<?x3x32x32xf32>) {
  %0 = graph.slice %x {starts = array<i64: 1, 0, 0, 0>, limits = array<i64: 9223372036854775807, 3, 32, 32>, strides = array<i64: 2, 1, 1, 1>} : (tensor<?x3x32x32xf32>) -> tensor<?x3x32x32xf32>
  %1 = graph.slice %x {starts = array<i64: 10, 0, 0, 0>, limits = array<i64: 9223372036854775807, 3, 32, 32>, strides = array<i64: 1, 1, 1, 1>} : (tensor<?x3x32x32xf32>) -> tensor<?x3x32x32xf32>
  return %0, %1 : tensor<?x3x32x32xf32>, tensor<?x3x32x32xf32>
}
