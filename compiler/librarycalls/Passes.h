//===- Passes.h - Selection of vendor-library calls -------------------------===//

#ifndef KILN_COMPILER_LIBRARYCALLS_PASSES_H
#define KILN_COMPILER_LIBRARYCALLS_PASSES_H

#include "dialects/graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/librarycalls/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/librarycalls/Passes.h.inc"

} // namespace kiln

#endif // KILN_COMPILER_LIBRARYCALLS_PASSES_H
