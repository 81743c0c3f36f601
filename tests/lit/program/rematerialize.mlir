// RUN: kiln-opt --kiln-rematerialize="memory-limit=2048" --kiln-plan-memory --kiln-verify-memory-plan %s | FileCheck %s
// RUN: not kiln-opt --kiln-rematerialize="memory-limit=1024" --kiln-plan-memory %s 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: kiln-opt --kiln-rematerialize="memory-limit=0" --kiln-plan-memory %s | FileCheck %s --check-prefix=OFF

// Tests that a value live across the peak and cheap to recompute from an input is recomputed
// after it: %t0 (256 bytes) is read at the first and the last step, across two 1 KiB buffers.
// The clone copies the input again into a new allocation that the last step reads, which brings
// the arena from 2304 to 2048 bytes; the program records the limit and the arena without it.
// CHECK-LABEL: program.program @skip
// CHECK-SAME: arena_size = 2048 : i64
// CHECK-SAME: memory_limit = 2048 : i64
// CHECK-SAME: unlimited_arena_size = 2304 : i64
// CHECK: %[[X:.*]] = program.input 0 "x"
// CHECK: %[[Y:.*]] = program.output 0 "y"
// CHECK: program.copy %[[X]] to %[[T0:[0-9]+]] {description = "first"}
// CHECK-NEXT: program.copy %[[T0]] to %{{[0-9]+}} :
// CHECK-NEXT: program.copy
// CHECK-NEXT: program.copy
// CHECK-NEXT: program.copy
// CHECK-NEXT: %[[AGAIN:.*]] = program.alloc {{.*}}: memref<64xf32>
// CHECK-NEXT: program.copy %[[X]] to %[[AGAIN]] {description = "recomputed: copy first", recomputed}
// CHECK-NEXT: program.copy %[[AGAIN]] to %[[Y]] :
// OFF-LABEL: program.program @skip
// OFF-SAME: arena_size = 2304 : i64
// OFF-NOT: memory_limit
// OFF-NOT: recomputed
// Tests that a limit recomputation cannot reach is an error naming the limit, the best arena
// reached and the values live at the peak.
// TIGHT: error: the memory limit of 1.0 KiB (1024 bytes) cannot be met: the smallest arena reached is 2.0 KiB (2048 bytes; 2.2 KiB without the limit). At step 3 (copy) 2.0 KiB are live, and recomputing none of these lowers it: 1.0 KiB written by copy; 1.0 KiB written by copy;
program.program @skip device(cpu) {
  %x = program.input 0 "x" : memref<64xf32>
  %w = program.input 1 "w" : memref<256xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %z = program.output 1 "z" : memref<256xf32>
  %t0 = program.alloc : memref<64xf32>
  %t1 = program.alloc : memref<64xf32>
  %b1 = program.alloc : memref<256xf32>
  %b2 = program.alloc : memref<256xf32>
  program.copy %x to %t0 {description = "first"} : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %t1 : memref<64xf32> to memref<64xf32>
  program.copy %w to %b1 : memref<256xf32> to memref<256xf32>
  program.copy %b1 to %b2 : memref<256xf32> to memref<256xf32>
  program.copy %b2 to %z : memref<256xf32> to memref<256xf32>
  program.copy %t0 to %y : memref<64xf32> to memref<64xf32>
}
