//===- Passes.h - Passes over the program dialect ---------------*- C++ -*-===//

#ifndef KILN_COMPILER_PROGRAM_PASSES_H
#define KILN_COMPILER_PROGRAM_PASSES_H

#include "dialects/program/ProgramOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/program/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/program/Passes.h.inc"

using program::kKernelsSymbol;

} // namespace kiln

#endif // KILN_COMPILER_PROGRAM_PASSES_H
