// RUN: kiln-opt --split-input-file --kiln-tile-dispatches %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-tile-dispatches="target-workgroups=4 min-elements-per-workgroup=16" %s | FileCheck %s --check-prefix=OPT
// RUN: kiln-opt --split-input-file --kiln-tile-dispatches="tile=false row-tiles=true" %s | FileCheck %s --check-prefix=ROW

// The inputs are kernel modules as the compiler splits them off: dispatch functions alone, their
// callers left behind. Input arguments are matched loosely ({{.*}} after their types): only the
// output arguments' attributes are checked.

// Tests that an elementwise dispatch takes its result as a trailing writable output argument
// that the generic writes instead of its tensor.empty, and that its 8192 iterations are split
// into 64 workgroups along the outer parallel loops (2 x 16 x 2 tiles of 1x1x8x16) by an
// scf.forall over the output, whose result is materialized into the output. A declaration marked
// kiln.dispatch and functions without the attribute are left alone. With a target of 4
// workgroups, 2 x 2 tiles of 1x8x16x16.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x16x16x16xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<2x16x16x16xf32> {bufferization.writable = true}) -> tensor<2x16x16x16xf32>
// CHECK-SAME: attributes {kiln.description = "linalg.generic", kiln.dispatch}
// CHECK: %[[LOOP:.+]] = scf.forall (%[[I:.+]], %[[J:.+]], %[[K:.+]]) = (0, 0, 0) to (2, 16, 16) step (1, 1, 8) shared_outs(%[[ACC:.+]] = %[[OUT]]) -> (tensor<2x16x16x16xf32>)
// CHECK: %[[IN:.+]] = tensor.extract_slice %[[X]][%[[I]], %[[J]], %[[K]], 0] [1, 1, 8, 16] [1, 1, 1, 1]
// CHECK: %[[DEST:.+]] = tensor.extract_slice %[[ACC]][%[[I]], %[[J]], %[[K]], 0] [1, 1, 8, 16] [1, 1, 1, 1]
// CHECK: %[[TILE:.+]] = linalg.generic
// CHECK-SAME: ins(%[[IN]] : tensor<1x1x8x16xf32>) outs(%[[DEST]] : tensor<1x1x8x16xf32>)
// CHECK: arith.maximumf
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[TILE]] into %[[ACC]][%[[I]], %[[J]], %[[K]], 0] [1, 1, 8, 16] [1, 1, 1, 1]
// CHECK: %[[R:.+]] = bufferization.materialize_in_destination %[[LOOP]] in %[[OUT]]
// CHECK-NEXT: return %[[R]]
// CHECK-LABEL: func.func private @dispatch_1(tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch}
// CHECK-LABEL: func.func @helper(%{{[a-z0-9]+}}: tensor<4xf32>) -> tensor<4xf32>
// OPT-LABEL: func.func private @dispatch_0
// OPT: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, 16) step (1, 8)
// OPT: linalg.generic
// OPT-SAME: outs(%{{.+}} : tensor<1x8x16x16xf32>)
module @elementwise {
  func.func private @dispatch_0(%x: tensor<2x16x16x16xf32>) -> tensor<2x16x16x16xf32> attributes {kiln.description = "linalg.generic", kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x16x16x16xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x16x16x16xf32>) outs(%e : tensor<2x16x16x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = arith.maximumf %in, %zero : f32
      linalg.yield %1 : f32
    } -> tensor<2x16x16x16xf32>
    return %0 : tensor<2x16x16x16xf32>
  }
  func.func private @dispatch_1(tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch}
  func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that a reduction initialized by a fill of tensor.empty fills the output argument
