// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-outline-cuda-kernels %s | FileCheck %s

// The inputs are bufferized dispatch functions after convert-linalg-to-parallel-loops.

// Tests that an elementwise nest whose innermost loop runs along contiguous rows is one
// grid-stride kernel over 64 x 256 / 4 points, each thread moving 16-byte vectors: loads along
// the row become vector.load, the bias (indexed by the innermost loop only) too, arithmetic and
// math act on vector<4xf32>, and the store is a vector.store; every access is 16-byte aligned.
// The function keeps its signature, loses its body and lists its launch.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: func.func private @dispatch_0(memref<64x256xf32>, memref<256xf32>, memref<64x256xf32>)
// CHECK-SAME: kiln.cuda_launches = {{\[}}["dispatch_0_0", 256, 4096]]
// CHECK: gpu.module @kiln_kernels
// CHECK: gpu.func @dispatch_0_0(%[[X:.+]]: memref<64x256xf32>, %[[B:.+]]: memref<256xf32>, %[[OUT:.+]]: memref<64x256xf32>) kernel
// CHECK-DAG: %[[TID:.+]] = gpu.thread_id x
// CHECK-DAG: %[[BID:.+]] = gpu.block_id x
// CHECK-DAG: %[[BDIM:.+]] = gpu.block_dim x
// CHECK-DAG: %[[GDIM:.+]] = gpu.grid_dim x
// CHECK: %[[BASE:.+]] = arith.muli %[[BID]], %[[BDIM]]
// CHECK: %[[FIRST:.+]] = arith.addi %[[BASE]], %[[TID]]
// CHECK: %[[STRIDE:.+]] = arith.muli %[[GDIM]], %[[BDIM]]
// CHECK: %[[N:.+]] = arith.constant 4096 : index
// CHECK: scf.for %[[I:.+]] = %[[FIRST]] to %[[N]] step %[[STRIDE]]
// CHECK: %[[V:.+]] = vector.load %[[X]][%{{.+}}, %[[COL:.+]]] {alignment = 16 : i64} : memref<64x256xf32>, vector<4xf32>
// CHECK: %[[W:.+]] = vector.load %[[B]][%[[COL]]] {alignment = 16 : i64} : memref<256xf32>, vector<4xf32>
// CHECK: %[[S:.+]] = arith.addf %[[V]], %[[W]] : vector<4xf32>
// CHECK: %[[T:.+]] = math.tanh %[[S]] : vector<4xf32>
// CHECK: vector.store %[[T]], %[[OUT]][%{{.+}}, %[[COL]]] {alignment = 16 : i64}
// CHECK: gpu.return
func.func private @dispatch_0(%x: memref<64x256xf32>, %b: memref<256xf32>, %out: memref<64x256xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c256) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<64x256xf32>
    %w = memref.load %b[%j] : memref<256xf32>
    %s = arith.addf %v, %w : f32
    %t = math.tanh %s : f32
    memref.store %t, %out[%i, %j] : memref<64x256xf32>
    scf.reduce
  }
  return
}

// -----

// Tests that f16 data moves 8 elements (16 bytes) per access, and that a per-row value (uniform
// along the innermost loop) is loaded as a scalar and broadcast.
// CHECK-LABEL: func.func private @dispatch_half
// CHECK-SAME: kiln.cuda_launches = {{\[}}["dispatch_half_0", 256, 512]]
// CHECK: gpu.func @dispatch_half_0
// CHECK: %[[ROW:.+]] = memref.load %{{.+}}[%{{.+}}] : memref<32xf16>
// CHECK: %[[V:.+]] = vector.load %{{.+}} {alignment = 16 : i64} : memref<32x128xf16>, vector<8xf16>
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[ROW]] : f16 to vector<8xf16>
// CHECK: arith.mulf %[[V]], %[[SPLAT]] : vector<8xf16>
func.func private @dispatch_half(%x: memref<32x128xf16>, %scale: memref<32xf16>, %out: memref<32x128xf16>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c32, %c128) step (%c1, %c1) {
    %s = memref.load %scale[%i] : memref<32xf16>
    %v = memref.load %x[%i, %j] : memref<32x128xf16>
    %p = arith.mulf %v, %s : f16
    memref.store %p, %out[%i, %j] : memref<32x128xf16>
    scf.reduce
  }
  return
}

