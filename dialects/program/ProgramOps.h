//===- ProgramOps.h - The ops of the Kiln program dialect --------*- C++ -*-===//

#ifndef KILN_DIALECTS_PROGRAM_PROGRAMOPS_H
#define KILN_DIALECTS_PROGRAM_PROGRAMOPS_H

#include "dialects/program/ProgramDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/program/ProgramEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/program/ProgramAttrs.h.inc"

#include "dialects/program/ProgramInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/program/ProgramOps.h.inc"

namespace kiln::program {

/// The name of the nested module holding a program's dispatch functions, and of the
/// program.executable that replaces it after code generation.
inline constexpr llvm::StringLiteral kKernelsSymbol = "kernels";

/// The bytes a static buffer holds (an i1 takes a byte).
uint64_t bufferBytes(mlir::MemRefType type);

/// The buffer `value` is a view of, through any number of `program.view`s (`value` itself when
/// it is not a view).
mlir::Value rootBuffer(mlir::Value value);

/// Where `value`'s bytes start within rootBuffer(value): the sum of the byte offsets of the
/// views between them.
uint64_t viewByteOffset(mlir::Value value);

/// Checks a library call's callee, tensors and parameters against what Kiln knows of the entry
/// point; emits the error on `op`.
mlir::LogicalResult verifyLibraryCall(LibraryCallOp op);

} // namespace kiln::program

#endif // KILN_DIALECTS_PROGRAM_PROGRAMOPS_H
