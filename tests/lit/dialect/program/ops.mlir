// RUN: kiln-opt --split-input-file %s | FileCheck %s
// RUN: kiln-opt --split-input-file %s | kiln-opt --split-input-file | FileCheck %s

// Tests that a CPU program with every kind of buffer and step prints as it was written and
// reads back.
// CHECK-LABEL: program.program @main device(cpu)
// CHECK-NEXT: %[[X:.+]] = program.input 0 "image" {dim_symbols = ["batch", "features"]} : memref<2x8xf32>
// CHECK-NEXT: %[[W:.+]] = program.constant dense<{{.+}}> : tensor<8x4xf32> -> memref<8x4xf32>
// CHECK-NEXT: %[[Y:.+]] = program.output 0 "logits" : memref<2x4xf32>
// CHECK-NEXT: %[[T:.+]] = program.alloc : memref<2x4xf32>
// CHECK-NEXT: program.library_call "onednn.matmul" ins(%[[X]], %[[W]] : memref<2x8xf32>, memref<8x4xf32>) outs(%[[T]] : memref<2x4xf32>) params({post_ops = ["relu"], trans_b = false})
// CHECK-NEXT: program.dispatch @kernels::@dispatch_0 ins(%[[T]] : memref<2x4xf32>) outs(%[[Y]] : memref<2x4xf32>) {description = "exp", in_place = array<i64: 0, 0>}
// CHECK-NEXT: %[[V:.+]] = program.view %[[T]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT: %[[Z:.+]] = program.output 1 "flat" {declared_type = tensor<8xui32>} : memref<8xi32>
// CHECK-NEXT: program.copy %[[V]] to %[[Z]] {description = "output 1"} : memref<8xf32> to memref<8xi32>
module {
  program.program @main device(cpu) {
    %x = program.input 0 "image" {dim_symbols = ["batch", "features"]} : memref<2x8xf32>
    %w = program.constant dense<0.5> : tensor<8x4xf32> -> memref<8x4xf32>
    %y = program.output 0 "logits" : memref<2x4xf32>
    %t = program.alloc : memref<2x4xf32>
    program.library_call "onednn.matmul" ins(%x, %w : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({trans_b = false, post_ops = ["relu"]})
    program.dispatch @kernels::@dispatch_0 ins(%t : memref<2x4xf32>) outs(%y : memref<2x4xf32>) {description = "exp", in_place = array<i64: 0, 0>}
    %v = program.view %t : memref<2x4xf32> to memref<8xf32>
    %z = program.output 1 "flat" {declared_type = tensor<8xui32>} : memref<8xi32>
    program.copy %v to %z {description = "output 1"} : memref<8xf32> to memref<8xi32>
  }
  module @kernels {
    func.func private @dispatch_0(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {kiln.dispatch} {
      return %arg0 : tensor<2x4xf32>
    }
  }
}

// -----

// Tests that a planned CUDA program and its compiled executable (kernels with their launches
// and scratch buffers, a cubin and PTX) print as written and read back.
// CHECK-LABEL: program.program @main device(cuda) attributes {alignment = 256 : i64, arena_size = 512 : i64, naive_size = 768 : i64, peak_live_size = 512 : i64}
// CHECK: program.alloc {offset = 256 : i64} : memref<64xf32>
// CHECK: program.dispatch @kernels::@dispatch_0
// CHECK-LABEL: program.executable @kernels
// CHECK-NEXT: program.kernel @dispatch_0 {launches = [#program.cuda_launch<"dispatch_0_k0", block = 256, items = 64>, #program.cuda_launch<"dispatch_0_k1", block = 128, items = 1>], scratch = [memref<64xf32>]}
// CHECK-NEXT: program.binary "sm_80" cubin {data = "\7FELF", symbols = ["dispatch_0_k0", "dispatch_0_k1"]}
// CHECK-NEXT: program.binary "sm_80" ptx {data = ".version 8.0", symbols = ["dispatch_0_k0", "dispatch_0_k1"]}
module {
  program.program @main device(cuda) attributes {alignment = 256 : i64, arena_size = 512 : i64, naive_size = 768 : i64, peak_live_size = 512 : i64} {
    %x = program.input 0 "x" : memref<64xf32>
    %y = program.output 0 "y" : memref<64xf32>
    %s = program.alloc {offset = 0 : i64} : memref<64xf32>
    %t = program.alloc {offset = 256 : i64} : memref<64xf32>
    program.dispatch @kernels::@dispatch_0 ins(%x : memref<64xf32>) outs(%y, %s : memref<64xf32>, memref<64xf32>)
    program.dispatch @kernels::@dispatch_0 ins(%x : memref<64xf32>) outs(%t, %s : memref<64xf32>, memref<64xf32>)
  }
  program.executable @kernels {
    program.kernel @dispatch_0 {launches = [#program.cuda_launch<"dispatch_0_k0", block = 256, items = 64>, #program.cuda_launch<"dispatch_0_k1", block = 128, items = 1>], scratch = [memref<64xf32>]}
    program.binary "sm_80" cubin {data = "\7FELF", symbols = ["dispatch_0_k0", "dispatch_0_k1"]}
    program.binary "sm_80" ptx {data = ".version 8.0", symbols = ["dispatch_0_k0", "dispatch_0_k1"]}
  }
}
