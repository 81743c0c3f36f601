// RUN: not kiln-opt --kiln-rematerialize="memory-limit=2048" %s 2>&1 | FileCheck %s
// Tests that a value is not recomputed from an input overwritten in between: %t1 is a copy of
// %t0, which the third step writes again, so %t1 stays and the limit is an error naming it.
// CHECK: error: the memory limit of 2.0 KiB (2048 bytes) cannot be met: the smallest arena reached is 2.2 KiB (2304 bytes; 2.2 KiB without the limit). At step 4 (copy) 2.2 KiB are live, and recomputing none of these lowers it: 1.0 KiB written by copy; 1.0 KiB written by copy; 256 B written by copy second;
program.program @overwritten device(cpu) {
  %x = program.input 0 "x" : memref<64xf32>
  %w = program.input 1 "w" : memref<256xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %z = program.output 1 "z" : memref<256xf32>
  %t0 = program.alloc : memref<64xf32>
  %t1 = program.alloc : memref<64xf32>
  %b1 = program.alloc : memref<256xf32>
  %b2 = program.alloc : memref<256xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %t1 {description = "second"} : memref<64xf32> to memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %w to %b1 : memref<256xf32> to memref<256xf32>
  program.copy %b1 to %b2 : memref<256xf32> to memref<256xf32>
  program.copy %b2 to %z : memref<256xf32> to memref<256xf32>
  program.copy %t1 to %y : memref<64xf32> to memref<64xf32>
}
