//===- ProgramDialect.cpp - The Kiln program dialect -------------------------===//

#include "dialects/program/ProgramDialect.h"
#include "dialects/program/ProgramOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln::program;

#include "dialects/program/ProgramOpsDialect.cpp.inc"
#include "dialects/program/ProgramEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/program/ProgramAttrs.cpp.inc"

void ProgramDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/program/ProgramAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/program/ProgramOps.cpp.inc"
      >();
}

LogicalResult CudaLaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef kernel,
                                     int64_t block, int64_t items, AffineMapAttr runItems) {
  if (kernel.empty())
    return emitError() << "a CUDA launch names its kernel";
  if (block < 1 || block > 1024)
    return emitError() << "CUDA launch of '" << kernel << "' has " << block
                       << " threads per block; CUDA allows 1 to 1024";
  if (items < 0)
    return emitError() << "CUDA launch of '" << kernel << "' has " << items << " work items";
  if (runItems && (runItems.getValue().getNumDims() != 0 ||
                   runItems.getValue().getNumResults() != 1 || items != 0))
    return emitError() << "CUDA launch of '" << kernel
                       << "': run_items is one expression of symbols, with items = 0";
  return success();
}
