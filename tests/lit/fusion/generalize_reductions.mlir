// RUN: kiln-opt --kiln-generalize-reductions %s | FileCheck %s

// Tests that a linalg.reduce becomes the linalg.generic it stands for (the reduced dimension a
// reduction loop, the result indexed by the others), with its body, and that other named ops are
// left alone.
// CHECK-LABEL: func.func @sum_rows
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%{{.+}} : tensor<4x8xf32>) outs(%{{.+}} : tensor<4xf32>)
// CHECK: arith.addf
// CHECK: linalg.transpose
func.func @sum_rows(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<8x4xf32>) {
  %sum = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  return %sum, %t : tensor<4xf32>, tensor<8x4xf32>
}