// instead, and is split along its parallel dimension only (64 rows, one per workgroup), the fill
// fused into each tile so each workgroup initializes its own rows.
// CHECK-LABEL: func.func private @reduce_rows
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<64x128xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<64xf32> {bufferization.writable = true}) -> tensor<64xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[LOOP:.+]] = scf.forall (%[[I:.+]]) in (64) shared_outs(%[[ACC:.+]] = %[[OUT]]) -> (tensor<64xf32>)
// CHECK: %[[IN:.+]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 128] [1, 1]
// CHECK: %[[DEST:.+]] = tensor.extract_slice %[[ACC]][%[[I]]] [1] [1]
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[DEST]] : tensor<1xf32>)
// CHECK: %[[TILE:.+]] = linalg.reduce ins(%[[IN]] : tensor<1x128xf32>) outs(%[[INIT]] : tensor<1xf32>) dimensions = [1]
// CHECK: tensor.parallel_insert_slice %[[TILE]] into %[[ACC]][%[[I]]] [1] [1]
// CHECK: bufferization.materialize_in_destination %[[LOOP]] in %[[OUT]]
module @reduction {
  func.func private @reduce_rows(%x: tensor<64x128xf32>) -> tensor<64xf32> attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<64xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    %sum = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%init : tensor<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %0 = arith.addf %in, %acc : f32
        linalg.yield %0 : f32
      }
    return %sum : tensor<64xf32>
  }
}

// -----

// Tests that tiles of the innermost loop are whole multiples of 64 elements: 5000 elements over
// 64 workgroups would be 79 each, rounded up to 128 (40 tiles, the last one partial); with a
// target of 4 workgroups, 1250 rounded up to 1280.
// CHECK-LABEL: func.func private @exp_1d
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<5000xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<5000xf32> {bufferization.writable = true})
// CHECK: scf.forall (%[[I:.+]]) = (0) to (5000) step (128) shared_outs(%[[ACC:.+]] = %[[OUT]])
// CHECK: %[[SIZE:.+]] = affine.min #{{.+}}(%[[I]])
// CHECK: tensor.extract_slice %[[X]][%[[I]]] [%[[SIZE]]] [1] : tensor<5000xf32> to tensor<?xf32>
// CHECK: math.exp
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[ACC]][%[[I]]] [%[[SIZE]]] [1]
// OPT-LABEL: func.func private @exp_1d
// OPT: scf.forall (%{{.+}}) = (0) to (5000) step (1280)
module @innermost {
  func.func private @exp_1d(%x: tensor<5000xf32>) -> tensor<5000xf32> attributes {kiln.dispatch} {
    %e = tensor.empty() : tensor<5000xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<5000xf32>) outs(%e : tensor<5000xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = math.exp %in : f32
      linalg.yield %1 : f32
    } -> tensor<5000xf32>
    return %0 : tensor<5000xf32>
  }
}

// -----

// Tests that a kernel with fewer iterations than min-elements-per-workgroup (4096 by default)
// is not split: the generic writes the whole output argument. With a minimum of 16 and a target
// of 4 workgroups, its 20 iterations become 2 tiles, one per row.
// CHECK-LABEL: func.func private @small
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x10xf32>{{.*}}, %[[M:[a-z0-9]+]]: tensor<2xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<2x10xf32> {bufferization.writable = true}) -> tensor<2x10xf32>
// CHECK-NOT: scf.forall
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[M]] : tensor<2x10xf32>, tensor<2xf32>) outs(%[[OUT]] : tensor<2x10xf32>)
// CHECK-NOT: scf.forall
// CHECK: %[[D:.+]] = bufferization.materialize_in_destination %[[R]] in %[[OUT]]
// CHECK-NEXT: return %[[D]]
// OPT-LABEL: func.func private @small
// OPT: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2, 10) step (1, 10)
// OPT: linalg.generic
// OPT-SAME: outs(%{{.+}} : tensor<1x10xf32>)
module @small {
  func.func private @small(%x: tensor<2x10xf32>, %m: tensor<2xf32>) -> tensor<2x10xf32> attributes {kiln.dispatch} {
    %e = tensor.empty() : tensor<2x10xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : tensor<2x10xf32>, tensor<2xf32>) outs(%e : tensor<2x10xf32>) {
    ^bb0(%in: f32, %max: f32, %out: f32):
      %1 = arith.subf %in, %max : f32
      linalg.yield %1 : f32
    } -> tensor<2x10xf32>
    return %0 : tensor<2x10xf32>
  }
}

