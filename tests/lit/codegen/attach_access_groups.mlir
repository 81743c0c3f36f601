// RUN: kiln-opt --split-input-file --kiln-attach-access-groups --mlir-print-local-scope %s | FileCheck %s

// Tests that the loads and stores of a loop whose back edge carries a parallel annotation (a
// row scaled in place, its body over two blocks) join the annotation's group, that the
// annotation becomes the branch's own, and that a load of the enclosing loop stays outside.
// CHECK-LABEL: llvm.func @scale_rows
// CHECK: llvm.load %{{[0-9]+}} : !llvm.ptr -> f32
// CHECK: ^bb3(
// CHECK: llvm.load %{{.+}} {access_groups = [#llvm.access_group<id = distinct{{\[}}0{{\]}}<>>]} : !llvm.ptr -> f32
// CHECK: ^bb4:
// CHECK: llvm.store %{{.+}}, %{{.+}} {access_groups = [#llvm.access_group<id = distinct{{\[}}0{{\]}}<>>]} : f32, !llvm.ptr
// CHECK: llvm.br ^bb3(%{{.+}} : i64) {loop_annotation = #llvm.loop_annotation<parallelAccesses = <id = distinct{{\[}}0{{\]}}<>>>}
// CHECK-NOT: llvm.loop_annotation
// CHECK-NOT: access_groups
// CHECK: llvm.return
llvm.func @scale_rows(%x: !llvm.ptr, %scales: !llvm.ptr) {
  %zero = llvm.mlir.constant(0 : index) : i64
  %one = llvm.mlir.constant(1 : index) : i64
  %rows = llvm.mlir.constant(4 : index) : i64
  %cols = llvm.mlir.constant(8 : index) : i64
  llvm.br ^bb1(%zero : i64)
^bb1(%i: i64):
  %more_rows = llvm.icmp "slt" %i, %rows : i64
  llvm.cond_br %more_rows, ^bb2, ^bb6
^bb2:
  %scale_at = llvm.getelementptr %scales[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %scale = llvm.load %scale_at : !llvm.ptr -> f32
  llvm.br ^bb3(%zero : i64)
^bb3(%j: i64):
  %more = llvm.icmp "slt" %j, %cols : i64
  %row = llvm.mul %i, %cols : i64
  %index = llvm.add %row, %j : i64
  %at = llvm.getelementptr %x[%index] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %at : !llvm.ptr -> f32
  llvm.cond_br %more, ^bb4, ^bb5
^bb4:
  %scaled = llvm.fmul %v, %scale : f32
  llvm.store %scaled, %at : f32, !llvm.ptr
  %next = llvm.add %j, %one : i64
  llvm.br ^bb3(%next : i64) {llvm.loop_annotation = #llvm.loop_annotation<parallelAccesses = #llvm.access_group<id = distinct[0]<>>>}
^bb5:
  %next_row = llvm.add %i, %one : i64
  llvm.br ^bb1(%next_row : i64)
^bb6:
  llvm.return
}

// -----

// Tests that an annotation without access groups is still moved onto the branch, and the
// loop's accesses are left without groups.
// CHECK-LABEL: llvm.func @no_groups
// CHECK-NOT: access_groups
// CHECK: llvm.br ^bb1(%{{.+}} : i64) {loop_annotation = #llvm.loop_annotation<mustProgress = true>}
llvm.func @no_groups(%x: !llvm.ptr) {
  %zero = llvm.mlir.constant(0 : index) : i64
  %one = llvm.mlir.constant(1 : index) : i64
  %n = llvm.mlir.constant(8 : index) : i64
  llvm.br ^bb1(%zero : i64)
^bb1(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^bb2, ^bb3
^bb2:
  %at = llvm.getelementptr %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %at : !llvm.ptr -> f32
  llvm.store %v, %at : f32, !llvm.ptr
  %next = llvm.add %i, %one : i64
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #llvm.loop_annotation<mustProgress = true>}
^bb3:
  llvm.return
}
