// RUN: kiln-opt --split-input-file --canonicalize %s | FileCheck %s

// Tests that a view of a view folds into one view of the first buffer, and a view to the same
// type into its source.
// CHECK-LABEL: program.program @views
// CHECK: %[[T:.+]] = program.alloc : memref<2x4xf32>
// CHECK: %[[V:.+]] = program.view %[[T]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NOT: program.view
// CHECK: program.copy %[[T]] to %{{.+}} : memref<2x4xf32> to memref<2x4xf32>
// CHECK-NEXT: program.copy %[[V]] to
module {
  program.program @views device(cpu) {
    %x = program.input 0 "x" : memref<2x4xf32>
    %y = program.output 0 "y" : memref<2x4xf32>
    %z = program.output 1 "z" : memref<8xf32>
    %t = program.alloc : memref<2x4xf32>
    program.copy %x to %t : memref<2x4xf32> to memref<2x4xf32>
    %a = program.view %t : memref<2x4xf32> to memref<4x2xf32>
    %b = program.view %a : memref<4x2xf32> to memref<2x4xf32>
    %c = program.view %a : memref<4x2xf32> to memref<8xf32>
    program.copy %b to %y : memref<2x4xf32> to memref<2x4xf32>
    program.copy %c to %z : memref<8xf32> to memref<8xf32>
  }
}
