//===- Executable.h - Compiled kernels as a program.executable ---*- C++ -*-===//
//
// What code generation makes of the dispatch functions of `@kernels` (the symbol and workgroups
// of each CPU kernel, the launches and scratch buffers of each CUDA dispatch, the code objects),
// and how it replaces the kernel module with the program.executable the program dispatches.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_EXECUTABLE_H
#define KILN_COMPILER_CODEGEN_EXECUTABLE_H

#include "dialects/program/ProgramOps.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// A compiled code object and the symbol of each kernel it exports.
struct CodeObjectImage {
  std::string target;
  program::CodeFormat format = program::CodeFormat::elf;
  std::string data;
  std::vector<std::string> kernels;
};

/// What code generation made of the dispatch functions.
struct KernelTable {
  std::vector<CodeObjectImage> codeObjects;
  struct Entry {
    /// CPU: the exported kernel and the workgroups it runs over.
    std::string symbol;
    int64_t workgroupCount = 1;
    /// Or a count known at run time (kiln.workgroup_dims): (binding, dimension, tile) per loop.
    llvm::SmallVector<int64_t> workgroupDims;
    /// CUDA: the kernels launched in order (a dispatch that writes nothing has none) and the
    /// scratch buffers (memref types) they bind after the dispatch's outputs.
    std::optional<llvm::SmallVector<mlir::Attribute>> cudaLaunches;
    llvm::SmallVector<mlir::Attribute> scratch;
    /// Their dimensions as maps of the run's sizes (kiln.cuda_scratch_dims), or empty.
    llvm::SmallVector<mlir::Attribute> scratchDims;
  };
  /// Dispatch function name → what it became.
  llvm::StringMap<Entry> dispatches;
};

/// Replaces the compiled kernel module `kernels` with a program.executable of the same name
/// describing `table`, then binds each CUDA dispatch's scratch buffers: one program.alloc per
/// buffer after its outputs.
void replaceWithExecutable(mlir::ModuleOp kernels, const KernelTable &table);

/// The pseudo-architecture of `--gpu-arch` that adds the simulated CUDA device's code object
/// (a host shared object, see CudaSimObject.h); also that code object's target.
inline constexpr llvm::StringLiteral kCudaSimArch = "cuda-sim";

/// The PTX ISA feature ptxas (CUDA 13) needs for `arch` ("+ptx80"), or nothing for an
/// architecture it does not assemble for.
std::optional<llvm::StringRef> ptxFeatures(llvm::StringRef arch);

/// Fails, with the error on `anchor`, unless `gpuArchs` names at least one architecture and
/// only ones ptxas assembles for or kCudaSimArch; `option` is how the user spells the list ("--gpu-arch").
mlir::LogicalResult verifyGpuArchs(mlir::Operation *anchor, llvm::ArrayRef<std::string> gpuArchs,
                                   llvm::StringRef option);

/// The architecture the PTX fallback is built for: the oldest of `gpuArchs`, whose PTX the
/// driver compiles for any newer GPU; empty when `gpuArchs` has only kCudaSimArch.
std::string ptxFallbackArch(llvm::ArrayRef<std::string> gpuArchs);

} // namespace kiln

#endif // KILN_COMPILER_CODEGEN_EXECUTABLE_H
