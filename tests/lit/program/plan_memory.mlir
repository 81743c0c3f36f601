// RUN: kiln-opt --split-input-file --kiln-plan-memory %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-plan-memory="in-place=false" %s | FileCheck %s --check-prefix=APART
// RUN: kiln-opt --split-input-file --kiln-plan-memory --kiln-verify-memory-plan %s > /dev/null

// Tests that allocations whose live ranges do not meet share bytes: in a chain of copies, the
// first and the third intermediate take the same offset, the second its own; the program records
// the arena, the sum of the allocations and the most bytes live at once.
// CHECK-LABEL: program.program @chain
// CHECK-SAME: alignment = 64 : i64, arena_size = 512 : i64, naive_size = 768 : i64, peak_live_size = 512 : i64
// CHECK: program.alloc {offset = [[A:[0-9]+]] : i64} : memref<64xf32>
// CHECK-NEXT: program.alloc {offset = [[B:[0-9]+]] : i64} : memref<64xf32>
// CHECK-NEXT: program.alloc {offset = [[A]] : i64} : memref<64xf32>
program.program @chain device(cpu) {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %t0 = program.alloc : memref<64xf32>
  %t1 = program.alloc : memref<64xf32>
  %t2 = program.alloc : memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %t1 : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %t2 : memref<64xf32> to memref<64xf32>
  program.copy %t2 to %y : memref<64xf32> to memref<64xf32>
}

// -----

// Tests that a view read late keeps the buffer it views alive: the first intermediate, read
// through a view at the last step, cannot share bytes with the third.
// CHECK-LABEL: program.program @view_keeps_alive
// CHECK-SAME: arena_size = 768 : i64
// CHECK: program.alloc {offset = [[A:[0-9]+]] : i64} : memref<64xf32>
// CHECK-NEXT: program.alloc {offset = [[B:[0-9]+]] : i64} : memref<64xf32>
// CHECK-NEXT: program.alloc {offset = [[C:[0-9]+]] : i64} : memref<64xf32>
program.program @view_keeps_alive device(cpu) {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %z = program.output 1 "z" : memref<8x8xf32>
  %t0 = program.alloc : memref<64xf32>
  %t1 = program.alloc : memref<64xf32>
  %t2 = program.alloc : memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  %v = program.view %t0 : memref<64xf32> to memref<8x8xf32>
  program.copy %t0 to %t1 : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %t2 : memref<64xf32> to memref<64xf32>
  program.copy %t2 to %y : memref<64xf32> to memref<64xf32>
  program.copy %v to %z : memref<8x8xf32> to memref<8x8xf32>
}

// -----

// Tests that sizes are rounded up to the alignment: three floats take 64 bytes.
// CHECK-LABEL: program.program @alignment
// CHECK-SAME: arena_size = 128 : i64, naive_size = 128 : i64, peak_live_size = 128 : i64
program.program @alignment device(cpu) {
  %x = program.input 0 "x" : memref<3xf32>
  %y = program.output 0 "y" : memref<3xf32>
  %t0 = program.alloc : memref<3xf32>
  %t1 = program.alloc : memref<3xf32>
  program.copy %x to %t0 : memref<3xf32> to memref<3xf32>
  program.copy %t0 to %t1 : memref<3xf32> to memref<3xf32>
  program.copy %t1 to %y : memref<3xf32> to memref<3xf32>
}

// -----

// Tests in-place reuse: an elementwise dispatch at its input's last use writes its output over
// the input (same offset, one buffer's bytes); with in-place off, the two are apart.
// CHECK-LABEL: program.program @in_place
// CHECK-SAME: arena_size = 256 : i64, naive_size = 512 : i64, peak_live_size = 256 : i64
// CHECK: program.alloc {offset = [[A:[0-9]+]] : i64}
// CHECK-NEXT: program.alloc {offset = [[A]] : i64}
// APART-LABEL: program.program @in_place
// APART-SAME: arena_size = 512 : i64
module {
  program.program @in_place device(cpu) {
    %x = program.input 0 "x" : memref<64xf32>
    %y = program.output 0 "y" : memref<64xf32>
    %t0 = program.alloc : memref<64xf32>
    %t1 = program.alloc : memref<64xf32>
    program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
    program.dispatch @kernels::@relu ins(%t0 : memref<64xf32>) outs(%t1 : memref<64xf32>) {in_place = array<i64: 0, 0>}
    program.copy %t1 to %y : memref<64xf32> to memref<64xf32>
  }
  module @kernels {
    func.func private @relu(%a: tensor<64xf32>) -> tensor<64xf32> attributes {kiln.dispatch} {
      return %a : tensor<64xf32>
    }
  }
}

