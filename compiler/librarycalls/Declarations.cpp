//===- Declarations.cpp - The declarations library calls call ------------===//

#include "compiler/librarycalls/Declarations.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/Twine.h"

#include <string>

using namespace mlir;

namespace kiln {

func::FuncOp libraryCallDeclaration(SymbolTable &symbols, ModuleOp module, StringRef name,
                                    FunctionType type) {
  for (auto function : module.getOps<func::FuncOp>()) {
    auto tag = function->getAttrOfType<StringAttr>(kLibraryCallAttr);
    if (tag && tag.getValue() == name && function.getFunctionType() == type)
      return function;
  }
  std::string symbol;
  for (unsigned k = 0;; ++k) {
    symbol = (name + "_" + llvm::Twine(k)).str();
    if (!symbols.lookup(symbol))
      break;
  }
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto function = func::FuncOp::create(builder, module.getLoc(), symbol, type);
  function.setPrivate();
  function->setAttr(kLibraryCallAttr, builder.getStringAttr(name));
  symbols.insert(function);
  return function;
}

} // namespace kiln
