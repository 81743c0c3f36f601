// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-verify-memory-plan %s | FileCheck %s

// Tests that a plan where only buffers live at different steps share bytes passes unchanged.
// CHECK-LABEL: program.program @sound
// CHECK-COUNT-3: program.alloc
program.program @sound device(cpu) attributes {alignment = 64 : i64, arena_size = 512 : i64} {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %t0 = program.alloc {offset = 0 : i64} : memref<64xf32>
  %t1 = program.alloc {offset = 256 : i64} : memref<64xf32>
  %t2 = program.alloc {offset = 0 : i64} : memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %t1 : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %t2 : memref<64xf32> to memref<64xf32>
  program.copy %t2 to %y : memref<64xf32> to memref<64xf32>
}

// -----

// Tests that two allocations live at the same step (the second copy reads one and writes the
// other) may not overlap, even by part of their bytes.
program.program @overlap device(cpu) attributes {alignment = 64 : i64, arena_size = 512 : i64} {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  // expected-error @+1 {{shares bytes [128, 256) with another allocation while both are live (steps 0-1 and 1-2)}}
  %t0 = program.alloc {offset = 0 : i64} : memref<64xf32>
  // expected-note @+1 {{the other allocation}}
  %t1 = program.alloc {offset = 128 : i64} : memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %t1 : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %y : memref<64xf32> to memref<64xf32>
}

// -----

// Tests that a view read late counts as a use of the buffer it views: the first allocation is
// still live at the last step, where the third is written over it.
program.program @view_use device(cpu) attributes {alignment = 64 : i64, arena_size = 512 : i64} {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %z = program.output 1 "z" : memref<64xf32>
  // expected-error @+1 {{shares bytes [0, 256) with another allocation while both are live (steps 0-3 and 2-4)}}
  %t0 = program.alloc {offset = 0 : i64} : memref<64xf32>
  %t1 = program.alloc {offset = 256 : i64} : memref<64xf32>
  // expected-note @+1 {{the other allocation}}
  %t2 = program.alloc {offset = 0 : i64} : memref<64xf32>
  %v = program.view %t0 : memref<64xf32> to memref<8x8xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %t1 : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %t2 : memref<64xf32> to memref<64xf32>
  program.copy %v to %z : memref<8x8xf32> to memref<64xf32>
  program.copy %t2 to %y : memref<64xf32> to memref<64xf32>
}

// -----

// Tests that an output written over its input by an in_place pair at the input's last step is
// accepted.
// CHECK-LABEL: program.program @in_place
module {
  program.program @in_place device(cpu) attributes {alignment = 64 : i64, arena_size = 256 : i64} {
    %x = program.input 0 "x" : memref<64xf32>
    %y = program.output 0 "y" : memref<64xf32>
    %t0 = program.alloc {offset = 0 : i64} : memref<64xf32>
    %t1 = program.alloc {offset = 0 : i64} : memref<64xf32>
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

// Tests that the same sharing without the in_place pair is refused.
module {
  program.program @not_in_place device(cpu) attributes {alignment = 64 : i64, arena_size = 256 : i64} {
    %x = program.input 0 "x" : memref<64xf32>
    %y = program.output 0 "y" : memref<64xf32>
    // expected-error @+1 {{shares bytes [0, 256) with another allocation while both are live (steps 0-1 and 1-2)}}
    %t0 = program.alloc {offset = 0 : i64} : memref<64xf32>
    // expected-note @+1 {{the other allocation}}
    %t1 = program.alloc {offset = 0 : i64} : memref<64xf32>
    program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
    program.dispatch @kernels::@relu ins(%t0 : memref<64xf32>) outs(%t1 : memref<64xf32>)
    program.copy %t1 to %y : memref<64xf32> to memref<64xf32>
  }
  module @kernels {
    func.func private @relu(%a: tensor<64xf32>) -> tensor<64xf32> attributes {kiln.dispatch} {
      return %a : tensor<64xf32>
    }
  }
}

// -----

// Tests that a program without a plan is an error, not a vacuous pass.
// expected-error @+1 {{has no memory plan to verify (run kiln-plan-memory)}}
program.program @unplanned device(cpu) {
  %t = program.alloc : memref<4xf32>
}

// -----

// Tests that steps on different streams that nothing orders count as running at once: %t0 and
// %t1 are used at steps 0-1 and 2-3, which never meet in step order, yet the two streams run them
// concurrently, so they may not share bytes.
program.program @streams device(cuda) attributes {alignment = 64 : i64, arena_size = 256 : i64} {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %z = program.output 1 "z" : memref<64xf32>
  // expected-error @+1 {{shares bytes [0, 256) with another allocation while both are live (steps 0-1 and 2-3)}}
  %t0 = program.alloc {offset = 0 : i64} : memref<64xf32>
  // expected-note @+1 {{the other allocation}}
  %t1 = program.alloc {offset = 0 : i64} : memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %y : memref<64xf32> to memref<64xf32>
  program.copy %x to %t1 {stream = 1 : i64} : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %z {stream = 1 : i64} : memref<64xf32> to memref<64xf32>
}

// -----

// Tests that a join orders the streams: stream 1's copy reads what stream 0 wrote into %t0, so
// it runs after both of stream 0's steps, and %t1, used only after it, may take %t0's bytes.
// CHECK-LABEL: program.program @joined_streams
program.program @joined_streams device(cuda) attributes {alignment = 64 : i64, arena_size = 256 : i64} {
  %x = program.input 0 "x" : memref<64xf32>
  %y = program.output 0 "y" : memref<64xf32>
  %z = program.output 1 "z" : memref<64xf32>
  %t0 = program.alloc {offset = 0 : i64} : memref<64xf32>
  %t1 = program.alloc {offset = 0 : i64} : memref<64xf32>
  program.copy %x to %t0 : memref<64xf32> to memref<64xf32>
  program.copy %t0 to %y : memref<64xf32> to memref<64xf32>
  program.copy %y to %t1 {stream = 1 : i64} : memref<64xf32> to memref<64xf32>
  program.copy %t1 to %z {stream = 1 : i64} : memref<64xf32> to memref<64xf32>
}
