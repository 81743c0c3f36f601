// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-generate-cuda-attention %s | FileCheck %s

// Tests that each f32 kiln.attention call of a CUDA program becomes a dispatch of a generated
// kernel, and that two calls with the same parameters and binding types (a model's layers) share
// it. Grouped-query attention (4 query heads, 2 key and value heads): 40 queries take two tiles
// of 32 rows per head (8 blocks of a warp); 40 keys two tiles of 32 (the second of 8, the keys
// past the last scoring -inf), each copied into shared memory (32 rows padded to 9 elements:
// 288) between barriers every thread reaches. Kᵀ's keys are contiguous, so its tile is copied
// along them (remainder by the 32 keys first); V's along its rows. Key and value head h / 2 is
// read for query head h. Each thread takes the tile's keys four at a time (a loop over 8
// groups): the four scores, their maximum with the running one (4 maximums), one rescale: 5
// exponentials (the correction and the 4 weights).
// The program's modeled bytes gain what each kernel moves (Q 5120, Kᵀ 2560, V 2560, the mask's
// 40 x 40 read for every head 6400, the result 5120: 21760 per call).
// CHECK-LABEL: program.program @two_layers device(cuda) attributes {modeled_kernel_bytes = 43520 : i64}
// CHECK: program.dispatch @kernels::@attention_0 ins(%{{.+}} : memref<1x4x40x8xf32>, memref<1x2x8x40xf32>, memref<1x2x40x8xf32>, memref<40x40xf32>) outs(%{{.+}} : memref<1x4x40x8xf32>) {description = "kiln.attention (layer 0)"}
// CHECK: program.dispatch @kernels::@attention_0 ins({{.+}}) outs({{.+}}) {description = "kiln.attention (layer 1)"}
// CHECK-NOT: program.library_call
// CHECK: module @kernels attributes {gpu.container_module}
// CHECK: gpu.func @attention_0(%{{.+}}: memref<1x4x40x8xf32>, %{{.+}}: memref<1x2x8x40xf32>, %{{.+}}: memref<1x2x40x8xf32>, %{{.+}}: memref<40x40xf32>, %{{.+}}: memref<1x4x40x8xf32>) workgroup(%[[SK:.+]] : memref<288xf32, #gpu.address_space<workgroup>>, %[[SV:.+]] : memref<288xf32, #gpu.address_space<workgroup>>) kernel
// CHECK: %[[BLOCK:.+]] = gpu.block_id x
// CHECK: %[[GRID:.+]] = gpu.grid_dim x
// CHECK: scf.for %{{.+}} = %[[BLOCK]] to %{{.+}} step %[[GRID]]
// CHECK: scf.for %{{.+}} iter_args({{.+}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK-NOT: arith.divui
// CHECK: arith.remui
// CHECK: memref.store %{{.+}}, %[[SK]]
// CHECK: scf.for
// CHECK-NOT: arith.remui
// CHECK: arith.divui
// CHECK: memref.store %{{.+}}, %[[SV]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK-COUNT-4: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK-COUNT-5: math.exp
// CHECK-NOT: math.exp
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: scf.if
// With zero_masked_rows, a row whose scores were all -inf (sum 0) is 0.
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: memref.store
// CHECK: gpu.return
// CHECK-NOT: gpu.func
// CHECK: func.func private @attention_0({{.+}}) attributes {kiln.cuda_launches = {{\[\[}}"attention_0", 32, 256]], kiln.dispatch}
module {
  program.program @two_layers device(cuda) {
    %q = program.input 0 "q" : memref<1x4x40x8xf32>
    %kt = program.input 1 "kt" : memref<1x2x8x40xf32>
    %v = program.input 2 "v" : memref<1x2x40x8xf32>
    %mask = program.input 3 "mask" : memref<40x40xf32>
    %o1 = program.output 0 "o1" : memref<1x4x40x8xf32>
    program.library_call "kiln.attention" ins(%q, %kt, %v, %mask : memref<1x4x40x8xf32>, memref<1x2x8x40xf32>, memref<1x2x40x8xf32>, memref<40x40xf32>) outs(%o1 : memref<1x4x40x8xf32>) params({dst_view = array<i64: 0, 1, 4, 40, 8, 1280, 320, 8, 1>, k_view = array<i64: 0, 1, 2, 8, 40, 640, 320, 40, 1>, kv_group = 2 : i64, mask_view = array<i64: 0, 1, 4, 40, 40, 0, 0, 40, 1>, q_view = array<i64: 0, 1, 4, 40, 8, 1280, 320, 8, 1>, scale = array<f32: 0.35>, v_view = array<i64: 0, 1, 2, 40, 8, 640, 320, 8, 1>, zero_masked_rows = array<i64: 1>}) {description = "kiln.attention (layer 0)"}
    %o2 = program.output 1 "o2" : memref<1x4x40x8xf32>
    program.library_call "kiln.attention" ins(%o1, %kt, %v, %mask : memref<1x4x40x8xf32>, memref<1x2x8x40xf32>, memref<1x2x40x8xf32>, memref<40x40xf32>) outs(%o2 : memref<1x4x40x8xf32>) params({dst_view = array<i64: 0, 1, 4, 40, 8, 1280, 320, 8, 1>, k_view = array<i64: 0, 1, 2, 8, 40, 640, 320, 40, 1>, kv_group = 2 : i64, mask_view = array<i64: 0, 1, 4, 40, 40, 0, 0, 40, 1>, q_view = array<i64: 0, 1, 4, 40, 8, 1280, 320, 8, 1>, scale = array<f32: 0.35>, v_view = array<i64: 0, 1, 2, 40, 8, 640, 320, 8, 1>, zero_masked_rows = array<i64: 1>}) {description = "kiln.attention (layer 1)"}
  }
  module @kernels {
  }
}

