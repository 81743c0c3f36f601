// RUN: kiln-opt --kiln-compile-pipeline="target=cpu entry=forward stop-after=program" %s | FileCheck %s --check-prefix=PROGRAM
// RUN: kiln-opt --kiln-compile-pipeline="target=cpu entry=forward" %s | FileCheck %s --check-prefix=CPU
// RUN: kiln-opt --kiln-compile-pipeline="target=cuda entry=forward gpu-arch=sm_80,sm_90" %s | FileCheck %s --check-prefix=CUDA

// Tests that kiln-opt runs the stages kiln compile runs: up to the program stage, the model is a
// program whose two identical layers dispatch one kernel and whose matmul is a oneDNN call; to
// the end, the kernels are a compiled executable (a shared object for the CPU; two cubins and
// the oldest architecture's PTX for CUDA) and every allocation has its offset.
// PROGRAM: program.program @forward device(cpu)
// PROGRAM: program.library_call "onednn.matmul"
// PROGRAM: program.dispatch @kernels::@[[K:dispatch_[0-9]+]]
// PROGRAM: program.dispatch @kernels::@[[K]]
// PROGRAM: module @kernels
// PROGRAM-COUNT-1: func.func private @dispatch_
// PROGRAM-NOT: func.func private @dispatch_

// CPU: program.program @forward device(cpu) attributes {alignment = 64 : i64, arena_size = {{[0-9]+}} : i64
// CPU: program.alloc {offset = {{[0-9]+}} : i64}
// CPU: program.executable @kernels
// CPU-NEXT: program.kernel @dispatch_{{[0-9]+}} {symbol = "kiln_dispatch_{{[0-9]+}}", workgroups = {{[0-9]+}} : i64}
// CPU-NEXT: program.binary "{{.+}}" elf

// CUDA: program.program @forward device(cuda)
// CUDA: program.library_call "cublaslt.matmul"
// CUDA: program.executable @kernels
// CUDA-NEXT: program.kernel @dispatch_{{[0-9]+}} {launches = [#program.cuda_launch<
// CUDA-NEXT: program.binary "sm_80" cubin
// CUDA-NEXT: program.binary "sm_90" cubin
// CUDA-NEXT: program.binary "sm_80" ptx
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = graph.tanh %0 : tensor<4x8xf32>
  %2 = graph.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = graph.tanh %2 : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}
