//===- Common.cpp - What the partitioning passes share ---------------------===//

#include "compiler/partition/Common.h"

#include "compiler/partition/Passes.h"

#include "dialects/graph/GraphOps.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

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

RankedTensorType staticType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

bool isConstant(Value value) { return value.getDefiningOp<graph::ConstantOp>() != nullptr; }

std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef();
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    os << " '" << name.getName().getValue() << "'";
  else if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
    for (Location inner : fused.getLocations())
      if (auto innerName = dyn_cast<NameLoc>(inner)) {
        os << " '" << innerName.getName().getValue() << "'";
        break;
      }
  return text;
}

std::string mebibytes(uint64_t bytes) {
  return llvm::formatv("{0:F2} MiB", static_cast<double>(bytes) / (1 << 20)).str();
}

void setPartitionReport(ModuleOp module, ArrayRef<std::string> lines) {
  SmallVector<Attribute> attributes;
  for (const std::string &line : lines)
    attributes.push_back(StringAttr::get(module.getContext(), line));
  module->setAttr(kPartitionReportAttr, ArrayAttr::get(module.getContext(), attributes));
}

fusion::KernelWork workOf(Operation *op) {
  fusion::KernelWork work;
  if (isa<graph::ConstantOp>(op))
    return work;
  for (Value operand : op->getOperands())
    work.bytes += fusion::tensorBytes(operand.getType());
  for (Value result : op->getResults()) {
    work.bytes += fusion::tensorBytes(result.getType());
    if (RankedTensorType type = staticType(result))
      work.flops += double(type.getNumElements());
  }
  if (auto matmul = dyn_cast<graph::MatmulOp>(op))
    if (RankedTensorType lhs = staticType(matmul.getLhs()))
      work.flops *= 2.0 * double(lhs.getShape().back());
  return work;
}

} // namespace kiln::partition
