// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-lower-linalg-to-loops --mlir-print-local-scope %s | FileCheck %s

// Tests that an elementwise op working in place (its input is its output's buffer) becomes
// loops whose innermost one carries a parallel-accesses group, and only that one: without it
// LLVM's vectorizer checks the two pointers at run time and runs the in-place kernel scalar.
// CHECK-LABEL: func.func @in_place
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[BUF:.+]][
// CHECK: memref.store %{{.+}}, %[[BUF]][
// CHECK-NEXT: } {llvm.loop_annotation = #llvm.loop_annotation<parallelAccesses = <id = distinct{{\[}}0{{\]}}<>>>}
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
#map = affine_map<(i, j) -> (i, j)>
func.func @in_place(%x: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x8xf32>) outs(%x : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Tests that a row sum's innermost loop, the reduction, is not marked: its iterations add into
// the same element.
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: llvm.loop_annotation
// CHECK: return
func.func @row_sum(%x: memref<4x8xf32>, %sum: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x8xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a column sum's innermost loop, a parallel dimension under the reduction, is
// marked (its iterations add into different elements), and the reduction's loop is not.
// CHECK-LABEL: func.func @column_sum
// CHECK: scf.for
// CHECK: scf.for
// CHECK: } {llvm.loop_annotation = #llvm.loop_annotation<parallelAccesses = <id = distinct{{\[}}0{{\]}}<>>>}
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK-NEXT: return
func.func @column_sum(%x: memref<4x8xf32>, %sum: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<4x8xf32>) outs(%sum : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that two ops get loops of their own, each with a group of its own, and that a named op
// (a transpose) is lowered too.
// CHECK-LABEL: func.func @two_groups
// CHECK: } {llvm.loop_annotation = #llvm.loop_annotation<parallelAccesses = <id = distinct{{\[}}0{{\]}}<>>>}
// CHECK: arith.negf
// CHECK: } {llvm.loop_annotation = #llvm.loop_annotation<parallelAccesses = <id = distinct{{\[}}1{{\]}}<>>>}
func.func @two_groups(%x: memref<4x8xf32>, %y: memref<8x4xf32>, %z: memref<8x4xf32>) {
  linalg.transpose ins(%x : memref<4x8xf32>) outs(%y : memref<8x4xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<8x4xf32>) outs(%z : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Tests that an op on tensors is refused: the pass lowers bufferized kernels.
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{cannot lower to loops before bufferization: an operand is a tensor}}
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
