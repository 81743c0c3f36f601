//===- Declarations.h - The declarations library calls call -*- C++ -*-===//
//
// A library call in a graph program is a func.call of a private declaration tagged
// `kiln.library_call` with the library entry point's name ("cudnn.convolution", ...); one
// declaration per entry point and signature, named `<name>_<k>`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_LIBRARYCALLS_DECLARATIONS_H
#define KILN_COMPILER_LIBRARYCALLS_DECLARATIONS_H

#include "dialects/kiln/KilnAttributes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {

/// The attribute that tags a library call's declaration with its entry point.
inline constexpr llvm::StringLiteral kLibraryCallAttr = ::kiln::attrs::kLibraryCall;

/// The declaration of entry point `name` with `type` in `module`, created at the top of the
/// module (and inserted in `symbols`) when there is none yet.
mlir::func::FuncOp libraryCallDeclaration(mlir::SymbolTable &symbols, mlir::ModuleOp module,
                                          llvm::StringRef name, mlir::FunctionType type);

} // namespace kiln

#endif // KILN_COMPILER_LIBRARYCALLS_DECLARATIONS_H