// -----

// Tests that each result of a kernel with two results (kiln-plan-fusion's multi-output kernels)
// gets its own output argument, and that the op computing both is split into workgroups like a
// kernel of one result: each tile writes its slice of both outputs.
// CHECK-LABEL: func.func private @two_results
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<64x128xf32>{{.*}}, %[[OUT0:[a-z0-9]+]]: tensor<64x128xf32> {bufferization.writable = true}, %[[OUT1:[a-z0-9]+]]: tensor<64x128xf32> {bufferization.writable = true}) -> (tensor<64x128xf32>, tensor<64x128xf32>)
// CHECK: %[[R:.+]]:2 = scf.forall (%[[I:.+]]) in (64) shared_outs(%[[A:.+]] = %[[OUT0]], %[[B:.+]] = %[[OUT1]])
// CHECK: %[[T:.+]]:2 = linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<1x128xf32>, tensor<1x128xf32>)
// CHECK: tensor.parallel_insert_slice %[[T]]#0 into %[[A]][%[[I]], 0] [1, 128]
// CHECK: tensor.parallel_insert_slice %[[T]]#1 into %[[B]][%[[I]], 0] [1, 128]
// CHECK: %[[D0:.+]] = bufferization.materialize_in_destination %[[R]]#0 in %[[OUT0]]
// CHECK-NEXT: %[[D1:.+]] = bufferization.materialize_in_destination %[[R]]#1 in %[[OUT1]]
// CHECK-NEXT: return %[[D0]], %[[D1]]
module @two_results {
  func.func private @two_results(%x: tensor<64x128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>) attributes {kiln.dispatch} {
    %e = tensor.empty() : tensor<64x128xf32>
    %0:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x128xf32>) outs(%e, %e : tensor<64x128xf32>, tensor<64x128xf32>) {
    ^bb0(%in: f32, %o0: f32, %o1: f32):
      %1 = math.exp %in : f32
      %2 = math.log %in : f32
      linalg.yield %1, %2 : f32, f32
    } -> (tensor<64x128xf32>, tensor<64x128xf32>)
    return %0#0, %0#1 : tensor<64x128xf32>, tensor<64x128xf32>
  }
}

// -----

// Tests that a concatenation along the last axis becomes each operand inserted into its slice of
// the output argument (one pass, no buffer of its own), which stays one workgroup.
// CHECK-LABEL: func.func private @concat
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<64x64xf32>{{.*}}, %[[B:[a-z0-9]+]]: tensor<64x64xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<64x128xf32> {bufferization.writable = true})
// CHECK-NOT: scf.forall
// CHECK: %[[FIRST:.+]] = tensor.insert_slice %[[A]] into %[[OUT]][0, 0] [64, 64] [1, 1]
// CHECK-NEXT: %[[BOTH:.+]] = tensor.insert_slice %[[B]] into %[[FIRST]][0, 64] [64, 64] [1, 1]
// CHECK-NEXT: %[[D:.+]] = bufferization.materialize_in_destination %[[BOTH]] in %[[OUT]]
// CHECK-NEXT: return %[[D]]
module @concat {
  func.func private @concat(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x128xf32> attributes {kiln.dispatch} {
    %0 = tensor.concat dim(1) %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x128xf32>
    return %0 : tensor<64x128xf32>
  }
}

// -----

// Tests that a concatenation along another axis (a kernel of its own, read by a library call)
// becomes the generic kiln-fold-data-movement writes, reading its operands in the body, and is
// split into workgroups like any generic: tensor.concat would be one workgroup.
// CHECK-LABEL: func.func private @concat_rows
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<384x512xf32>{{.*}}, %[[B:[a-z0-9]+]]: tensor<128x512xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<512x512xf32> {bufferization.writable = true})
// CHECK: %[[LOOP:.+]] = scf.forall
// CHECK: linalg.generic
// CHECK-DAG: tensor.extract %[[A]]
// CHECK-DAG: tensor.extract %[[B]]
// CHECK: arith.select
// CHECK: tensor.parallel_insert_slice
// CHECK: bufferization.materialize_in_destination %[[LOOP]] in %[[OUT]]
// CHECK-NOT: tensor.concat
module @concat_rows {
  func.func private @concat_rows(%a: tensor<384x512xf32>, %b: tensor<128x512xf32>) -> tensor<512x512xf32> attributes {kiln.dispatch} {
    %0 = tensor.concat dim(0) %a, %b : (tensor<384x512xf32>, tensor<128x512xf32>) -> tensor<512x512xf32>
    return %0 : tensor<512x512xf32>
  }
}