// -----

// Tests that a row reduction is two kernels launched in order (the init, then one thread per
// row looping over the reduced dimension), that a row of 5 elements is not vectorized, and that a
// small kernel gets a block of whole warps no larger than its work.
// CHECK-LABEL: func.func private @dispatch_reduce
// CHECK-SAME: kiln.cuda_launches = {{\[}}["dispatch_reduce_0", 32, 6], ["dispatch_reduce_1", 32, 6]]
// CHECK: gpu.func @dispatch_reduce_0
// CHECK: scf.for
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<6xf32>
// CHECK: gpu.func @dispatch_reduce_1
// CHECK: scf.for %[[P:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK: memref.load %{{.+}} : memref<6x5xf32>
// CHECK-NOT: vector
// CHECK: gpu.return
func.func private @dispatch_reduce(%x: memref<6x5xf32>, %out: memref<6xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    memref.store %zero, %out[%i] : memref<6xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    scf.for %j = %c0 to %c5 step %c1 {
      %v = memref.load %x[%i, %j] : memref<6x5xf32>
      %a = memref.load %out[%i] : memref<6xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %out[%i] : memref<6xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Tests that a loop nest without parallel loops (a full reduction) runs on one thread of a
// one-thread block, guarded by the global thread index.
// CHECK-LABEL: func.func private @dispatch_scalar
// CHECK-SAME: kiln.cuda_launches = {{\[}}["dispatch_scalar_0", 1, 1]]
// CHECK: gpu.func @dispatch_scalar_0
// CHECK: %[[FIRST:.+]] = arith.addi
// CHECK: %[[IS0:.+]] = arith.cmpi eq, %[[FIRST]], %{{.+}} : index
// CHECK: scf.if %[[IS0]]
// CHECK: scf.for
func.func private @dispatch_scalar(%x: memref<16xf32>, %out: memref<f32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %x[%j] : memref<16xf32>
    %a = memref.load %out[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// -----

// Tests that a temporary buffer becomes a trailing scratch argument of the function and of every
// kernel (listed in kiln.cuda_scratch), that the phase writing it and the phase reading it are
// separate kernels, and that a view of an argument is cloned into the kernel that reads it.
// CHECK-LABEL: func.func private @dispatch_pad
// CHECK-SAME: (memref<4x4xf32>, memref<2x6x6xf32>, memref<6x6xf32>)
// CHECK-SAME: kiln.cuda_launches = {{\[}}["dispatch_pad_0", 64, 36], ["dispatch_pad_1", 32, 16], ["dispatch_pad_2", 96, 72]]
// CHECK-SAME: kiln.cuda_scratch = [memref<6x6xf32>]
// CHECK: gpu.func @dispatch_pad_0(%{{.+}}: memref<4x4xf32>, %{{.+}}: memref<2x6x6xf32>, %[[TMP:.+]]: memref<6x6xf32>) kernel
// CHECK: memref.store %{{.+}}, %[[TMP]]
// CHECK: gpu.func @dispatch_pad_1(%[[X:.+]]: memref<4x4xf32>, %{{.+}}: memref<2x6x6xf32>, %[[TMP1:.+]]: memref<6x6xf32>) kernel
// CHECK: %[[INNER:.+]] = memref.subview %[[TMP1]][1, 1] [4, 4] [1, 1]
// CHECK: memref.store %{{.+}}, %[[INNER]]
// CHECK: gpu.func @dispatch_pad_2
func.func private @dispatch_pad(%x: memref<4x4xf32>, %out: memref<2x6x6xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %tmp = memref.alloc() : memref<6x6xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c6, %c6) step (%c1, %c1) {
    memref.store %zero, %tmp[%i, %j] : memref<6x6xf32>
    scf.reduce
  }
  %inner = memref.subview %tmp[1, 1] [4, 4] [1, 1] : memref<6x6xf32> to memref<4x4xf32, strided<[6, 1], offset: 7>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x4xf32>
    memref.store %v, %inner[%i, %j] : memref<4x4xf32, strided<[6, 1], offset: 7>>
    scf.reduce
  }
  scf.parallel (%k, %i, %j) = (%c0, %c0, %c0) to (%c2, %c6, %c6) step (%c1, %c1, %c1) {
    %v = memref.load %tmp[%i, %j] : memref<6x6xf32>
    memref.store %v, %out[%k, %i, %j] : memref<2x6x6xf32>
    scf.reduce
  }
  memref.dealloc %tmp : memref<6x6xf32>
  return
}

// -----

// Tests that a reduction along contiguous rows (a softmax denominator: sum of exp) keeps one
// thread per row but reads the row 16 bytes at a time: the first chunk starts a vector of partial
// sums, a loop adds the others, vector.reduction folds them, and the accumulator is read, combined
// and written once.
// CHECK-LABEL: func.func private @dispatch_rowsum
// CHECK-SAME: kiln.cuda_launches = {{\[}}["dispatch_rowsum_0", 32, 6]]
// CHECK: gpu.func @dispatch_rowsum_0(%[[X:.+]]: memref<6x256xf32>, %[[OUT:.+]]: memref<6xf32>)
// CHECK: scf.for %[[P:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[FIRST:.+]] = vector.load %[[X]][%[[ROW:.+]], %{{.+}}] {alignment = 16 : i64} : memref<6x256xf32>, vector<4xf32>
// CHECK: %[[E0:.+]] = math.exp %[[FIRST]] : vector<4xf32>
// CHECK: %[[PARTIAL:.+]] = scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[E0]]) -> (vector<4xf32>)
// CHECK: %[[V:.+]] = vector.load %[[X]][%[[ROW]], %[[R]]] {alignment = 16 : i64}
// CHECK: %[[E:.+]] = math.exp %[[V]] : vector<4xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[ACC]], %[[E]] : vector<4xf32>
// CHECK: scf.yield %[[SUM]]
// CHECK: %[[TOTAL:.+]] = vector.reduction <add>, %[[PARTIAL]] : vector<4xf32> into f32
// CHECK: %[[OLD:.+]] = memref.load %[[OUT]][%[[ROW]]]
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]], %[[TOTAL]] : f32
// CHECK: memref.store %[[NEW]], %[[OUT]][%[[ROW]]]
func.func private @dispatch_rowsum(%x: memref<6x256xf32>, %out: memref<6xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      %v = memref.load %x[%i, %j] : memref<6x256xf32>
      %e = math.exp %v : f32
      %a = memref.load %out[%i] : memref<6xf32>
      %s = arith.addf %a, %e : f32
      memref.store %s, %out[%i] : memref<6xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Tests that a row max over a row the vector width does not divide stays a scalar loop.
// CHECK-LABEL: func.func private @dispatch_rowmax
// CHECK: gpu.func @dispatch_rowmax_0
// CHECK-NOT: vector.
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
// CHECK: gpu.return
func.func private @dispatch_rowmax(%x: memref<6x10xf32>, %out: memref<6xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c10 = arith.constant 10 : index
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    scf.for %j = %c0 to %c10 step %c1 {
      %v = memref.load %x[%i, %j] : memref<6x10xf32>
      %a = memref.load %out[%i] : memref<6xf32>
      %m = arith.maximumf %a, %v : f32
      memref.store %m, %out[%i] : memref<6xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Tests that a buffer a sequential loop makes afresh in each iteration (top-k's selection of one
// pick) becomes one scratch argument for all iterations, which the one thread running the loop
// writes and reads; no allocation is left in the kernel.
// CHECK-LABEL: func.func private @dispatch_picks
// CHECK-SAME: (memref<2x5xf32>, memref<2x3xf32>, memref<2xf32>)
// CHECK-SAME: kiln.cuda_launches = {{\[}}["dispatch_picks_0", 1, 1]]
// CHECK-SAME: kiln.cuda_scratch = [memref<2xf32>]
// CHECK: gpu.func @dispatch_picks_0(%{{.+}}: memref<2x5xf32>, %{{.+}}: memref<2x3xf32>, %[[PICK:.+]]: memref<2xf32>) kernel
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: memref.store %{{.+}}, %[[PICK]]
// CHECK: memref.load %[[PICK]]
// CHECK: gpu.return
func.func private @dispatch_picks(%x: memref<2x5xf32>, %out: memref<2x3xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  scf.for %k = %c0 to %c3 step %c1 {
    %pick = memref.alloc() : memref<2xf32>
    scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
      %v = memref.load %x[%i, %k] : memref<2x5xf32>
      memref.store %v, %pick[%i] : memref<2xf32>
      scf.reduce
    }
    scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
      %v = memref.load %pick[%i] : memref<2xf32>
      memref.store %v, %out[%i, %k] : memref<2x3xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Tests that a buffer made per point of a parallel loop is refused: the points run on different
// threads at once, and one scratch binding would be shared by all of them.
func.func private @dispatch_per_point(%x: memref<8x4xf32>, %out: memref<8x4xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    // expected-error @+1 {{a CUDA kernel needs a temporary buffer of type 'memref<4xf32>' that is neither a statically shaped top-level allocation nor one a sequential loop makes afresh in each iteration}}
    %row = memref.alloc() : memref<4xf32>
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x4xf32>
      memref.store %v, %row[%j] : memref<4xf32>
    }
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %row[%j] : memref<4xf32>
      memref.store %v, %out[%i, %j] : memref<8x4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Tests that a buffer an iteration hands to the next (yielded through the loop) is refused: one
// binding for both would have the iteration overwrite what it reads.
func.func private @dispatch_carried(%out: memref<4xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %init = memref.alloc() : memref<4xf32>
  %last = scf.for %k = %c0 to %c3 step %c1 iter_args(%previous = %init) -> (memref<4xf32>) {
    // expected-error @+1 {{a CUDA kernel needs a temporary buffer of type 'memref<4xf32>' that is neither}}
    %next = memref.alloc() : memref<4xf32>
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %previous[%j] : memref<4xf32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %next[%j] : memref<4xf32>
    }
    scf.yield %next : memref<4xf32>
  }
  scf.for %j = %c0 to %c4 step %c1 {
    %v = memref.load %last[%j] : memref<4xf32>
    memref.store %v, %out[%j] : memref<4xf32>
  }
  return
}

// -----

// Tests that a fused group split into rows (an scf.forall over 8 rows, from kiln-tile-dispatches'
// row tiles) becomes one row kernel: each warp takes whole rows (8 rows x 32 lanes = 256
// threads), the row's private value (the sum, a buffer the row allocates) is an alloca every lane
// holds, the sum's loop is shared by the lanes (lane, lane + 32, ...) and its partial values
// combined with five butterfly shuffles, its fill run by every lane, and the division's points
// taken by the lanes in turn.
// CHECK-LABEL: func.func private @row_group
// CHECK-SAME: kiln.cuda_launches = {{\[}}["row_group_0", 256, 256]]
// CHECK: gpu.func @row_group_0(%[[X:.+]]: memref<8x128xf32>, %[[OUT:.+]]: memref<8x128xf32>) kernel
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[LANE:.+]] = arith.remui %[[TID]], %[[C32:.+]] : index
// CHECK: %[[WARP:.+]] = arith.divui %{{.+}}, %[[C32]] : index
// CHECK: %[[WARPS:.+]] = arith.divui %{{.+}}, %[[C32]] : index
// CHECK: scf.for %[[ROW:.+]] = %[[WARP]] to %{{.+}} step %[[WARPS]]
// CHECK: %[[SUM:.+]] = memref.alloca() : memref<1xf32>
// CHECK: memref.store %{{.+}}, %[[SUM]]
// CHECK: %[[PARTIAL:.+]]:2 = scf.for %{{.+}} = %[[LANE]] to %{{.+}} step %{{.+}} iter_args
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK: memref.load %[[SUM]]
// CHECK: memref.store %{{.+}}, %[[SUM]]
// CHECK: scf.for %[[P:.+]] = %[[LANE]] to %{{.+}} step %{{.+}} {
// CHECK: arith.divf
// CHECK: memref.store %{{.+}}, %[[OUT]]
func.func private @row_group(%x: memref<8x128xf32>, %out: memref<8x128xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%row) in (8) {
    %sum = memref.alloc() : memref<1xf32>
    memref.store %zero, %sum[%c0] : memref<1xf32>
    scf.for %k = %c0 to %c128 step %c1 {
      %v = memref.load %x[%row, %k] : memref<8x128xf32>
      %e = math.exp %v : f32
      %acc = memref.load %sum[%c0] : memref<1xf32>
      %s = arith.addf %e, %acc : f32
      memref.store %s, %sum[%c0] : memref<1xf32>
    }
    scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
      %v = memref.load %x[%row, %j] : memref<8x128xf32>
      %e = math.exp %v : f32
      %t = memref.load %sum[%c0] : memref<1xf32>
      %q = arith.divf %e, %t : f32
      memref.store %q, %out[%row, %j] : memref<8x128xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Tests that rows longer than block-row-length (1024) take a block each (8 rows x 256 lanes):
// the lanes stride the row by 256, a reduction's partial values go through five warp shuffles,
// then each warp's first lane leaves its warp's value in shared memory and, after a barrier, every
// lane folds the eight warps' values in order (a second barrier before the next row writes them
// again); the shared arrays are 16-byte aligned, as the vector loads NVPTX makes of them need. The row's sum is an output (a buffer the warps share): its first lane writes it, and
// the other lanes read it only after a barrier.
// CHECK-LABEL: func.func private @long_rows
// CHECK-SAME: kiln.cuda_launches = {{\[}}["long_rows_0", 256, 2048]]
// CHECK: gpu.func @long_rows_0(%{{.+}}: memref<8x2048xf32>, %[[SUMS:.+]]: memref<8xf32>, %[[OUT:.+]]: memref<8x2048xf32>)
// CHECK-SAME: workgroup(%[[PARTIALS:.+]] : memref<8xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[FLAGS:.+]] : memref<8xi8, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[LANE:.+]] = arith.remui %[[TID]], %[[C256:.+]] : index
// CHECK: %[[BLOCK:.+]] = arith.divui %{{.+}}, %[[C256]] : index
// CHECK: %[[BLOCKS:.+]] = arith.divui %{{.+}}, %[[C256]] : index
// CHECK: scf.for %[[ROW:.+]] = %[[BLOCK]] to %{{.+}} step %[[BLOCKS]]
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[SUMS]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %[[LANE]] to %{{.+}} step %{{.+}} iter_args
// CHECK-COUNT-10: gpu.shuffle xor
// CHECK: memref.store %{{.+}}, %[[PARTIALS]]
// CHECK: memref.store %{{.+}}, %[[FLAGS]]
// CHECK: gpu.barrier
// CHECK-COUNT-8: memref.load %[[PARTIALS]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[SUMS]]
// CHECK: gpu.barrier
// CHECK: scf.for %{{.+}} = %[[LANE]] to %{{.+}} step %{{.+}} {
// CHECK: memref.load %[[SUMS]]
// CHECK: arith.divf
// CHECK: memref.store %{{.+}}, %[[OUT]]
func.func private @long_rows(%x: memref<8x2048xf32>, %sums: memref<8xf32>, %out: memref<8x2048xf32>) attributes {kiln.dispatch} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2048 = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%row) in (8) {
    memref.store %zero, %sums[%row] : memref<8xf32>
    scf.for %k = %c0 to %c2048 step %c1 {
      %v = memref.load %x[%row, %k] : memref<8x2048xf32>
      %e = math.exp %v : f32
      %acc = memref.load %sums[%row] : memref<8xf32>
      %s = arith.addf %e, %acc : f32
      memref.store %s, %sums[%row] : memref<8xf32>
    }
    scf.parallel (%j) = (%c0) to (%c2048) step (%c1) {
      %v = memref.load %x[%row, %j] : memref<8x2048xf32>
      %e = math.exp %v : f32
      %t = memref.load %sums[%row] : memref<8xf32>
      %q = arith.divf %e, %t : f32
      memref.store %q, %out[%row, %j] : memref<8x2048xf32>
      scf.reduce
    }
  }
  return
}
