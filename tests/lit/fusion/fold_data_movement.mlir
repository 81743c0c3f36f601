// RUN: kiln-opt --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fold-data-movement))' %s | FileCheck %s
// RUN: kiln-opt --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fold-data-movement,kiln-fuse-elementwise,kiln-fuse-shared-producers,canonicalize,cse))' %s | FileCheck %s --check-prefix=FUSED
// RUN: kiln-opt --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fold-data-movement{max-concat-operands=1}))' %s | FileCheck %s --check-prefix=LIMIT

// Tests that a rotary position embedding (x * cos + concat(-x[..., 16:], x[..., :16]) * sin on
// the heads-first transpose of x) keeps no transpose, slice or concatenation: the transpose is a
// generic, the negation reads the upper half at d3 + 16, the concatenation selects by d3 among
// its operands read at d3 mod 16 (the lower half straight from the transpose), and elementwise
// fusion then makes the whole of it one generic. With at most one operand allowed, the
// concatenation stays.
// CHECK-DAG: #[[TRANSPOSED:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-DAG: #[[UPPER:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 + 16)>
// CHECK-DAG: #[[WRAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 mod 16)>
// CHECK-LABEL: func.func @rotary
// CHECK-NOT: linalg.transpose
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[T:.+]] = linalg.generic {indexing_maps = [#[[TRANSPOSED]], {{.*}}ins(%arg0 :
// CHECK: %[[NEG:.+]] = linalg.generic {indexing_maps = [#[[UPPER]], {{.*}}ins(%[[T]] : tensor<1x8x64x32xf32>)
// CHECK: arith.negf
// CHECK: %[[CAT:.+]] = linalg.generic {indexing_maps = [#[[WRAP]], #[[WRAP]], {{.*}}ins(%[[NEG]], %[[T]] : tensor<1x8x64x16xf32>, tensor<1x8x64x32xf32>)
// CHECK: %[[I:.+]] = linalg.index 3
// CHECK: %[[LOW:.+]] = arith.cmpi ult, %[[I]], %c16
// CHECK: arith.select %[[LOW]]
// CHECK: linalg.generic {{.*}}ins(%[[T]], %arg1, %[[CAT]], %arg2 :
// CHECK-NOT: tensor.concat
// CHECK: return
// FUSED-LABEL: func.func @rotary
// FUSED-COUNT-1: linalg.generic
// FUSED-NOT: linalg.generic
// FUSED: return
// LIMIT-LABEL: func.func @rotary
// LIMIT: tensor.concat
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bc = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
func.func @rotary(%x: tensor<1x64x8x32xf32>, %cos: tensor<1x1x64x32xf32>, %sin: tensor<1x1x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %e0 = tensor.empty() : tensor<1x8x64x32xf32>
  %t = linalg.transpose ins(%x : tensor<1x64x8x32xf32>) outs(%e0 : tensor<1x8x64x32xf32>) permutation = [0, 2, 1, 3]
  %lo = tensor.extract_slice %t[0, 0, 0, 0] [1, 8, 64, 16] [1, 1, 1, 1] : tensor<1x8x64x32xf32> to tensor<1x8x64x16xf32>
  %hi = tensor.extract_slice %t[0, 0, 0, 16] [1, 8, 64, 16] [1, 1, 1, 1] : tensor<1x8x64x32xf32> to tensor<1x8x64x16xf32>
  %e1 = tensor.empty() : tensor<1x8x64x16xf32>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x8x64x16xf32>) outs(%e1 : tensor<1x8x64x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<1x8x64x16xf32>
  %c = tensor.concat dim(3) %n, %lo : (tensor<1x8x64x16xf32>, tensor<1x8x64x16xf32>) -> tensor<1x8x64x32xf32>
  %r = linalg.generic {indexing_maps = [#id4, #bc, #id4, #bc, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t, %cos, %c, %sin : tensor<1x8x64x32xf32>, tensor<1x1x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x1x64x32xf32>) outs(%e0 : tensor<1x8x64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %d: f32, %s: f32, %out: f32):
    %m1 = arith.mulf %a, %b : f32
    %m2 = arith.mulf %d, %s : f32
    %v = arith.addf %m1, %m2 : f32
    linalg.yield %v : f32
  } -> tensor<1x8x64x32xf32>
  return %r : tensor<1x8x64x32xf32>
}

// -----

// Tests what stays: a slice that is a view (one contiguous run at an aligned offset costs
// nothing), and concatenations read by another concatenation and by a library call; while a
// rank-reducing strided slice is folded (the dropped dimension a constant), and so is the start
// of longer dimensions that the reader reads by bare indices, read at i mod size (a bare index
// would give the loop the source's extent).
// CHECK-DAG: #[[HEADMAP:.+]] = affine_map<(d0, d1) -> (d0 mod 4, d1 mod 16)>
// CHECK-DAG: #[[STRIDED:.+]] = affine_map<(d0, d1) -> (3, d1 * 2 + 1)>
// CHECK-LABEL: func.func @what_stays
// CHECK: %[[VIEW:.+]] = tensor.extract_slice %arg0[2, 0] [1, 64] [1, 1]
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[HEADMAP]], #[[STRIDED]], #{{.+}}], {{.*}}ins(%[[VIEW]], %arg0, %arg0 :
// CHECK: %[[PIECE:.+]] = tensor.extract_slice %arg0[0, 0] [4, 16] [1, 1]
// CHECK: %[[CAT:.+]] = tensor.concat dim(0) %[[PIECE]], %[[PIECE]]
// CHECK: %[[WIDE:.+]] = tensor.concat dim(1) %[[CAT]], %[[CAT]], %[[CAT]], %[[CAT]]
// CHECK: call @library(%[[WIDE]])
#row = affine_map<(d0, d1) -> (0, d0 + d1)>
#head = affine_map<(d0, d1) -> (d0, d1)>
#odd = affine_map<(d0, d1) -> (d1)>
#out = affine_map<(d0, d1) -> (d0, d1)>
func.func private @library(tensor<8x64xf32>) -> tensor<8x64xf32> attributes {kiln.library_call = "onednn.matmul"}
func.func @what_stays(%x: tensor<8x64xf32>) -> (tensor<4x16xf32>, tensor<8x64xf32>) {
  %view = tensor.extract_slice %x[2, 0] [1, 64] [1, 1] : tensor<8x64xf32> to tensor<1x64xf32>
  %head = tensor.extract_slice %x[0, 0] [4, 16] [1, 1] : tensor<8x64xf32> to tensor<4x16xf32>
  %odd = tensor.extract_slice %x[3, 1] [1, 16] [1, 2] : tensor<8x64xf32> to tensor<16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#row, #head, #odd, #out], iterator_types = ["parallel", "parallel"]} ins(%view, %head, %odd : tensor<1x64xf32>, tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32>
  %piece = tensor.extract_slice %x[0, 0] [4, 16] [1, 1] : tensor<8x64xf32> to tensor<4x16xf32>
  %cat = tensor.concat dim(0) %piece, %piece : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  %wide = tensor.concat dim(1) %cat, %cat, %cat, %cat : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x64xf32>
  %l = call @library(%wide) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  return %r, %l : tensor<4x16xf32>, tensor<8x64xf32>
}

// -----

// Tests that a reshape inserting a unit dimension (written by the lowering as a collapse to one
// dimension and an expansion) before a broadcast is read by the broadcast straight from its
// source, so the producer fuses into it (grouped-query attention's repeated keys: the rotary
// embedding computed inside the repeat); a reshape that splits a dimension stays.
// CHECK-DAG: #[[REPEAT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d3, d4)>
// CHECK-LABEL: func.func @unsqueeze_before_broadcast
// CHECK: %[[K:.+]] = linalg.generic
// CHECK: arith.mulf
// CHECK-NOT: tensor.expand_shape %[[K]]
// CHECK-NOT: tensor.collapse_shape %[[K]]
// CHECK: linalg.generic {indexing_maps = [#[[REPEAT]], {{.*}}ins(%[[K]] : tensor<1x2x64x32xf32>)
// CHECK: %[[SPLIT:.+]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2], [3, 4]]
// CHECK: linalg.generic {{.*}}ins(%[[SPLIT]] : tensor<1x2x64x4x8xf32>)
// FUSED-LABEL: func.func @unsqueeze_before_broadcast
// FUSED: linalg.generic {{.*}}outs(%{{.+}} : tensor<1x2x4x64x32xf32>)
// FUSED: arith.mulf
// FUSED: return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bcast = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @unsqueeze_before_broadcast(%x: tensor<1x2x64x32xf32>) -> (tensor<1x2x4x64x32xf32>, tensor<1x2x64x4x8xf32>) {
  %e = tensor.empty() : tensor<1x2x64x32xf32>
  %k = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x64x32xf32>) outs(%e : tensor<1x2x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<1x2x64x32xf32>
  %flat = tensor.collapse_shape %k [[0, 1, 2, 3]] : tensor<1x2x64x32xf32> into tensor<4096xf32>
  %u = tensor.expand_shape %flat [[0, 1, 2, 3, 4]] output_shape [1, 2, 1, 64, 32] : tensor<4096xf32> into tensor<1x2x1x64x32xf32>
  %e2 = tensor.empty() : tensor<1x2x4x64x32xf32>
  %r = linalg.generic {indexing_maps = [#bcast, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%u : tensor<1x2x1x64x32xf32>) outs(%e2 : tensor<1x2x4x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x64x32xf32>
  %s = tensor.expand_shape %x [[0], [1], [2], [3, 4]] output_shape [1, 2, 64, 4, 8] : tensor<1x2x64x32xf32> into tensor<1x2x64x4x8xf32>
  %e3 = tensor.empty() : tensor<1x2x64x4x8xf32>
  %n = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x64x4x8xf32>) outs(%e3 : tensor<1x2x64x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.negf %in : f32
    linalg.yield %v : f32
  } -> tensor<1x2x64x4x8xf32>
  return %r, %n : tensor<1x2x4x64x32xf32>, tensor<1x2x64x4x8xf32>
}

// -----

// Tests that the heads of a projection fused with others (columns [64, 96) of a product, split
// into 2 heads of 16) are taken as a slice of the product split into heads (heads [4, 6) of 6),
// which the transpose, written as a generic for the negation that reads it, then reads in place:
// no slice is left.
// CHECK-DAG: #[[HEADS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 + 4, d3)>
// CHECK-LABEL: func.func @heads_of_a_fused_projection
// CHECK: %[[SPLIT:.+]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [1, 8, 6, 16]
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic {indexing_maps = [#[[HEADS]], {{.*}}ins(%[[SPLIT]] : tensor<1x8x6x16xf32>)
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @heads_of_a_fused_projection(%qkv: tensor<1x8x96xf32>) -> tensor<1x2x8x16xf32> {
  %v = tensor.extract_slice %qkv[0, 0, 64] [1, 8, 32] [1, 1, 1] : tensor<1x8x96xf32> to tensor<1x8x32xf32>
  %heads = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, 8, 2, 16] : tensor<1x8x32xf32> into tensor<1x8x2x16xf32>
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  %t = linalg.transpose ins(%heads : tensor<1x8x2x16xf32>) outs(%e : tensor<1x2x8x16xf32>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty() : tensor<1x2x8x16xf32>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x2x8x16xf32>) outs(%e2 : tensor<1x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<1x2x8x16xf32>
  return %n : tensor<1x2x8x16xf32>
}

// -----

// Tests that a transpose whose size is also read (a tensor.dim, as the lowering of a
// LayerNormalization over channels leaves it) is written as a generic all the same, and copied
// into both its readers (a row sum and a subtraction), which then read x through the
// permutation: no kernel of its own is left for the transpose (ConvNeXt's NCHW to NHWC before
// each layer norm on CUDA, whose row kernels take no per-element value from another op).
// CHECK-LABEL: func.func @transpose_with_size_read
// CHECK-NOT: linalg.transpose
// CHECK: return
// FUSED-DAG: #[[PERMUTED:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// FUSED-LABEL: func.func @transpose_with_size_read
// FUSED-SAME: (%[[X:.+]]: tensor<1x4x2x3xf32>)
// FUSED: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[PERMUTED]], {{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<1x4x2x3xf32>)
// FUSED: %[[SUB:.+]] = linalg.generic {indexing_maps = [#[[PERMUTED]], {{.+}}} ins(%[[X]], %[[SUM]] : tensor<1x4x2x3xf32>, tensor<1x2x3xf32>)
// FUSED-NOT: linalg.generic
// FUSED: return %[[SUB]]
func.func @transpose_with_size_read(%x: tensor<1x4x2x3xf32>) -> (tensor<1x2x3x4xf32>, index) {
  %e = tensor.empty() : tensor<1x2x3x4xf32>
  %t = linalg.transpose ins(%x : tensor<1x4x2x3xf32>) outs(%e : tensor<1x2x3x4xf32>) permutation = [0, 2, 3, 1]
  %c3 = arith.constant 3 : index
  %d = tensor.dim %t, %c3 : tensor<1x2x3x4xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x2x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%t : tensor<1x2x3x4xf32>) outs(%f : tensor<1x2x3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x2x3xf32>
  %e2 = tensor.empty() : tensor<1x2x3x4xf32>
  %sub = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t, %sum : tensor<1x2x3x4xf32>, tensor<1x2x3xf32>) outs(%e2 : tensor<1x2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x2x3x4xf32>
  return %sub, %d : tensor<1x2x3x4xf32>, index
}
