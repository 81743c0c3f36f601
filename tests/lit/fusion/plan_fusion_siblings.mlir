// RUN: kiln-opt --split-input-file --kiln-plan-fusion="entry=forward" %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-plan-fusion="entry=forward device=h100 row-values-only=true" %s | FileCheck %s --check-prefix=ROWS
// RUN: kiln-opt --split-input-file --kiln-plan-fusion="entry=forward multi-output=false" %s | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt --split-input-file --kiln-plan-fusion="entry=forward horizontal=false" %s | FileCheck %s --check-prefix=STREAMS

// Multi-output (sibling) and horizontal fusion, after priority fusion: kernels over the same
// loops that do not feed each other become one kernel with a result for each. Each case is a
// module of its own whose entry function is @forward.

// Tests two kernels reading the same input over the same loops (siblings): one generic computes
// both results, reading %x once, in the place of the later one (the earlier one's result is read
// only after it); each reader gets its result. The report names both, the input they share and
// the modeled saving.
// CHECK-LABEL: module @siblings
// CHECK-SAME: "1 kernels from 2 ops
// CHECK-SAME: "one kernel for both: linalg.generic (exp) and linalg.generic (tanh), both reading argument 0; {{[0-9.]+}} us modeled saved"
// CHECK: %[[BOTH:.+]]:2 = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<512x256xf32>) outs(%{{.+}}, %{{.+}} : tensor<512x256xf32>, tensor<512x256xf32>)
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: linalg.yield %{{.+}}, %{{.+}} : f32, f32
// CHECK-NEXT: } -> (tensor<512x256xf32>, tensor<512x256xf32>)
// CHECK-NEXT: call @consume(%[[BOTH]]#0, %[[BOTH]]#1)
// OFF-LABEL: module @siblings
// OFF-SAME: "2 kernels from 2 ops
// OFF-NOT: one kernel for both
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module @siblings {
  func.func private @consume(tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<512x256xf32>
  func.func @forward(%x: tensor<512x256xf32>) -> tensor<512x256xf32> {
    %e = tensor.empty() : tensor<512x256xf32>
    %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.exp %a : f32
      linalg.yield %r : f32
    } -> tensor<512x256xf32> loc("exp")
    %tanh = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.tanh %a : f32
      linalg.yield %r : f32
    } -> tensor<512x256xf32> loc("tanh")
    %r = func.call @consume(%exp, %tanh) : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<512x256xf32>
    return %r : tensor<512x256xf32>
  }
}

// -----

// Tests cycle prevention: the second kernel reads %x too but also what a library call computed
// from the first one's result; one kernel for both would feed itself. The pair is counted in
// the report, and both kernels stay.
// CHECK-LABEL: module @dependent
// CHECK-SAME: "2 kernels from 2 ops
// CHECK-SAME: "1 pair of kernels over the same loops reading an input in common stays apart: one depends on the other's result"
// CHECK-NOT: one kernel for both
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module @dependent {
  func.func private @library(tensor<512x256xf32>) -> tensor<512x256xf32>
  func.func @forward(%x: tensor<512x256xf32>) -> tensor<512x256xf32> {
    %e = tensor.empty() : tensor<512x256xf32>
    %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.exp %a : f32
      linalg.yield %r : f32
    } -> tensor<512x256xf32> loc("exp")
    %called = func.call @library(%exp) : (tensor<512x256xf32>) -> tensor<512x256xf32>
    %add = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %called : tensor<512x256xf32>, tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<512x256xf32> loc("add")
    return %add : tensor<512x256xf32>
  }
}

// -----

