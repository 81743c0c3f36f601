//===- ProgramDialect.h - The Kiln program dialect ---------------*- C++ -*-===//

#ifndef KILN_DIALECTS_PROGRAM_PROGRAMDIALECT_H
#define KILN_DIALECTS_PROGRAM_PROGRAMDIALECT_H

#include "dialects/kiln/KilnDialect.h"
#include "mlir/IR/Dialect.h"

#include "dialects/program/ProgramOpsDialect.h.inc"

#endif // KILN_DIALECTS_PROGRAM_PROGRAMDIALECT_H