// -----

// Tests that a concatenation of more operands than the generic takes (each of its points would
// read all five) is inserted operand by operand into the output instead.
// CHECK-LABEL: func.func private @concat_five
// CHECK-NOT: linalg.generic
// CHECK-COUNT-5: tensor.insert_slice
// CHECK: bufferization.materialize_in_destination
module @concat_five {
  func.func private @concat_five(%a: tensor<128x512xf32>) -> tensor<640x512xf32> attributes {kiln.dispatch} {
    %0 = tensor.concat dim(0) %a, %a, %a, %a, %a : (tensor<128x512xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<128x512xf32>, tensor<128x512xf32>) -> tensor<640x512xf32>
    return %0 : tensor<640x512xf32>
  }
}

// -----

// Tests that a kernel whose result is a strided slice (no view can be) copies it with a
// linalg.copy split into workgroups, each reading its part of the slice.
// CHECK-LABEL: func.func private @strided_slice
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<512x1024xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<256x512xf32> {bufferization.writable = true})
// CHECK: tensor.extract_slice %[[X]][0, 1] [256, 512] [2, 2]
// CHECK: %[[LOOP:.+]] = scf.forall (%{{.+}}) = (0) to (256) step (4)
// CHECK: linalg.copy ins(%{{.+}} : tensor<4x512xf32>)
// CHECK: tensor.parallel_insert_slice
// CHECK: bufferization.materialize_in_destination %[[LOOP]] in %[[OUT]]
module @strided_slice {
  func.func private @strided_slice(%x: tensor<512x1024xf32>) -> tensor<256x512xf32> attributes {kiln.dispatch} {
    %0 = tensor.extract_slice %x[0, 1] [256, 512] [2, 2] : tensor<512x1024xf32> to tensor<256x512xf32>
    return %0 : tensor<256x512xf32>
  }
}

// -----

// Tests that a root that is not in destination-passing style (tensor.pad) is still split into
// workgroups, row by row, and its result materialized into the output argument.
// CHECK-LABEL: func.func private @pad
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<62x126xf32>{{.*}}, %[[V:[a-z0-9]+]]: tensor<f32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<64x128xf32> {bufferization.writable = true})
// CHECK: %[[LOOP:.+]] = scf.forall (%{{.+}}) in (64)
// CHECK: tensor.pad
// CHECK: tensor.parallel_insert_slice %{{.+}} : tensor<1x128xf32> into tensor<64x128xf32>
// CHECK: %[[D:.+]] = bufferization.materialize_in_destination %[[LOOP]] in %[[OUT]]
// CHECK-NEXT: return %[[D]]
module @pad {
  func.func private @pad(%x: tensor<62x126xf32>, %v: tensor<f32>) -> tensor<64x128xf32> attributes {kiln.dispatch} {
    %s = tensor.extract %v[] : tensor<f32>
    %0 = tensor.pad %x low[1, 1] high[1, 1] {
    ^bb0(%i: index, %j: index):
      tensor.yield %s : f32
    } : tensor<62x126xf32> to tensor<64x128xf32>
    return %0 : tensor<64x128xf32>
  }
}

