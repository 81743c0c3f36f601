//===- GraphDialect.cpp - The Kiln graph dialect -----------------------------===//

#include "dialects/graph/GraphDialect.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace kiln::graph;

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "dialects/graph/GraphOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/graph/GraphAttrs.cpp.inc"

void GraphDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/graph/GraphAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/graph/GraphOps.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                             Location loc) {
  // graph.dim folds to an index.
  if (auto integer = llvm::dyn_cast<IntegerAttr>(value); integer && type.isIndex())
    return arith::ConstantOp::create(builder, loc, type, integer);
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
