//===- Registration.cpp - Registers Kiln's dialects and passes --------------===//

#include "compiler/Registration.h"

#include "compiler/codegen/Passes.h"
#include "compiler/conversion/Passes.h"
#include "compiler/fusion/Passes.h"
#include "compiler/librarycalls/Passes.h"
#include "compiler/partition/Passes.h"
#include "compiler/pipelines/Pipelines.h"
#include "compiler/precision/Passes.h"
#include "compiler/program/Passes.h"
#include "compiler/transforms/Passes.h"
#include "dialects/graph/GraphDialect.h"
#include "dialects/kiln/KilnDialect.h"
#include "dialects/program/ProgramDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace kiln {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<KilnDialect, graph::GraphDialect, program::ProgramDialect>();
  // The upstream dialects Kiln lowers through, with their interfaces (bufferization, conversion
  // to LLVM, GPU targets and translation to LLVM IR).
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
}

void registerAllPasses() {
  // Kiln's pipelines are built from upstream passes by name; kiln-opt can run any of them.
  mlir::registerAllPasses();
  registerCodegenPasses();
  registerFusionPasses();
  registerGraphConversionPasses();
  registerGraphTransformsPasses();
  registerLibraryCallsPasses();
  registerPartitionPasses();
  registerPipelines();
  registerPrecisionPasses();
  registerProgramPasses();
}

} // namespace kiln
