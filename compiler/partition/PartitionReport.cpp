//===- PartitionReport.cpp - What a partitioning pass reports -------------===//

#include "compiler/partition/PartitionReport.h"

#include "compiler/partition/Passes.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::partition {

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

} // namespace kiln::partition
