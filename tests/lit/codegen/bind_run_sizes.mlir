// RUN: kiln-opt --split-input-file --kiln-bind-run-sizes %s | FileCheck %s

// Tests that a kernel with dynamic bindings takes the run's sizes before the workgroup id (every
// dimension of every binding: 2 + 1 + 2 = 5), passes each dynamic binding as a bare pointer, and
// sees it again with its run's dimensions: row-major strides, the first one the product of the
// sizes after it.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: (%[[X:.+]]: memref<1xf32>, %[[B:.+]]: memref<16xf32>, %[[Y:.+]]: memref<1xf32>, %[[SIZES:.+]]: memref<5xi64>, %{{.+}}: index)
// CHECK-SAME: kiln.run_sizes = 5 : i64
// CHECK: %[[N:.+]] = memref.load %[[SIZES]][%c0]
// CHECK: %[[NI:.+]] = arith.index_cast %[[N]] : i64 to index
// CHECK: memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[NI]], 16], strides: [16, 1] : memref<1xf32> to memref<?x16xf32>
// CHECK: %[[M:.+]] = memref.load %[[SIZES]][%c3]
// CHECK: %[[MI:.+]] = arith.index_cast %[[M]] : i64 to index
// CHECK: memref.reinterpret_cast %[[Y]] to offset: [0], sizes: [%[[MI]], 16], strides: [16, 1] : memref<1xf32> to memref<?x16xf32>
module @dynamic {
  func.func private @dispatch_0(%x: memref<?x16xf32>, %b: memref<16xf32>, %y: memref<?x16xf32>, %id: index) attributes {kiln.dispatch} {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : memref<?x16xf32>, memref<16xf32>) outs(%y : memref<?x16xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      linalg.yield %0 : f32
    }
    return
  }
}

// -----

// Tests that two dynamic dimensions make a dynamic leading stride (the product of the run's
// trailing sizes), and that a kernel whose bindings are all static is left as it is.
// CHECK-LABEL: module @two_dims
// CHECK: %[[R:.+]] = arith.index_cast
// CHECK: %[[C:.+]] = arith.index_cast
// CHECK: %[[S:.+]] = arith.muli %c4{{.*}}, %[[C]] : index
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [%[[R]], %[[C]], 4], strides: [%[[S]], 4, 1]
// CHECK: func.func private @dispatch_1(%{{.+}}: memref<8xf32>, %{{.+}}: index)
// CHECK-NOT: kiln.run_sizes
module @two_dims {
  func.func private @dispatch_0(%x: memref<?x?x4xf32>, %id: index) attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%x : memref<?x?x4xf32>)
    return
  }
  func.func private @dispatch_1(%x: memref<8xf32>, %id: index) attributes {kiln.dispatch} {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%x : memref<8xf32>)
    return
  }
}