// -----

// Tests that an input read again after the dispatch keeps its bytes: the output goes elsewhere.
// CHECK-LABEL: program.program @input_read_later
// CHECK-SAME: arena_size = 512 : i64
module {
  program.program @input_read_later device(cpu) {
    %x = program.input 0 "x" : memref<64xf32>
    %y = program.output 0 "y" : memref<64xf32>
    %z = program.output 1 "z" : memref<64xf32>
    %t0 = program.alloc : memref<64xf32>
    %t1 = program.alloc : memref<64xf32>
    program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
    program.dispatch @kernels::@relu ins(%t0 : memref<64xf32>) outs(%t1 : memref<64xf32>) {in_place = array<i64: 0, 0>}
    program.copy %t0 to %z : memref<64xf32> to memref<64xf32>
    program.copy %t1 to %y : memref<64xf32> to memref<64xf32>
  }
  module @kernels {
    func.func private @relu(%a: tensor<64xf32>) -> tensor<64xf32> attributes {kiln.dispatch} {
      return %a : tensor<64xf32>
    }
  }
}

// -----

// Tests that buffers used on different streams never share bytes while their steps may run at
// once: in step order %t0 (steps 0-1) and %t1 (written at step 2) would share an offset, but
// stream 1's step depends on nothing of stream 0's. Step 3 joins the streams (it reads %t1 on
// stream 0); after it, %t2 reuses %t0's bytes: every step that used %t0 is ordered before it.
// CHECK-LABEL: program.program @streams
// CHECK-SAME: arena_size = 512 : i64
// CHECK: program.alloc {offset = [[A:[0-9]+]] : i64} : memref<64xf32>
// CHECK-NEXT: program.alloc {offset = [[B:[0-9]+]] : i64} : memref<64xf32>
// CHECK-NEXT: program.alloc {offset = [[A]] : i64} : memref<64xf32>
// APART-LABEL: program.program @streams
// APART-SAME: arena_size = 512 : i64
program.program @streams device(cuda) {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %t0 = program.alloc : memref<64xf32>
  %t1 = program.alloc : memref<64xf32>
  %t2 = program.alloc : memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %y : memref<64xf32> to memref<64xf32>
  program.copy %x to %t1 {stream = 1 : i64} : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %t2 : memref<64xf32> to memref<64xf32>
  program.copy %t2 to %y : memref<64xf32> to memref<64xf32>
}

// -----

// Tests that a library call's in_place pair lets its result take its addend's bytes at the
// addend's last use (a convolution's residual sum): with %hold live throughout, the arena holds
// two buffers instead of three.
// CHECK-LABEL: program.program @sum_in_place
// CHECK-SAME: arena_size = 2048 : i64
// CHECK: program.alloc {offset = [[H:[0-9]+]] : i64} : memref<1x4x8x8xf32>
// CHECK-NEXT: program.alloc {offset = [[A:[0-9]+]] : i64} : memref<1x4x8x8xf32>
// CHECK-NEXT: program.alloc {offset = [[A]] : i64} : memref<1x4x8x8xf32>
// APART-LABEL: program.program @sum_in_place
// APART-SAME: arena_size = 3072 : i64
program.program @sum_in_place device(cpu) {
  %x = program.input 0 "x" : memref<1x4x8x8xf32>
  %y = program.output 0 "y" : memref<1x4x8x8xf32>
  %z = program.output 1 "z" : memref<1x4x8x8xf32>
  %w = program.constant dense<0.25> : tensor<4x4x1x1xf32> -> memref<4x4x1x1xf32>
  %hold = program.alloc : memref<1x4x8x8xf32>
  %skip = program.alloc : memref<1x4x8x8xf32>
  %sum = program.alloc : memref<1x4x8x8xf32>
  program.copy %x to %hold : memref<1x4x8x8xf32> to memref<1x4x8x8xf32>
  program.copy %x to %skip : memref<1x4x8x8xf32> to memref<1x4x8x8xf32>
  program.library_call "onednn.convolution" ins(%x, %w, %skip : memref<1x4x8x8xf32>, memref<4x4x1x1xf32>, memref<1x4x8x8xf32>) outs(%sum : memref<1x4x8x8xf32>) params({strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>, groups = 1 : i64, post_ops = ["add"]}) {in_place = array<i64: 2, 0>}
  program.copy %sum to %y : memref<1x4x8x8xf32> to memref<1x4x8x8xf32>
  program.copy %hold to %z : memref<1x4x8x8xf32> to memref<1x4x8x8xf32>
}