// -----

// Tests that a fused group (kiln-plan-fusion's softmax-like row kernel: a reduction and the op
// that divides by it) is split only along the loops its root's `kiln.tile_dims` names: 8 rows
// of 4096 would otherwise be cut along the columns too, and each column tile would compute
// whole-row sums again. The reduction is fused into each row's tile.
// For CUDA (row tiles, no workgroup tiling), the group is split into one tile per row, for the
// row kernel's warps.
// ROW-LABEL: func.func private @row_group
// ROW: scf.forall (%{{.+}}) in (8) shared_outs
// ROW: linalg.reduce ins(%{{.+}} : tensor<1x4096xf32>)
// CHECK-LABEL: func.func private @row_group
// CHECK: scf.forall (%[[I:.+]]) in (8) shared_outs
// CHECK: %[[SUM:.+]] = linalg.reduce ins(%{{.+}} : tensor<1x4096xf32>)
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %[[SUM]] : tensor<1x4096xf32>, tensor<1xf32>)
// CHECK-NOT: linalg.reduce
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module @fused_rows {
  func.func private @row_group(%x: tensor<8x4096xf32>) -> tensor<8x4096xf32> attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<8xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
    %sum = linalg.reduce ins(%x : tensor<8x4096xf32>) outs(%s0 : tensor<8xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      }
    %e2 = tensor.empty() : tensor<8x4096xf32>
    %div = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x, %sum : tensor<8x4096xf32>, tensor<8xf32>) outs(%e2 : tensor<8x4096xf32>)
        attrs = {kiln.tile_dims = array<i64: 0>} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<8x4096xf32>
    return %div : tensor<8x4096xf32>
  }
}

// -----

// For CUDA, a lone sum of 16 rows of 2048 contiguous elements takes a tile per row (a warp or a
// block shares each row), its loop mapped to a linear block dimension; a sum along columns (the
// reduced dimension outermost) and a sum of short rows (128) keep a thread per result.
// ROW-LABEL: func.func private @long_rows
// ROW: scf.forall (%{{.+}}) in (16) shared_outs(%{{.+}}) -> (tensor<16xf32>)
// ROW: linalg.generic {{.+}} ins(%{{.+}} : tensor<1x2048xf32>)
// ROW: mapping = [#gpu.block<linear_dim_0>]
// ROW-LABEL: func.func private @columns
// ROW-NOT: scf.forall
// ROW: linalg.generic {{.+}} ins(%{{.+}} : tensor<2048x16xf32>)
// ROW-LABEL: func.func private @short_rows
// ROW-NOT: scf.forall
// ROW: linalg.generic {{.+}} ins(%{{.+}} : tensor<64x128xf32>)
// ROW-LABEL: func.func private @one_row
// ROW: scf.forall (%{{.+}}) in (1) shared_outs
// ROW: mapping = [#gpu.block<linear_dim_0>]
#rows = affine_map<(d0, d1) -> (d0, d1)>
#columns = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
module @lone_reductions {
  func.func private @long_rows(%x: tensor<16x2048xf32>) -> tensor<16xf32> attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<16x2048xf32>) outs(%init : tensor<16xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<16xf32>
    return %sum : tensor<16xf32>
  }
  func.func private @columns(%x: tensor<2048x16xf32>) -> tensor<16xf32> attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<16xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    %sum = linalg.generic {indexing_maps = [#columns, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<2048x16xf32>) outs(%init : tensor<16xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<16xf32>
    return %sum : tensor<16xf32>
  }
  func.func private @short_rows(%x: tensor<64x128xf32>) -> tensor<64xf32> attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<64xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<64x128xf32>) outs(%init : tensor<64xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<64xf32>
    return %sum : tensor<64xf32>
  }
  func.func private @one_row(%x: tensor<1x768xf32>) -> tensor<1xf32> attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1xf32>) -> tensor<1xf32>
    %sum = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<1x768xf32>) outs(%init : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<1xf32>
    return %sum : tensor<1xf32>
  }
}

