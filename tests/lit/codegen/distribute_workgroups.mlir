// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-distribute-workgroups %s | FileCheck %s

// The inputs are bufferized kernel modules: dispatch functions on memrefs, each a tiled kernel's
// scf.forall over its workgroups or an untiled kernel.

// Tests that a dispatch whose only top-level write is one scf.forall over 2 x 16 x 2 tiles takes
// a trailing workgroup id, delinearized over the loop's trip counts, that the loop's body runs
// inline for the tile that id names (induction value = lower bound + index * step), and that
// kiln.workgroup_count is the number of tiles. A declaration marked kiln.dispatch and functions
// without the attribute keep their signatures.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<2x16x16x16xf32>, %[[OUT:[a-z0-9]+]]: memref<2x16x16x16xf32>, %[[ID:[a-z0-9]+]]: index)
// CHECK-SAME: attributes {kiln.dispatch, kiln.workgroup_count = 64 : i64}
// CHECK-NOT: scf.forall
// CHECK: %[[IDX:.+]]:3 = affine.delinearize_index %[[ID]] into (2, 16, 2) : index, index, index
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[S0:.+]] = arith.muli %[[IDX]]#0, %[[C1]] : index
// CHECK: %[[I:.+]] = arith.addi %[[C0]], %[[S0]] : index
// CHECK: %[[S1:.+]] = arith.muli %[[IDX]]#1, %{{.+}} : index
// CHECK: %[[J:.+]] = arith.addi %{{.+}}, %[[S1]] : index
// CHECK: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[S2:.+]] = arith.muli %[[IDX]]#2, %[[C8]] : index
// CHECK: %[[K:.+]] = arith.addi %{{.+}}, %[[S2]] : index
// CHECK: %[[IN:.+]] = memref.subview %[[X]][%[[I]], %[[J]], %[[K]], 0] [1, 1, 8, 16]
// CHECK: %[[DEST:.+]] = memref.subview %[[OUT]][%[[I]], %[[J]], %[[K]], 0] [1, 1, 8, 16]
// CHECK: linalg.copy ins(%[[IN]] : {{.+}}) outs(%[[DEST]] : {{.+}})
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @dispatch_1(memref<4xf32>) attributes {kiln.dispatch}
// CHECK-LABEL: func.func @helper(%{{[a-z0-9]+}}: memref<4xf32>) {
module @three_dims {
  func.func private @dispatch_0(%x: memref<2x16x16x16xf32>, %out: memref<2x16x16x16xf32>) attributes {kiln.dispatch} {
    scf.forall (%i, %j, %k) = (0, 0, 0) to (2, 16, 16) step (1, 1, 8) {
      %in = memref.subview %x[%i, %j, %k, 0] [1, 1, 8, 16] [1, 1, 1, 1] : memref<2x16x16x16xf32> to memref<1x1x8x16xf32, strided<[4096, 256, 16, 1], offset: ?>>
      %o = memref.subview %out[%i, %j, %k, 0] [1, 1, 8, 16] [1, 1, 1, 1] : memref<2x16x16x16xf32> to memref<1x1x8x16xf32, strided<[4096, 256, 16, 1], offset: ?>>
      linalg.copy ins(%in : memref<1x1x8x16xf32, strided<[4096, 256, 16, 1], offset: ?>>) outs(%o : memref<1x1x8x16xf32, strided<[4096, 256, 16, 1], offset: ?>>)
    }
    return
  }
  func.func private @dispatch_1(memref<4xf32>) attributes {kiln.dispatch}
  func.func @helper(%x: memref<4xf32>) {
    return
  }
}

// -----

