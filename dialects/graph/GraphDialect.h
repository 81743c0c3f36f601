//===- GraphDialect.h - The Kiln graph dialect -------------------------------===//

#ifndef KILN_DIALECTS_GRAPH_GRAPHDIALECT_H
#define KILN_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "dialects/kiln/KilnDialect.h"
#include "mlir/IR/Dialect.h"

#include "dialects/graph/GraphOpsDialect.h.inc"

#endif // KILN_DIALECTS_GRAPH_GRAPHDIALECT_H
