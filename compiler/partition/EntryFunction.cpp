//===- EntryFunction.cpp - The function a partitioning pass rewrites ------===//

#include "compiler/partition/EntryFunction.h"

using namespace mlir;

namespace kiln::partition {

LogicalResult partitionEntry(ModuleOp module, StringRef pass,
                             function_ref<LogicalResult(func::FuncOp)> partition) {
  func::FuncOp entry;
  if (auto main = module.lookupSymbol<func::FuncOp>("main"); main && !main.isExternal())
    entry = main;
  for (auto function : module.getOps<func::FuncOp>())
    if (!entry && !function.isExternal() && !function.isPrivate())
      entry = function;
  if (!entry)
    return success();
  if (entry.getBody().getBlocks().size() != 1)
    return entry.emitError() << pass << ": the entry function has more than one block";
  return partition(entry);
}

} // namespace kiln::partition
