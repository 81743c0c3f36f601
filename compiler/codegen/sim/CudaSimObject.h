//===- CudaSimObject.h - CUDA kernels retargeted to the simulator -*- C++ -*-===//
//
// The code object of the simulated CUDA device (`--device cuda-sim`): the NVVM-lowered kernels of
// a gpu.module, the very ones that become cubins and PTX, translated to LLVM IR, linked with
// libdevice as for the GPU, then retargeted to the host. Every GPU instruction becomes a call
// into the simulator's runtime table (runtime/src/cuda/sim/sim_abi.h), every NVVM intrinsic the
// retargeting does not know is a compile error, and the result is compiled and linked like a
// CPU code object.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_SIM_CUDASIMOBJECT_H
#define KILN_COMPILER_CODEGEN_SIM_CUDASIMOBJECT_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace kiln {

/// Translates `kernels` (NVVM and LLVM dialects) to LLVM IR, links `libdevice` when the kernels
/// call its functions, and rewrites the result for the host (see sim_abi.h). Errors are emitted
/// on the module, naming the kernel and the instruction that cannot run on the simulator.
mlir::FailureOr<std::unique_ptr<llvm::Module>>
retargetCudaKernelsToHost(mlir::gpu::GPUModuleOp kernels, llvm::StringRef libdevice,
                          llvm::LLVMContext &context);

/// retargetCudaKernelsToHost, then compiled and linked into a host shared object.
mlir::FailureOr<std::string> emitCudaSimObject(mlir::gpu::GPUModuleOp kernels,
                                               llvm::StringRef libdevice);

} // namespace kiln

#endif // KILN_COMPILER_CODEGEN_SIM_CUDASIMOBJECT_H
