// RUN: kiln-opt --split-input-file --kiln-reassociate-reductions %s | FileCheck %s

// Tests that the float arithmetic of a reduction's body (here a row's maximum and its sum of
// scaled values) may be reassociated, keeping the flags it had, and that an elementwise generic
// is left as it was.
// CHECK-LABEL: func.func @row_reductions
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc,contract> : f32
// CHECK: arith.maximumf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: arith.subf %{{.+}}, %{{.+}} : f32
// CHECK-NOT: fastmath
#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_reductions(%x: memref<4x8xf32>, %sum: memref<4xf32>, %max: memref<4xf32>, %y: memref<4x8xf32>) {
  %c = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x8xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %m, %acc fastmath<contract> : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x8xf32>) outs(%max : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %c : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// Tests that a bf16 sum keeps its order.
// CHECK-LABEL: func.func @bf16_sum
// CHECK: arith.addf %{{.+}}, %{{.+}} : bf16
func.func @bf16_sum(%x: memref<4x8xbf16>, %sum: memref<4xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x8xbf16>) outs(%sum : memref<4xbf16>) {
  ^bb0(%a: bf16, %acc: bf16):
    %s = arith.addf %a, %acc : bf16
    linalg.yield %s : bf16
  }
  return
}
