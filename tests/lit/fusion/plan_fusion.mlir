// RUN: kiln-opt --split-input-file --kiln-plan-fusion="entry=forward" %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-plan-fusion="entry=forward device=h100 row-values-only=true" %s | FileCheck %s --check-prefix=ROWS
// RUN: kiln-opt --split-input-file --kiln-plan-fusion="entry=forward duplicate=false" %s | FileCheck %s --check-prefix=NODUP

// Each case is a module of its own whose entry function is @forward.

// Tests that a softmax over rows (max, subtract and exp, sum, divide) becomes one group: each
// producer's only reader joins it, the reductions included, since every member keeps the row
// loop parallel; the root is split only along that loop (the reduced loop stays whole in a
// tile), and the report says what was fused and what it moves.
// CHECK-LABEL: module @softmax
// CHECK-SAME: kiln.fusion_report = ["1 kernels from 4 ops (cpu device model)
// CHECK-SAME: "kernel of 4 ops: linalg.generic (max, exp, sum, div);
// CHECK: linalg.reduce {{.*}}{kiln.fusion_group = [[G:[0-9]+]] : i64}
// CHECK: linalg.generic {{.*}}kiln.fusion_group = [[G]] : i64
// CHECK: linalg.reduce {{.*}}{kiln.fusion_group = [[G]] : i64}
// CHECK: linalg.generic {{.*}}kiln.fusion_group = [[G]] : i64, kiln.tile_dims = array<i64: 0>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module @softmax {
  func.func @forward(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
    %ninf = arith.constant 0xFF800000 : f32
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64xf32>
    %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %max = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%m0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.maximumf %in, %acc : f32
        linalg.yield %r : f32
      } loc("max")
    %e2 = tensor.empty() : tensor<64x128xf32>
    %exp = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x, %max : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %d = arith.subf %a, %b : f32
      %e = math.exp %d : f32
      linalg.yield %e : f32
    } -> tensor<64x128xf32> loc("exp")
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %sum = linalg.reduce ins(%exp : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("sum")
    %div = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%exp, %sum : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("div")
    return %div : tensor<64x128xf32>
  }
}

// -----

