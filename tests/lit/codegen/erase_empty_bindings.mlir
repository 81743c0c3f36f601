// RUN: kiln-opt %s --kiln-erase-empty-bindings | FileCheck %s

// Tests that a dispatch binding with no elements and more than one dimension (which the
// bare-pointer convention refuses) becomes memref<0xT>, its uses a local empty buffer of the
// original type, while bindings with elements, 1-D empty ones and non-dispatch functions keep
// their types.
// CHECK-LABEL: func.func private @dispatch_0
// CHECK-SAME: (%[[IN:.+]]: memref<0xf32>, %[[OUT:.+]]: memref<2x1x4xf32>, %[[EMPTY1D:.+]]: memref<0xi8>, %{{.+}}: index)
// CHECK: %[[LOCAL:.+]] = memref.alloca() : memref<2x0x1x4xf32>
// CHECK: memref.load %[[LOCAL]]
// CHECK: linalg.fill {{.*}} outs(%[[OUT]] : memref<2x1x4xf32>)
module {
  func.func private @dispatch_0(%arg0: memref<2x0x1x4xf32>, %arg1: memref<2x1x4xf32>, %arg2: memref<0xi8>, %arg3: index) attributes {kiln.dispatch, kiln.workgroup_count = 1 : i64} {
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    %unused = memref.load %arg0[%c0, %c0, %c0, %c0] : memref<2x0x1x4xf32>
    linalg.fill ins(%cst : f32) outs(%arg1 : memref<2x1x4xf32>)
    return
  }
  // CHECK-LABEL: func.func private @helper
  // CHECK-SAME: memref<2x0xf32>
  func.func private @helper(%arg0: memref<2x0xf32>) {
    return
  }
}