// -----

// Tests that a call without views (one over dynamic shapes, which selection does not plan on
// CUDA) is refused by name rather than generated wrong.
module {
  program.program @no_views device(cuda) {
    %q = program.input 0 "q" : memref<2x8x4xf32>
    %kt = program.input 1 "kt" : memref<2x4x8xf32>
    %v = program.input 2 "v" : memref<2x8x4xf32>
    %o = program.output 0 "o" : memref<2x8x4xf32>
    // expected-error @+1 {{kiln.attention on CUDA: the generated kernel reads its operands through views (static shapes); this call has none}}
    program.library_call "kiln.attention" ins(%q, %kt, %v : memref<2x8x4xf32>, memref<2x4x8xf32>, memref<2x8x4xf32>) outs(%o : memref<2x8x4xf32>) params({scale = array<f32: 0.5>})
  }
}

// -----

// Tests that a mask of one value (an ONNX FlexAttention's score modifier: every stride 0) is read
// as a row of one element.
// CHECK-LABEL: program.program @scalar_mask
// CHECK: program.dispatch @kernels::@attention_0
// CHECK: gpu.func @attention_0
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [1], strides: [1] : memref<f32> to memref<1xf32>
module {
  program.program @scalar_mask device(cuda) {
    %q = program.input 0 "q" : memref<1x2x3x4xf32>
    %kt = program.input 1 "kt" : memref<1x2x4x3xf32>
    %v = program.input 2 "v" : memref<1x2x3x4xf32>
    %bias = program.input 3 "bias" : memref<f32>
    %o = program.output 0 "o" : memref<1x2x3x4xf32>
    program.library_call "kiln.attention" ins(%q, %kt, %v, %bias : memref<1x2x3x4xf32>, memref<1x2x4x3xf32>, memref<1x2x3x4xf32>, memref<f32>) outs(%o : memref<1x2x3x4xf32>) params({dst_view = array<i64: 0, 1, 2, 3, 4, 24, 12, 4, 1>, k_view = array<i64: 0, 1, 2, 4, 3, 24, 12, 3, 1>, mask_view = array<i64: 0, 1, 2, 3, 3, 0, 0, 0, 0>, q_view = array<i64: 0, 1, 2, 3, 4, 24, 12, 4, 1>, scale = array<f32: 0.5>, v_view = array<i64: 0, 1, 2, 3, 4, 24, 12, 4, 1>})
  }
  module @kernels {
  }
}

// -----

// Tests that a CPU program's kiln.attention stays the runtime's library call.
// CHECK-LABEL: program.program @on_the_cpu
// CHECK: program.library_call "kiln.attention"
module {
  program.program @on_the_cpu device(cpu) {
    %q = program.input 0 "q" : memref<2x8x4xf32>
    %kt = program.input 1 "kt" : memref<2x4x8xf32>
    %v = program.input 2 "v" : memref<2x8x4xf32>
    %o = program.output 0 "o" : memref<2x8x4xf32>
    program.library_call "kiln.attention" ins(%q, %kt, %v : memref<2x8x4xf32>, memref<2x4x8xf32>, memref<2x8x4xf32>) outs(%o : memref<2x8x4xf32>) params({dst_view = array<i64: 0, 2, 8, 4, 32, 4, 1>, k_view = array<i64: 0, 2, 4, 8, 32, 8, 1>, q_view = array<i64: 0, 2, 8, 4, 32, 4, 1>, scale = array<f32: 0.5>, v_view = array<i64: 0, 2, 8, 4, 32, 4, 1>})
  }
}