// Tests that a reduction to one value is not fused into the elementwise op that reads it: the
// fused kernel could not be split into workgroups at all, where the consumer alone splits along
// its 8192 parallel iterations. The refusal names both counts.
// CHECK-LABEL: module @reduction_veto
// CHECK-SAME: "not fused: linalg.reduce (total): the fused kernel would split into at most 1 workgroups where the consumer alone splits into 8192"
// CHECK-NOT: kiln.fusion_group
#rows = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
module @reduction_veto {
  func.func @forward(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %total = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%s0 : tensor<f32>) dimensions = [0, 1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("total")
    %e2 = tensor.empty() : tensor<64x128xf32>
    %scaled = linalg.generic {indexing_maps = [#rows, #scalar, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x, %total : tensor<64x128xf32>, tensor<f32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("normalize")
    return %scaled : tensor<64x128xf32>
  }
}

// -----

// Tests that a producer read by two kernels is computed again in each (its exponentials cost
// less than writing 32 KiB and reading them back twice, and a launch), all of them or none: the
// copy goes into the second reader's group. With duplicate=false it fuses into neither. One
// whose result the program also returns stays a kernel of its own, each with its reason.
// CHECK-LABEL: module @many_readers
// CHECK-SAME: "kernel of 2 ops: linalg.reduce (shared, sum);
// CHECK-SAME: "kernel of 2 ops: linalg.reduce (shared, max);
// CHECK-SAME: "computed in each of its 2 readers: linalg.generic (shared); {{[0-9.]+}} us modeled saved"
// CHECK-SAME: "not fused: linalg.generic (returned): its result is read by func.return"
// CHECK: %[[SHARED:.+]] = linalg.generic {{.*}}kiln.fusion_group = [[MAX:[0-9]+]] : i64
// CHECK: %[[COPY:.+]] = linalg.generic {{.*}}kiln.fusion_group = [[SUM:[0-9]+]] : i64
// CHECK: linalg.reduce ins(%[[COPY]] {{.*}}kiln.fusion_group = [[SUM]] : i64, kiln.tile_dims
// CHECK: linalg.reduce ins(%[[SHARED]] {{.*}}kiln.fusion_group = [[MAX]] : i64, kiln.tile_dims
// NODUP-LABEL: module @many_readers
// NODUP-SAME: "not fused: linalg.generic (shared): its result is read by more than one kernel"
// NODUP-NOT: kiln.fusion_group
#rows = affine_map<(d0, d1) -> (d0, d1)>
module @many_readers {
  func.func @forward(%x: tensor<64x128xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<64xf32>) {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64xf32>
    %e2 = tensor.empty() : tensor<64x128xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %shared = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    } -> tensor<64x128xf32> loc("shared")
    %sum = linalg.reduce ins(%shared : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("sum")
    %max = linalg.reduce ins(%shared : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.maximumf %in, %acc : f32
        linalg.yield %r : f32
      } loc("max")
    %returned = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.tanh %a : f32
      linalg.yield %e : f32
    } -> tensor<64x128xf32> loc("returned")
    %min = linalg.reduce ins(%returned : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.minimumf %in, %acc : f32
        linalg.yield %r : f32
      } loc("min")
    return %sum, %max, %returned, %min : tensor<64xf32>, tensor<64xf32>, tensor<64x128xf32>, tensor<64xf32>
  }
}

// -----

// Tests that a diamond (a producer read twice inside one consumer group, directly and through a
// reduction) fuses whole once both readers are in one group, and that the path through an op
// outside the kernels (a library call between producer and consumer) prevents the fusion that
// would make the group depend on its own result.
// For a CUDA row kernel (row-values-only), the square may not join: it would hand a whole row
// to the normalization, which a warp does not keep; the variance, one value per row, does.
// ROWS-LABEL: module @diamond_and_cycle
// ROWS-SAME: (h100 device model)
// ROWS-SAME: "kernel of 2 ops: linalg.generic (variance, normalized);
// ROWS-SAME: "not fused: linalg.generic (centered): an op of the fused kernel would pass more than one value per row to another
// NODUP-LABEL: module @diamond_and_cycle
// CHECK-LABEL: module @diamond_and_cycle
// CHECK-SAME: "kernel of 3 ops: linalg.generic (centered, variance, normalized);
// CHECK-SAME: "not fused: linalg.generic (before_call): its result is read by func.call"
// CHECK: linalg.generic {{.*}}{kiln.fusion_group = [[G:[0-9]+]] : i64}
// CHECK: linalg.reduce {{.*}}{kiln.fusion_group = [[G]] : i64}
// CHECK: linalg.generic {{.*}}kiln.fusion_group = [[G]] : i64, kiln.tile_dims = array<i64: 0>
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %{{.+}} : tensor<64x128xf32>, tensor<64x128xf32>) outs(%{{.+}} : tensor<64x128xf32>) {{[{]$}}
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module @diamond_and_cycle {
  func.func private @library(tensor<64x128xf32>) -> tensor<64x128xf32> attributes {kiln.library_call = "onednn.matmul"}
  func.func @forward(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64xf32>
    %e2 = tensor.empty() : tensor<64x128xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %centered = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = arith.mulf %a, %a : f32
      linalg.yield %e : f32
    } -> tensor<64x128xf32> loc("centered")
    %variance = linalg.reduce ins(%centered : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("variance")
    %normalized = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%centered, %variance : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("normalized")
    %before = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    } -> tensor<64x128xf32> loc("before_call")
    %called = func.call @library(%before) : (tensor<64x128xf32>) -> tensor<64x128xf32>
    %after = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%before, %called : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.addf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("after_call")
    return %normalized, %after : tensor<64x128xf32>, tensor<64x128xf32>
  }
}

// -----

// Tests the refusals for reads the fused kernel could not tile: through an indexing map that is
// not a projected permutation (a window), and by index from inside the consumer's body (a
// gather). Both producers read %x over the same loop and feed neither each other nor a kernel
// of the other's: they become one kernel of two results (multi-output fusion), in the place of
// the first, before the window reads it.
// CHECK-LABEL: module @unfusable_reads
// CHECK-SAME: "one kernel for both: linalg.generic (windowed) and linalg.generic (table), both reading argument 0;
// CHECK-SAME: "not fused: linalg.generic (windowed): the consumer reads it through the indexing map (d0, d1) -> (d0 + d1), not a projected permutation"
// CHECK-SAME: "not fused: linalg.generic (table): its result is read by a gather in linalg.generic"
// CHECK-NOT: kiln.fusion_group
#id1 = affine_map<(d0) -> (d0)>
#window = affine_map<(d0, d1) -> (d0 + d1)>
#out2 = affine_map<(d0, d1) -> (d0)>
#tap = affine_map<(d0, d1) -> (d1)>
module @unfusable_reads {
  func.func @forward(%x: tensor<64xf32>, %w: tensor<5xf32>, %i: tensor<64xindex>) -> (tensor<60xf32>, tensor<64xf32>) {
    %e1 = tensor.empty() : tensor<64xf32>
    %e60 = tensor.empty() : tensor<60xf32>
    %windowed = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%x : tensor<64xf32>) outs(%e1 : tensor<64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.exp %a : f32
      linalg.yield %e : f32
    } -> tensor<64xf32> loc("windowed")
    %sums = linalg.generic {indexing_maps = [#window, #tap, #out2], iterator_types = ["parallel", "reduction"]}
        ins(%windowed, %w : tensor<64xf32>, tensor<5xf32>) outs(%e60 : tensor<60xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %p, %o : f32
      linalg.yield %s : f32
    } -> tensor<60xf32> loc("window_sum")
    %table = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%x : tensor<64xf32>) outs(%e1 : tensor<64xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.tanh %a : f32
      linalg.yield %e : f32
    } -> tensor<64xf32> loc("table")
    %gathered = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
        ins(%i : tensor<64xindex>) outs(%e1 : tensor<64xf32>) {
    ^bb0(%index: index, %o: f32):
      %v = tensor.extract %table[%index] : tensor<64xf32>
      linalg.yield %v : f32
    } -> tensor<64xf32> loc("gather")
    return %sums, %gathered : tensor<60xf32>, tensor<64xf32>
  }
}