// Tests that a one-dimensional loop uses the workgroup id itself as its index, that a lower bound
// and a step that does not divide the range count the partial last tile (ceil(4992 / 128) = 39
// workgroups), and that top-level reads, allocations and deallocations do not keep the kernel
// from being split.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: (%[[V:[a-z0-9]+]]: memref<f32>, %[[OUT:[a-z0-9]+]]: memref<5000xf32>, %[[ID:[a-z0-9]+]]: index)
// CHECK-SAME: kiln.workgroup_count = 39 : i64
// CHECK: %[[VALUE:.+]] = memref.load %[[V]][]
// CHECK: %[[TMP:.+]] = memref.alloc()
// CHECK-NOT: affine.delinearize_index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK: %[[SCALED:.+]] = arith.muli %[[ID]], %[[C128]] : index
// CHECK: %[[I:.+]] = arith.addi %[[C8]], %[[SCALED]] : index
// CHECK: %[[TILE:.+]] = memref.subview %[[OUT]][%[[I]]] [8] [1]
// CHECK: linalg.fill ins(%[[VALUE]] : f32) outs(%[[TILE]] : {{.+}})
// CHECK: memref.dealloc %[[TMP]]
// CHECK-NOT: scf.forall
module @offset_step {
  func.func private @dispatch_0(%v: memref<f32>, %out: memref<5000xf32>) attributes {kiln.dispatch} {
    %c = memref.load %v[] : memref<f32>
    %tmp = memref.alloc() : memref<128xf32>
    scf.forall (%i) = (8) to (5000) step (128) {
      %s = memref.subview %out[%i] [8] [1] : memref<5000xf32> to memref<8xf32, strided<[1], offset: ?>>
      linalg.fill ins(%c : f32) outs(%s : memref<8xf32, strided<[1], offset: ?>>)
    }
    memref.dealloc %tmp : memref<128xf32>
    return
  }
}

// -----

// Tests that a dispatch with another top-level write (the copy out of a temporary buffer that the
// bufferizer inserts) is not split: its loop runs sequentially as an scf.for nest in the single
// workgroup, before the copy.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: (%{{[a-z0-9]+}}: memref<2x16x16xf32>, %[[OUT:[a-z0-9]+]]: memref<2x16x1xf32>, %{{[a-z0-9]+}}: index)
// CHECK-SAME: kiln.workgroup_count = 1 : i64
// CHECK: %[[TMP:.+]] = memref.alloc()
// CHECK-NOT: scf.forall
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK-NEXT: %[[TILE:.+]] = memref.subview %[[TMP]][%[[I]], %[[J]], 0] [1, 1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.+}} : f32) outs(%[[TILE]] : {{.+}})
// CHECK: memref.copy %[[TMP]], %[[OUT]]
module @copy_after {
  func.func private @dispatch_0(%x: memref<2x16x16xf32>, %out: memref<2x16x1xf32>) attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %tmp = memref.alloc() : memref<2x16x1xf32>
    scf.forall (%i, %j) in (2, 16) {
      %s = memref.subview %tmp[%i, %j, 0] [1, 1, 1] [1, 1, 1] : memref<2x16x1xf32> to memref<1x1x1xf32, strided<[16, 1, 1], offset: ?>>
      linalg.fill ins(%zero : f32) outs(%s : memref<1x1x1xf32, strided<[16, 1, 1], offset: ?>>)
    }
    memref.copy %tmp, %out : memref<2x16x1xf32> to memref<2x16x1xf32>
    memref.dealloc %tmp : memref<2x16x1xf32>
    return
  }
}

// -----

// Tests that an untiled dispatch still takes the workgroup id (every dispatch has the same
// calling convention) and runs as one workgroup, its body unchanged.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<2x10xf32>, %[[OUT:[a-z0-9]+]]: memref<2x10xf32>, %{{[a-z0-9]+}}: index)
// CHECK-SAME: attributes {kiln.dispatch, kiln.workgroup_count = 1 : i64}
// CHECK-NEXT: linalg.copy ins(%[[X]] : memref<2x10xf32>) outs(%[[OUT]] : memref<2x10xf32>)
// CHECK-NEXT: return
module @untiled {
  func.func private @dispatch_0(%x: memref<2x10xf32>, %out: memref<2x10xf32>) attributes {kiln.dispatch} {
    linalg.copy ins(%x : memref<2x10xf32>) outs(%out : memref<2x10xf32>)
    return
  }
}

