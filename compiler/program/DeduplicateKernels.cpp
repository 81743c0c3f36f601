//===- DeduplicateKernels.cpp - Identical dispatch functions compiled once ----===//

#include "compiler/codegen/Passes.h"
#include "compiler/program/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

#define GEN_PASS_DEF_DEDUPLICATEKERNELSPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

/// The function's text without its name, description and locations: equal texts compute the
/// same thing.
std::string kernelKey(func::FuncOp function) {
  OpBuilder builder(function.getContext());
  Operation *copy = builder.clone(*function);
  auto clone = cast<func::FuncOp>(copy);
  clone.setSymName("kernel");
  clone->removeAttr(kDescriptionAttr);
  std::string text;
  llvm::raw_string_ostream os(text);
  clone->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  clone->erase();
  return text;
}

struct DeduplicateKernelsPass : impl::DeduplicateKernelsPassBase<DeduplicateKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<ModuleOp>(kKernelsSymbol);
    if (!kernels)
      return;
    llvm::StringMap<func::FuncOp> first;
    DenseMap<StringAttr, StringAttr> replacement;
    for (auto function : llvm::make_early_inc_range(kernels.getOps<func::FuncOp>())) {
      if (!function->hasAttr(kDispatchAttr) || function.isExternal())
        continue;
      auto [it, inserted] = first.try_emplace(kernelKey(function), function);
      if (inserted)
        continue;
      replacement[function.getSymNameAttr()] = it->second.getSymNameAttr();
      function.erase();
    }
    if (replacement.empty())
      return;
    module.walk([&](program::DispatchOp dispatch) {
      SymbolRefAttr kernel = dispatch.getKernelAttr();
      if (kernel.getRootReference() != kKernelsSymbol || kernel.getNestedReferences().size() != 1)
        return;
      auto it = replacement.find(kernel.getLeafReference());
      if (it != replacement.end())
        dispatch.setKernelAttr(SymbolRefAttr::get(kernel.getRootReference(),
                                                  {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};

} // namespace
} // namespace kiln