// -----

// Tests that a reduction that keeps its reduced dimension (one element, read through a 0 in the
// consumer's indexing map, as RMS norm exports write it) fuses into its reader on both targets:
// one value per row.
// CHECK-LABEL: module @kept_dimension
// CHECK-SAME: "kernel of 2 ops: linalg.generic (mean_square, scale)
// ROWS-LABEL: module @kept_dimension
// ROWS-SAME: "kernel of 2 ops: linalg.generic (mean_square, scale)
#in = affine_map<(d0, d1, d2) -> (d0, d2)>
#kept = affine_map<(d0, d1, d2) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
#first = affine_map<(d0, d1) -> (d0, 0)>
module @kept_dimension {
  func.func @forward(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64x1xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x1xf32>) -> tensor<64x1xf32>
    %ms = linalg.generic {indexing_maps = [#in, #kept], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<64x128xf32>) outs(%s0 : tensor<64x1xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %r = arith.addf %sq, %acc : f32
      linalg.yield %r : f32
    } -> tensor<64x1xf32> loc("mean_square")
    %e2 = tensor.empty() : tensor<64x128xf32>
    %y = linalg.generic {indexing_maps = [#rows, #first, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x, %ms : tensor<64x128xf32>, tensor<64x1xf32>) outs(%e2 : tensor<64x128xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = math.rsqrt %b : f32
      %q = arith.mulf %a, %r : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("scale")
    return %y : tensor<64x128xf32>
  }
}

// -----

// Tests that a producer whose arithmetic outweighs what its copies save stays a kernel of its
// own: sixteen sines per element (16 FLOPs each in the model) over 2 x 262144 elements take
// about 700 us on the modeled CPU, computed once for both readers, where the intermediate they
// would no longer write and read back is about 315 us of memory traffic.
// CHECK-LABEL: module @costly_to_copy
// CHECK-SAME: "not fused: linalg.generic (sines): computed again in each of its 2 readers, the fused kernels are modeled slower ({{[0-9.]+}} us vs {{[0-9.]+}} us)"
// CHECK-NOT: kiln.fusion_group
#map = affine_map<(d0, d1) -> (d0, d1)>
module @costly_to_copy {
  func.func @forward(%x: tensor<2x262144xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %zero = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<2x262144xf32>
    %sines = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<2x262144xf32>) outs(%e2 : tensor<2x262144xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s0 = math.sin %a : f32
      %s1 = math.sin %s0 : f32
      %s2 = math.sin %s1 : f32
      %s3 = math.sin %s2 : f32
      %s4 = math.sin %s3 : f32
      %s5 = math.sin %s4 : f32
      %s6 = math.sin %s5 : f32
      %s7 = math.sin %s6 : f32
      %s8 = math.sin %s7 : f32
      %s9 = math.sin %s8 : f32
      %s10 = math.sin %s9 : f32
      %s11 = math.sin %s10 : f32
      %s12 = math.sin %s11 : f32
      %s13 = math.sin %s12 : f32
      %s14 = math.sin %s13 : f32
      %s15 = math.sin %s14 : f32
      linalg.yield %s15 : f32
    } -> tensor<2x262144xf32> loc("sines")
    %e1 = tensor.empty() : tensor<2xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.reduce ins(%sines : tensor<2x262144xf32>) outs(%s0 : tensor<2xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("sum")
    %max = linalg.reduce ins(%sines : tensor<2x262144xf32>) outs(%s0 : tensor<2xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.maximumf %in, %acc : f32
        linalg.yield %r : f32
      } loc("max")
    return %sum, %max : tensor<2xf32>, tensor<2xf32>
  }
}
