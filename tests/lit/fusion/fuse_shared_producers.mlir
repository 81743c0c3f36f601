// RUN: kiln-opt --split-input-file --kiln-fuse-shared-producers %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-fuse-shared-producers="max-readers=1" %s | FileCheck %s --check-prefix=ONE

// Tests that softmax's exp(x - max), read by the sum and by the division, is computed inside
// each of them and disappears: between the three remaining ops only the per-row max and sum
// pass. With at most one reader allowed, it stays.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}ins(%{{.+}}, %[[MAX]] : tensor<64x128xf32>, tensor<64xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %[[MAX]], %[[SUM]] : tensor<64x128xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// ONE-LABEL: func.func @softmax
// ONE-COUNT-4: linalg.generic
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @softmax(%x: tensor<64x128xf32>, %max: tensor<64xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%m0 : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %exp = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %div = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<64x128xf32>
  return %div : tensor<64x128xf32>
}

// -----

// Tests that a producer read by an op that is not a generic (a transpose) is not computed again
// in its other reader: the transpose could not take it in.
// CHECK-LABEL: func.func @named_reader
// CHECK: %[[T:.+]] = linalg.generic
// CHECK: math.tanh
// CHECK: linalg.transpose ins(%[[T]]
// CHECK: linalg.generic {{.*}}ins(%[[T]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @named_reader(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %tr = linalg.transpose ins(%t : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) permutation = [1, 0]
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %tr, %n : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Tests that a layer norm's normalization, which reads per-row values (the mean through x - mean,
// and the reciprocal deviation), is not computed again in readers outside the normalization (the
// half-precision cast before the next product, the next residual add): the mean and the variance
// would be read by several kernels and each become one. x - mean, read by the variance and by the
// normalization, still is.
// CHECK-LABEL: func.func @layer_norm_outside_readers
// CHECK: %[[MEAN:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: %[[VAR:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}ins(%{{.+}}, %[[MEAN]] :
// CHECK: %[[NORM:.+]] = linalg.generic {{.*}}ins(%{{.+}}, %[[MEAN]], %[[VAR]] :
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}}ins(%[[NORM]] : tensor<64x128xf32>)
// CHECK: arith.truncf
// CHECK: linalg.generic {{.*}}ins(%[[NORM]], %{{.+}} : tensor<64x128xf32>, tensor<64x128xf32>)
// CHECK-NOT: arith.subf
// CHECK: return
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#vec = affine_map<(d0) -> (d0)>
func.func @layer_norm_outside_readers(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>)
    -> (tensor<64x128xf16>, tensor<64x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x128xf32>
  %eh = tensor.empty() : tensor<64x128xf16>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %mean = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %xm = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x128xf32>
  %var = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%xm : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %rs = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%var : tensor<64xf32>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %norm = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%xm, %rs : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %half = linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%norm : tensor<64x128xf32>) outs(%eh : tensor<64x128xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<64x128xf16>
  %res = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%norm, %y : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e2 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  return %half, %res : tensor<64x128xf16>, tensor<64x128xf32>
}

// -----

// Tests that the cost model, not a count of readers, decides: an attention mask (a cast and a
// scaling of 128 values, BERT's) read by six kernels that broadcast it over 128 rows is computed
// again in each (two FLOPs at each of a reader's 16384 points, 0.2 us on the modeled CPU,
// against a kernel launch of 3 us), where at most four readers were allowed before; the option
// can still cap them.
// CHECK-LABEL: func.func @mask_read_by_six
// CHECK-NOT: ins(%{{.+}} : tensor<128xi64>) outs(%{{.+}} : tensor<128xf32>)
// CHECK-COUNT-6: arith.sitofp
// ONE-LABEL: func.func @mask_read_by_six
// ONE-COUNT-1: arith.sitofp
// ONE-NOT: arith.sitofp
#rows = affine_map<(d0, d1) -> (d0, d1)>
#key = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @mask_read_by_six(%ids: tensor<128xi64>, %s0: tensor<128x128xf32>, %s1: tensor<128x128xf32>, %s2: tensor<128x128xf32>, %s3: tensor<128x128xf32>, %s4: tensor<128x128xf32>, %s5: tensor<128x128xf32>) -> (tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>) {
  %ev = tensor.empty() : tensor<128xf32>
  %e = tensor.empty() : tensor<128x128xf32>
  %mask = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%ids : tensor<128xi64>) outs(%ev : tensor<128xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    %c = arith.constant -10000.0 : f32
    %m = arith.mulf %f, %c : f32
    linalg.yield %m : f32
  } -> tensor<128xf32>
  %r0 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%s0, %mask : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %r1 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%s1, %mask : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %r2 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%s2, %mask : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %r3 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%s3, %mask : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %r4 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%s4, %mask : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %r5 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%s5, %mask : tensor<128x128xf32>, tensor<128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// Tests that copies which cost more than the kernel they save are not made: five FLOPs on 128
// values, read by five kernels of 4096 x 128 points, would be evaluated 2.6 million times more
// (68 us on the modeled CPU) to save one launch and 1 KiB (3 us).
// CHECK-LABEL: func.func @copies_cost_more
// CHECK: %[[SCALE:.+]] = linalg.generic
// CHECK-COUNT-5: ins(%{{.+}}, %[[SCALE]] : tensor<4096x128xf32>, tensor<128xf32>)
#rows = affine_map<(d0, d1) -> (d0, d1)>
#key = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @copies_cost_more(%w: tensor<128xf32>, %big: tensor<4096x128xf32>) -> (tensor<4096x128xf32>, tensor<4096x128xf32>, tensor<4096x128xf32>, tensor<4096x128xf32>, tensor<4096x128xf32>) {
  %ev = tensor.empty() : tensor<128xf32>
  %eb = tensor.empty() : tensor<4096x128xf32>
  %scale = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%w : tensor<128xf32>) outs(%ev : tensor<128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.5 : f32
    %m = arith.mulf %a, %c : f32
    %n = arith.addf %m, %c : f32
    %p = arith.mulf %n, %n : f32
    %q = arith.subf %p, %a : f32
    %r = arith.maximumf %q, %c : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %h0 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%big, %scale : tensor<4096x128xf32>, tensor<128xf32>) outs(%eb : tensor<4096x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4096x128xf32>
  %h1 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%big, %scale : tensor<4096x128xf32>, tensor<128xf32>) outs(%eb : tensor<4096x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4096x128xf32>
  %h2 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%big, %scale : tensor<4096x128xf32>, tensor<128xf32>) outs(%eb : tensor<4096x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4096x128xf32>
  %h3 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%big, %scale : tensor<4096x128xf32>, tensor<128xf32>) outs(%eb : tensor<4096x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4096x128xf32>
  %h4 = linalg.generic {indexing_maps = [#rows, #key, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%big, %scale : tensor<4096x128xf32>, tensor<128xf32>) outs(%eb : tensor<4096x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4096x128xf32>
  return %h0, %h1, %h2, %h3, %h4 : tensor<4096x128xf32>, tensor<4096x128xf32>, tensor<4096x128xf32>, tensor<4096x128xf32>, tensor<4096x128xf32>
}
