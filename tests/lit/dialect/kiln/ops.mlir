// RUN: kiln-opt %s | FileCheck %s

// Tests that the declared kiln attributes verify where they stand and round-trip.
// CHECK-LABEL: func.func @declared
// CHECK-SAME: kiln.name = "input"
// CHECK-SAME: kiln.name = "output"
func.func @declared(%x: tensor<4xf32> {kiln.name = "input", kiln.dim_bounds = array<i64: 1, 4>})
    -> (tensor<4xf32> {kiln.name = "output", kiln.check = "finite"}) {
  // CHECK: graph.abs %{{.*}} {kiln.fusion_group = 2 : i64, kiln.math = "tf32"}
  %y = graph.abs %x {kiln.fusion_group = 2 : i64, kiln.math = "tf32"} : tensor<4xf32>
  return %y : tensor<4xf32>
}
