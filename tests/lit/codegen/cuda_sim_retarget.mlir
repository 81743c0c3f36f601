// REQUIRES: libdevice
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(gpu.module(kiln-print-cuda-sim-ir{libdevice=%libdevice}))" \
// RUN:   -o /dev/null | FileCheck %s

// Tests that NVVM kernels are retargeted to the simulated CUDA device: the host's triple, GPU
// instructions as calls through the simulator's table (runtime/src/cuda/sim/sim_abi.h: field 2
// special_register, 3 barrier, 4 shfl_sync, 6 shared_memory, 7 check_access), shared memory at
// its offset in the block's memory, checked global and shared accesses, libdevice linked with
// its directed-rounding operations under the host's rounding mode, and an exported
// `void K(void**)` with its info {flags, shared bytes, parameters}.

// CHECK: target triple = "{{.*}}linux
// CHECK: @kiln_sim_runtime = global ptr null
// CHECK: @kiln_sim_info_k = constant { i32, i32, i32 } { i32 3, i32 272, i32 2 }
// CHECK-LABEL: define internal void @k.kernel(ptr %0, ptr %1)
// CHECK: %[[IN_RANGE:.*]] = alloca i32
// Shared memory: the block's base.
// CHECK: %[[TABLE:.*]] = load ptr, ptr @kiln_sim_runtime
// CHECK: getelementptr inbounds nuw %kiln_sim_runtime_t, ptr %[[TABLE]], i32 0, i32 6
// CHECK: %[[SHARED:.*]] = call ptr
// The second variable sits after the first (64 floats), at its 16-byte alignment.
// CHECK: getelementptr i8, ptr %[[SHARED]], i64 256
// CHECK: getelementptr i8, ptr %[[SHARED]], i64 0
// %tid.x is special register 0.
// CHECK: i32 0, i32 2
// CHECK: %[[TID:.*]] = call i32 %{{.*}}(i32 0)
// The global load is checked (size 4, a load) and uses the address the check returns.
// CHECK: i32 0, i32 7
// CHECK: %[[CHECKED:.*]] = call ptr %{{.*}}(ptr %{{.*}}, i64 4, i32 0, i32 [[SITE:[0-9]+]])
// CHECK: load float, ptr %[[CHECKED]]
// CHECK: call float @__nv_expf
// The shared store is checked as a shared write (flags 3).
// CHECK: call ptr %{{.*}}(ptr %{{.*}}, i64 4, i32 3, i32
// CHECK: store float
// bar.sync 0 is barrier(site).
// CHECK: i32 0, i32 3
// CHECK: call void %{{.*}}(i32 {{[0-9]+}})
// The butterfly shuffle: mode 3, full mask, lane mask 1, clamp 31, the in-range slot.
// CHECK: i32 0, i32 4
// CHECK: call i32 %{{.*}}(i32 3, i32 -1, i32 %{{.*}}, i32 1, i32 31, ptr %[[IN_RANGE]])
// CHECK: store float
// CHECK: ret void
// libdevice's expf, with its round-down FMA computed under the host's rounding mode.
// CHECK: define internal float @__nv_expf
// CHECK: define internal float @kiln.sim.nvvm.fma.rm.f(
// CHECK: call i32 @fegetround()
// CHECK: call i32 @fesetround(
// CHECK: call float @llvm.experimental.constrained.fma.f32
// CHECK: define void @k(ptr %0)
// CHECK: call void @k.kernel(
// CHECK-NOT: llvm.nvvm.
gpu.module @kiln_kernels {
  llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
  llvm.mlir.global internal @flag() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4 x i32>
  llvm.func @__nv_expf(f32) -> f32
  llvm.func @k(%arg0: !llvm.ptr, %arg1: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %flags = llvm.mlir.addressof @flag : !llvm.ptr<3>
    %zero = llvm.mlir.constant(0 : i32) : i32
    llvm.store %zero, %flags : i32, !llvm.ptr<3>
    %base = llvm.mlir.addressof @tile : !llvm.ptr<3>
    %p = llvm.getelementptr %base[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
    %gp = llvm.getelementptr %arg0[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    %x = llvm.load %gp : !llvm.ptr -> f32
    %e = llvm.call @__nv_expf(%x) : (f32) -> f32
    llvm.store %e, %p : f32, !llvm.ptr<3>
    nvvm.barrier0
    %mask = llvm.mlir.constant(-1 : i32) : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %clamp = llvm.mlir.constant(31 : i32) : i32
    %y = llvm.load %p : !llvm.ptr<3> -> f32
    %s = nvvm.shfl.sync bfly %mask, %y, %one, %clamp : f32 -> f32
    %op = llvm.getelementptr %arg1[%tid] : (!llvm.ptr, i32) -> !llvm.ptr, f32
    llvm.store %s, %op : f32, !llvm.ptr
    llvm.return
  }
}

// -----

// A kernel without synchronization runs as a plain loop (flags 0); its module constant is read
// without a check.
// CHECK: @kiln_sim_info_plain = constant { i32, i32, i32 } { i32 0, i32 0, i32 1 }
// CHECK-LABEL: define internal void @plain.kernel(ptr %0)
// CHECK-NOT: kiln_sim_runtime
// CHECK: load float, ptr @table
gpu.module @kiln_kernels {
  llvm.mlir.global private constant @table(dense<[1.0, 2.0]> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
  llvm.func @plain(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %t = llvm.mlir.addressof @table : !llvm.ptr
    %v = llvm.load %t : !llvm.ptr -> f32
    %c = llvm.mlir.constant(2.0 : f32) : f32
    %w = llvm.fmul %v, %c : f32
    %u = llvm.fadd %w, %c : f32
    %q = llvm.fptosi %u : f32 to i32
    %r = llvm.sitofp %q : i32 to f32
    llvm.return
  }
}

// -----

// expected-error @+1 {{the special register %clock (read in 'timed') is not simulated}}
gpu.module @kiln_kernels {
  llvm.func @timed(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %c = nvvm.read.ptx.sreg.clock : i32
    llvm.return
  }
}

// -----

// expected-error @+1 {{dynamic shared memory is not simulated}}
gpu.module @kiln_kernels {
  llvm.mlir.global external @dynamic() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x f32>
  llvm.func @k(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %base = llvm.mlir.addressof @dynamic : !llvm.ptr<3>
    %z = llvm.mlir.constant(0.0 : f32) : f32
    llvm.store %z, %base : f32, !llvm.ptr<3>
    llvm.return
  }
}

// -----

// expected-error @+1 {{kernel 'scalar' has a parameter that is not a pointer}}
gpu.module @kiln_kernels {
  llvm.func @scalar(%arg0: !llvm.ptr, %n: i64) attributes {gpu.kernel, nvvm.kernel} {
    llvm.return
  }
}

// -----

// An NVVM intrinsic the simulator does not implement is a compile error naming it, never a
// silent skip.
// expected-error @+1 {{the NVVM intrinsic llvm.nvvm.nanosleep (called in 'sleepy') has no simulation}}
gpu.module @kiln_kernels {
  llvm.func @sleepy(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    %t = llvm.mlir.constant(100 : i32) : i32
    llvm.call_intrinsic "llvm.nvvm.nanosleep"(%t) : (i32) -> ()
    llvm.return
  }
}

// -----

// So is inline PTX outside the libdevice forms the simulator rewrites.
// expected-error @+1 {{has inline PTX assembly ('membar.gl;')}}
gpu.module @kiln_kernels {
  llvm.func @fenced(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
    llvm.inline_asm has_side_effects "membar.gl;", "" : () -> ()
    llvm.return
  }
}
