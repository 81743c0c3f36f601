// RUN: kiln-opt --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise))' %s | FileCheck %s
// RUN: kiln-opt --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise{max-repeated-evaluations=4194304}))' %s | FileCheck %s --check-prefix=GPU

// Tests that a squeeze-and-excitation block's sigmoid (an exponential and a division per channel)
// is not fused into the multiply that reads it at each of the channel's 3136 pixels (144 x 3135
// repeated evaluations, above the default 8192): it stays a generic of 144 points, and the
// multiply reads its result. With the GPU's bound (4194304) it is fused as upstream fuses it.
// CHECK-LABEL: func.func @squeeze_excitation
// CHECK: %[[SCALE:.+]] = linalg.generic {{.*}}ins(%{{.+}} : tensor<1x144x1x1xf32>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}}ins(%[[SCALE]], %{{.+}} : tensor<1x144x1x1xf32>, tensor<1x144x56x56xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK-NOT: math.exp
// CHECK: return
// GPU-LABEL: func.func @squeeze_excitation
// GPU: linalg.generic {{.*}}ins(%{{.+}}, %{{.+}} : tensor<1x144x1x1xf32>, tensor<1x144x56x56xf32>)
// GPU: math.exp
// GPU: arith.mulf
// GPU-NEXT: linalg.yield
#channel = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#pixel = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scale = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @squeeze_excitation(%s: tensor<1x144x1x1xf32>, %x: tensor<1x144x56x56xf32>) -> tensor<1x144x56x56xf32> {
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<1x144x1x1xf32>
  %sig = linalg.generic {indexing_maps = [#scale, #scale], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x144x1x1xf32>) outs(%e1 : tensor<1x144x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x144x1x1xf32>
  %e2 = tensor.empty() : tensor<1x144x56x56xf32>
  %y = linalg.generic {indexing_maps = [#channel, #pixel, #pixel], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sig, %x : tensor<1x144x1x1xf32>, tensor<1x144x56x56xf32>) outs(%e2 : tensor<1x144x56x56xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x144x56x56xf32>
  return %y : tensor<1x144x56x56xf32>
}

// -----

// Tests that a cheap producer (an add, a multiply) is fused through the same broadcast, and that
// a costly one read without reuse (the same shape) is fused too: nothing is repeated.
// CHECK-LABEL: func.func @cheap_or_not_reused
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<1x144x1x1xf32>, tensor<1x144x56x56xf32>, tensor<1x144x56x56xf32>)
// CHECK-DAG: arith.addf
// CHECK-DAG: math.exp
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
#channel = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#pixel = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @cheap_or_not_reused(%s: tensor<1x144x1x1xf32>, %x: tensor<1x144x56x56xf32>, %z: tensor<1x144x56x56xf32>) -> tensor<1x144x56x56xf32> {
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<1x144x1x1xf32>
  %shift = linalg.generic {indexing_maps = [#pixel, #pixel], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x144x1x1xf32>) outs(%e1 : tensor<1x144x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %one : f32
    linalg.yield %a : f32
  } -> tensor<1x144x1x1xf32>
  %e2 = tensor.empty() : tensor<1x144x56x56xf32>
  %ez = linalg.generic {indexing_maps = [#pixel, #pixel], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%z : tensor<1x144x56x56xf32>) outs(%e2 : tensor<1x144x56x56xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<1x144x56x56xf32>
  %y = linalg.generic {indexing_maps = [#channel, #pixel, #pixel, #pixel], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%shift, %x, %ez : tensor<1x144x1x1xf32>, tensor<1x144x56x56xf32>, tensor<1x144x56x56xf32>) outs(%e2 : tensor<1x144x56x56xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    %n = arith.mulf %m, %c : f32
    linalg.yield %n : f32
  } -> tensor<1x144x56x56xf32>
  return %y : tensor<1x144x56x56xf32>
}
