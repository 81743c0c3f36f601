// RUN: kiln check %kiln_source_dir/examples/tiny_cnn.mlir --shape image=4x3x32x32 | FileCheck %s
// RUN: kiln check %kiln_source_dir/examples/tiny_cnn.mlir | FileCheck %s --check-prefix=DYNAMIC
// RUN: not kiln check %kiln_source_dir/examples/tiny_cnn.mlir --shape image=4x1x32x32 2>&1 | FileCheck %s --check-prefix=MISMATCH
// RUN: not kiln check %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln check %s 2>&1 | FileCheck %s --check-prefix=INVALID

// Tests that the shipped example parses, verifies and becomes static when its batch is bound, and
// that the CLI names the file and the problem for bad input.
// CHECK: function @tiny_cnn
// CHECK-NEXT: input  image: tensor<4x3x32x32xf32>
// CHECK-NEXT: output 0: tensor<4x10xf32>
// CHECK-NEXT: 22 ops: {{.*}}graph.conv=2{{.*}}graph.gemm=1{{.*}}graph.max_pool=1
// DYNAMIC: input  image: tensor<?x3x32x32xf32>
// DYNAMIC: output 0: tensor<?x10xf32>
// MISMATCH: error: shape binding 'image=4x1x32x32' does not fit argument 0 of type 'tensor<?x3x32x32xf32>'
// MISMATCH: kiln: error: {{.*}}tiny_cnn.mlir: shape propagation failed
// MISSING: File does not exist: {{.*}}kiln_check.mlir.missing
// INVALID: kiln_check.mlir:[[# @LINE + 3]]:8: error: 'graph.exp' op operand #0 must be ranked tensor of floating-point values
// INVALID: kiln: error: {{.*}}kiln_check.mlir: not a valid graph program
func.func @bad(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = graph.exp %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}