// Tests horizontal fusion: two independent kernels over the same 64 points, reading nothing in
// common, whose modeled time is mostly their launch, become one kernel; two independent kernels
// over 131072 points, whose time is mostly their work, stay apart (and are not reported: every
// pair of same-shaped kernels would be). On the H100 model the large pair is launch-bound too.
// With horizontal=false (a program of several streams) independent kernels stay apart.
// CHECK-LABEL: module @horizontal
// CHECK-SAME: "3 kernels from 4 ops
// CHECK-SAME: "one kernel for both (launch-bound): linalg.generic (small_a) and linalg.generic (small_b); {{[0-9.]+}} us modeled saved"]
// CHECK: linalg.generic {{.*}} outs(%{{.+}}, %{{.+}} : tensor<64xf32>, tensor<64xf32>)
// ROWS-LABEL: module @horizontal
// ROWS-SAME: "2 kernels from 4 ops
// ROWS-SAME: "one kernel for both (launch-bound): linalg.generic (large_a) and linalg.generic (large_b)
// ROWS-SAME: "one kernel for both (launch-bound): linalg.generic (small_a) and linalg.generic (small_b)
// STREAMS-LABEL: module @horizontal
// STREAMS-SAME: "4 kernels from 4 ops
// STREAMS-NOT: one kernel for both
#id1 = affine_map<(d0) -> (d0)>
module @horizontal {
  func.func @forward(%a: tensor<64xf32>, %b: tensor<64xf32>, %c: tensor<131072xf32>, %d: tensor<131072xf32>)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<131072xf32>, tensor<131072xf32>) {
    %e = tensor.empty() : tensor<64xf32>
    %big = tensor.empty() : tensor<131072xf32>
    %sa = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<64xf32> loc("small_a")
    %sb = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%b : tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.log %v : f32
      linalg.yield %r : f32
    } -> tensor<64xf32> loc("small_b")
    %la = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%c : tensor<131072xf32>) outs(%big : tensor<131072xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.exp %v : f32
      linalg.yield %r : f32
    } -> tensor<131072xf32> loc("large_a")
    %lb = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%d : tensor<131072xf32>) outs(%big : tensor<131072xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = math.log %v : f32
      linalg.yield %r : f32
    } -> tensor<131072xf32> loc("large_b")
    return %sa, %sb, %la, %lb : tensor<64xf32>, tensor<64xf32>, tensor<131072xf32>, tensor<131072xf32>
  }
}

// -----

// Tests that no op moves to make room: the first kernel's result is read by a library call
// before the input of the second is computed (by another call after it), so neither kernel's
// place suits both and they stay apart, with the reason.
// CHECK-LABEL: module @no_place
// STREAMS-LABEL: module @no_place
// CHECK-SAME: "not one kernel: linalg.generic (exp) and linalg.generic (mul), both reading argument 0: no place in the program suits both: the earlier one's result is read before the later one's inputs are computed"
// CHECK-NOT: one kernel for both
#id2 = affine_map<(d0, d1) -> (d0, d1)>
module @no_place {
  func.func private @library(tensor<512x256xf32>) -> tensor<512x256xf32>
  func.func @forward(%x: tensor<512x256xf32>, %y: tensor<512x256xf32>) -> (tensor<512x256xf32>, tensor<512x256xf32>) {
    %e = tensor.empty() : tensor<512x256xf32>
    %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = math.exp %a : f32
      linalg.yield %r : f32
    } -> tensor<512x256xf32> loc("exp")
    %first = func.call @library(%exp) : (tensor<512x256xf32>) -> tensor<512x256xf32>
    %second = func.call @library(%y) : (tensor<512x256xf32>) -> tensor<512x256xf32>
    %mul = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x, %second : tensor<512x256xf32>, tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<512x256xf32> loc("mul")
    return %first, %mul : tensor<512x256xf32>, tensor<512x256xf32>
  }
}

// -----

// Tests siblings that are fused groups themselves: a normalization by the row maximum and one by
// the row sum, both over the rows of %x. The two groups merge into one of three ops (the two
// reductions and one generic computing both results), split along the rows only, on both
// targets: a CUDA row kernel keeps one value per row of each reduction.
// CHECK-LABEL: module @row_groups
// CHECK-SAME: "1 kernels from 4 ops
// CHECK-SAME: "kernel of 3 ops: linalg.generic (max, sum, by_max, by_sum)
// CHECK-SAME: "one kernel for both: linalg.generic (max, by_max) and linalg.generic (sum, by_sum), both reading argument 0
// CHECK: linalg.reduce {{.*}}kiln.fusion_group = [[G:[0-9]+]]
// CHECK: linalg.reduce {{.*}}kiln.fusion_group = [[G]]
// CHECK: linalg.generic {{.*}}outs(%{{.+}}, %{{.+}} : tensor<64x128xf32>, tensor<64x128xf32>)
// CHECK: kiln.fusion_group = [[G]] : i64, kiln.tile_dims = array<i64: 0>
// ROWS-LABEL: module @row_groups
// ROWS-SAME: "kernel of 3 ops: linalg.generic (max, sum, by_max, by_sum)
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module @row_groups {
  func.func @forward(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64xf32>
    %e2 = tensor.empty() : tensor<64x128xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %max = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%m0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.maximumf %in, %acc : f32
        linalg.yield %r : f32
      } loc("max")
    %byMax = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x, %max : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.subf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("by_max")
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %sum = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("sum")
    %bySum = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x, %sum : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("by_sum")
    return %byMax, %bySum : tensor<64x128xf32>, tensor<64x128xf32>
  }
}
