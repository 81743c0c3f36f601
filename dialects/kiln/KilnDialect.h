//===- KilnDialect.h - The dialect of Kiln's discardable attributes -*- C++ -*-===//

#ifndef KILN_DIALECTS_KILN_KILNDIALECT_H_
#define KILN_DIALECTS_KILN_KILNDIALECT_H_

#include "dialects/kiln/KilnAttributes.h"

#include "mlir/IR/Dialect.h"

#include "dialects/kiln/KilnDialect.h.inc"

#endif // KILN_DIALECTS_KILN_KILNDIALECT_H_