// -----

// Tests that a dispatch with two workgroup loops is not split: both run sequentially, in order.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: kiln.workgroup_count = 1 : i64
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK-NEXT: memref.store %[[ZERO]]
// CHECK: scf.for
// CHECK-NEXT: memref.store %[[ONE]]
// CHECK-NOT: scf.forall
module @two_loops {
  func.func private @dispatch_0(%out: memref<64xf32>) attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    scf.forall (%i) in (64) {
      memref.store %zero, %out[%i] : memref<64xf32>
    }
    scf.forall (%i) in (64) {
      memref.store %one, %out[%i] : memref<64xf32>
    }
    return
  }
}

// -----

// Tests that a loop whose trip count is a dimension of a binding (a program for a range of
// shapes) is split over a grid the runtime counts from that dimension (kiln.workgroup_dims:
// binding 0, dimension 0, tile 4; then a static extent of 2 in tiles of 1): the workgroup id is
// delinearized over the trip counts computed in the kernel.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: kiln.workgroup_count = 1 : i64
// CHECK-SAME: kiln.workgroup_dims = array<i64: 0, 0, 4, -1, 2, 1>
// CHECK: %[[N:.+]] = memref.dim %[[OUT:.+]], %c0
// CHECK: %[[TILES:.+]] = affine.apply #{{.+}}()[%[[N]]]
// CHECK: affine.delinearize_index %{{.+}} into (%[[TILES]], 2)
// CHECK-NOT: scf.forall
module @dynamic_bounds {
  func.func private @dispatch_0(%out: memref<?x2xf32>) attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %n = memref.dim %out, %c0 : memref<?x2xf32>
    scf.forall (%i, %j) = (0, 0) to (%n, 2) step (4, 1) {
      memref.store %zero, %out[%i, %j] : memref<?x2xf32>
    }
    return
  }
}

// -----

// Tests that a loop whose trip count is neither static nor a binding's dimension is not split:
// it runs sequentially.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: kiln.workgroup_count = 1 : i64
// CHECK-NOT: kiln.workgroup_dims
// CHECK: %[[N:.+]] = arith.muli
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[N]] step
module @computed_bounds {
  func.func private @dispatch_0(%out: memref<?xf32>) attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %d = memref.dim %out, %c0 : memref<?xf32>
    %n = arith.muli %d, %c2 : index
    scf.forall (%i) in (%n) {
      memref.store %zero, %out[%i] : memref<?xf32>
    }
    return
  }
}

// -----

// Tests that a loop with no iterations does not make zero workgroups: the kernel is one
// workgroup running the (empty) loop.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: kiln.workgroup_count = 1 : i64
// CHECK-NOT: scf.forall
// CHECK: scf.for
module @empty_loop {
  func.func private @dispatch_0(%out: memref<64xf32>) attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    scf.forall (%i) = (8) to (8) step (1) {
      memref.store %zero, %out[%i] : memref<64xf32>
    }
    return
  }
}

// -----

// Tests that a workgroup loop that was not bufferized is rejected.
module @tensor_loop {
  func.func private @dispatch_0(%x: tensor<64xf32>) -> tensor<64xf32> attributes {kiln.dispatch} {
    // expected-error @+1 {{the workgroup loop still has tensor results after bufferization}}
    %0 = scf.forall (%i) in (64) shared_outs(%acc = %x) -> (tensor<64xf32>) {
      %s = tensor.extract_slice %acc[%i] [1] [1] : tensor<64xf32> to tensor<1xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %s into %acc[%i] [1] [1] : tensor<1xf32> into tensor<64xf32>
      }
    }
    return %0 : tensor<64xf32>
  }
}
