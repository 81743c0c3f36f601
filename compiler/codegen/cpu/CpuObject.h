//===- CpuObject.h - Host object code for lowered kernels -------*- C++ -*-===//
//
// Translates a module of LLVM-dialect kernels into LLVM IR, optimizes it for the host CPU, emits
// an object file and links it into a position-independent shared object: the CPU code object of
// a .kiln artifact.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CODEGEN_CPU_CPUOBJECT_H
#define KILN_COMPILER_CODEGEN_CPU_CPUOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace kiln {

struct CpuObject {
  /// The ELF shared object's bytes.
  std::string sharedObject;
  /// What it was compiled for: "<triple>:<cpu>", e.g. "x86_64-pc-linux-gnu:znver3".
  std::string target;
};

/// A code generator for the host's triple and `cpu` with `features` (each "+NAME" or "-NAME"),
/// or, when `cpu` is empty, the host CPU with its features; position-independent, at -O3.
/// Errors are emitted on `anchor`.
mlir::FailureOr<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(mlir::Operation *anchor, llvm::StringRef cpu = {},
                        llvm::ArrayRef<std::string> features = {});

/// Optimizes `module` (LLVM IR, already given `machine`'s triple and data layout) at -O3, emits
/// it as an object file and links that into a shared object (see emitCpuSharedObject); returns
/// the shared object's bytes. Errors are emitted on `anchor`.
mlir::FailureOr<std::string> linkHostSharedObject(llvm::Module &module,
                                                  llvm::TargetMachine &machine,
                                                  mlir::Operation *anchor);

/// Compiles `module` (LLVM dialect) at -O3 for `cpu` with `features` (empty: the host CPU, see
/// createHostTargetMachine). The shared object is linked with the system C compiler driver
/// (`cc`, or $KILN_LINKER) against libm. Errors are emitted on the module.
mlir::FailureOr<CpuObject> emitCpuSharedObject(mlir::ModuleOp module, llvm::StringRef cpu = {},
                                               llvm::ArrayRef<std::string> features = {});

} // namespace kiln

#endif // KILN_COMPILER_CODEGEN_CPU_CPUOBJECT_H