// -----

// For CUDA, the fold of a reduction split over the grid (kiln-split-reductions: 4 results of
// 1024 partial values each) takes a tile per row alone: the partial reduction stays outside the
// loop, spread over the grid, instead of running inside each result's tile.
// ROW-LABEL: func.func private @split_fold
// ROW: %[[PARTIAL:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<4x256x1024xf32>)
// ROW: scf.forall (%[[I:.+]]) in (4) shared_outs
// ROW: tensor.extract_slice %[[PARTIAL]][%[[I]], 0] [1, 1024] [1, 1]
// ROW-NOT: tensor<1x256x1024xf32>
// ROW: mapping = [#gpu.block<linear_dim_0>]
#in = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#partial = affine_map<(d0, d1, d2) -> (d0, d1)>
#rows2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
module @split {
  func.func private @split_fold(%x: tensor<4x256x1024xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<4x1024xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1024xf32>) -> tensor<4x1024xf32>
    %partial = linalg.generic {indexing_maps = [#in, #partial], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : tensor<4x256x1024xf32>) outs(%f1 : tensor<4x1024xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4x1024xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
    %sum = linalg.generic {indexing_maps = [#rows2, #row2], iterator_types = ["parallel", "reduction"]}
        ins(%partial : tensor<4x1024xf32>) outs(%f2 : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    return %sum : tensor<4xf32>
  }
}

// -----

// Tests that a concatenation written as a generic (kiln-fold-data-movement: operands read at
// (i - start) mod size, selected by i) reads its wrapped operands inside the body, at the maps'
// indices of the tile's global position, and not through tile slices (a tile's slice of a
// wrapping read is not the range between its first and last index); the operand read through a
// plain map keeps its slice.
// CHECK-LABEL: func.func private @concat_last_axis
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<64x100xf32>{{.*}}, %[[B:[a-z0-9]+]]: tensor<64x28xf32>{{.*}}, %[[BIAS:[a-z0-9]+]]: tensor<64x128xf32>{{.*}}, %[[OUT:[a-z0-9]+]]: tensor<64x128xf32> {bufferization.writable = true})
// CHECK: scf.forall (%[[I:.+]]) in (64)
// CHECK-NOT: tensor.extract_slice %[[A]]
// CHECK-NOT: tensor.extract_slice %[[B]]
// CHECK: %[[IN:.+]] = tensor.extract_slice %[[BIAS]][%[[I]], 0] [1, 128] [1, 1]
// CHECK-NOT: tensor.extract_slice %[[A]]
// CHECK-NOT: tensor.extract_slice %[[B]]
// CHECK: linalg.generic {{.*}}ins(%[[IN]] : tensor<1x128xf32>)
// CHECK: tensor.extract %[[A]][
// CHECK: tensor.extract %[[B]][
// CHECK: arith.select
// CHECK: scf.forall.in_parallel
module @concatenation {
  func.func private @concat_last_axis(%a: tensor<64x100xf32>, %b: tensor<64x28xf32>, %bias: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {kiln.description = "linalg.generic", kiln.dispatch} {
    %e = tensor.empty() : tensor<64x128xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 mod 100)>, affine_map<(d0, d1) -> (d0, (d1 - 100) mod 28)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b, %bias : tensor<64x100xf32>, tensor<64x28xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32, %out: f32):
      %i = linalg.index 1 : index
      %c100 = arith.constant 100 : index
      %low = arith.cmpi ult, %i, %c100 : index
      %s = arith.select %low, %x, %y : f32
      %r = arith.addf %s, %z : f32
      linalg.yield %r : f32
    } -> tensor<64x128xf32>
    return %0 : tensor<64x128xf32>
  }
}
