// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-export-cpu-dispatch-abi %s | FileCheck %s

// The inputs are kernel modules lowered to the LLVM dialect with bare-pointer memrefs: each
// dispatch takes one pointer per binding and the workgroup id last. The bodies do not matter.

// Tests that each dispatch gets an exported wrapper @kiln_<name>(ptr %bindings, i64 %workgroup)
// (kiln_cpu_dispatch_fn) that loads binding i from slot i of the bindings array and calls the
// dispatch with them and the workgroup id; that the dispatch itself becomes internal; that a
// dispatch with no bindings is called with the workgroup id alone; and that declarations and
// functions that are not dispatches get no wrapper.
// CHECK-LABEL: module @two_dispatches
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK: llvm.func internal @dispatch_0(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64)
// CHECK-SAME: kiln.workgroup_count = 64 : i64
// CHECK: llvm.func internal @dispatch_1(%{{.+}}: i64)
// CHECK: llvm.func @dispatch_2(!llvm.ptr, i64) attributes {kiln.dispatch}
// CHECK-LABEL: llvm.func @kiln_dispatch_0
// CHECK-SAME: (%[[BINDINGS:.+]]: !llvm.ptr, %[[WORKGROUP:.+]]: i64) {
// CHECK-NEXT: %[[S0:.+]] = llvm.getelementptr %[[BINDINGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[B0:.+]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S1:.+]] = llvm.getelementptr %[[BINDINGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[B1:.+]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[S2:.+]] = llvm.getelementptr %[[BINDINGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[B2:.+]] = llvm.load %[[S2]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @dispatch_0(%[[B0]], %[[B1]], %[[B2]], %[[WORKGROUP]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @kiln_dispatch_1
// CHECK-SAME: (%{{.+}}: !llvm.ptr, %[[WORKGROUP:.+]]: i64) {
// CHECK-NEXT: llvm.call @dispatch_1(%[[WORKGROUP]]) : (i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NOT: @kiln_dispatch_2
// CHECK-NOT: @kiln_malloc
module @two_dispatches {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @dispatch_0(%x: !llvm.ptr, %y: !llvm.ptr, %out: !llvm.ptr, %id: i64) attributes {kiln.description = "linalg.generic", kiln.dispatch, kiln.workgroup_count = 64 : i64, sym_visibility = "private"} {
    llvm.return
  }
  llvm.func @dispatch_1(%id: i64) attributes {kiln.dispatch, kiln.workgroup_count = 1 : i64} {
    llvm.return
  }
  llvm.func @dispatch_2(!llvm.ptr, i64) attributes {kiln.dispatch}
}

// -----

// Tests that a binding that did not lower to a bare pointer (a memref descriptor, as a dynamic
// shape gives) is rejected.
module @struct_binding {
  // expected-error @+1 {{binding 0 lowered to '!llvm.struct<(ptr, ptr, i64)>', not a bare pointer (is its shape static?)}}
  llvm.func @dispatch_0(%x: !llvm.struct<(ptr, ptr, i64)>, %id: i64) attributes {kiln.dispatch} {
    llvm.return
  }
}

// -----

// Tests that a dispatch without the trailing i64 workgroup id is rejected.
module @no_workgroup_id {
  // expected-error @+1 {{a lowered dispatch must take the workgroup id last and return nothing}}
  llvm.func @dispatch_0(%x: !llvm.ptr, %out: !llvm.ptr) attributes {kiln.dispatch} {
    llvm.return
  }
}

// -----

// Tests that a dispatch returning a value is rejected.
module @returns_value {
  // expected-error @+1 {{a lowered dispatch must take the workgroup id last and return nothing}}
  llvm.func @dispatch_0(%x: !llvm.ptr, %id: i64) -> i32 attributes {kiln.dispatch} {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
}
