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

// -----

// Tests that a view of a view into part of a buffer views the first buffer at the sum of the
// offsets, and that a reshape of such a view keeps its offset.
// CHECK-LABEL: program.program @offset_views
// CHECK: %[[T:.+]] = program.alloc : memref<4x64xf32>
// CHECK: %[[ROW:.+]] = program.view %[[T]] {byte_offset = 768 : i64} : memref<4x64xf32> to memref<64xf32>
// CHECK: program.copy %[[ROW]] to
module {
  program.program @offset_views device(cpu) {
    %x = program.input 0 "x" : memref<4x64xf32>
    %y = program.output 0 "y" : memref<64xf32>
    %t = program.alloc : memref<4x64xf32>
    program.copy %x to %t : memref<4x64xf32> to memref<4x64xf32>
    %bottom = program.view %t {byte_offset = 512 : i64} : memref<4x64xf32> to memref<2x64xf32>
    %last = program.view %bottom {byte_offset = 256 : i64} : memref<2x64xf32> to memref<1x64xf32>
    %flat = program.view %last : memref<1x64xf32> to memref<64xf32>
    program.copy %flat to %y : memref<64xf32> to memref<64xf32>
  }
}
