//===- Executable.cpp - Compiled kernels as a program.executable -------------===//

#include "compiler/codegen/Executable.h"
#include "compiler/codegen/Passes.h"
#include "dialects/program/SymbolicDims.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {

using namespace mlir;

namespace {

/// The dimensions of every binding of `dispatch`, flat in binding order, as expressions of the
/// program's symbols (kiln.dims where a buffer's vary, its static sizes otherwise).
SmallVector<AffineExpr> bindingDims(program::DispatchOp dispatch) {
  SmallVector<AffineExpr> dims;
  for (Value buffer : dispatch->getOperands())
    llvm::append_range(dims,
                       bufferDims(buffer.getDefiningOp(), cast<MemRefType>(buffer.getType())));
  return dims;
}

/// Binds each dispatch's scratch buffers: one allocation per buffer after its outputs, live for
/// the step only. A buffer of the run's size in a program planned per run (the kernel's
/// kiln.scratch_dims) gets the run's dimensions as kiln.dims, read off the dispatch's bindings.
void bindScratch(program::ProgramOp program) {
  for (auto dispatch : llvm::to_vector(program.getBody().front().getOps<program::DispatchOp>())) {
    auto kernel = SymbolTable::lookupNearestSymbolFrom<program::KernelOp>(
        dispatch, dispatch.getKernelAttr());
    if (!kernel || !kernel.getScratch())
      continue;
    // A named copy: iterating `*kernel.getScratch()` would outlive the optional it reads.
    ArrayAttr scratch = *kernel.getScratch();
    auto scratchDims = kernel->getAttrOfType<ArrayAttr>(kCudaScratchDimsAttr);
    SmallVector<AffineExpr> runDims;
    if (scratchDims)
      runDims = bindingDims(dispatch);
    OpBuilder builder(dispatch);
    SmallVector<Value> buffers;
    for (auto [i, type] : llvm::enumerate(scratch)) {
      auto alloc = program::AllocOp::create(builder, dispatch.getLoc(),
                                            cast<MemRefType>(cast<TypeAttr>(type).getValue()),
                                            IntegerAttr());
      if (scratchDims && i < scratchDims.size())
        if (auto map = dyn_cast<AffineMapAttr>(scratchDims[i])) {
          SmallVector<AffineExpr> dims;
          for (AffineExpr expr : map.getValue().getResults())
            dims.push_back(expr.replaceSymbols(runDims));
          auto symbolList = program->getAttrOfType<ArrayAttr>(kSymbolsAttr);
          unsigned symbols = symbolList ? symbolList.size() : 0;
          alloc->setAttr(kDimsAttr, AffineMapAttr::get(
                                        AffineMap::get(0, symbols, dims, dispatch.getContext())));
        }
      buffers.push_back(alloc);
    }
    dispatch.getOutputsMutable().append(buffers);
  }
}

} // namespace

void replaceWithExecutable(ModuleOp kernels, const KernelTable &table) {
  OpBuilder builder(kernels);
  ModuleOp top = kernels->getParentOfType<ModuleOp>();
  auto executable =
      program::ExecutableOp::create(builder, kernels.getLoc(), *kernels.getSymName());
  builder.setInsertionPointToStart(&executable.getBody().front());
  // In the order of the dispatch functions' names, for a stable printed form.
  SmallVector<StringRef> names;
  for (const auto &entry : table.dispatches)
    names.push_back(entry.getKey());
  llvm::sort(names);
  for (StringRef name : names) {
    const KernelTable::Entry &entry = table.dispatches.find(name)->second;
    auto kernel = program::KernelOp::create(builder, kernels.getLoc(), name, StringAttr(),
                                            IntegerAttr(), ArrayAttr(), ArrayAttr());
    if (entry.cudaLaunches) {
      kernel.setLaunchesAttr(builder.getArrayAttr(*entry.cudaLaunches));
      if (!entry.scratch.empty())
        kernel.setScratchAttr(builder.getArrayAttr(entry.scratch));
      if (!entry.scratchDims.empty())
        kernel->setAttr(kCudaScratchDimsAttr, builder.getArrayAttr(entry.scratchDims));
    } else {
      kernel.setSymbolAttr(builder.getStringAttr(entry.symbol));
      kernel.setWorkgroupsAttr(builder.getI64IntegerAttr(entry.workgroupCount));
      if (!entry.workgroupDims.empty())
        kernel->setAttr(kWorkgroupDimsAttr, builder.getDenseI64ArrayAttr(entry.workgroupDims));
    }
  }
  for (const CodeObjectImage &image : table.codeObjects) {
    SmallVector<StringRef> symbols(image.kernels.begin(), image.kernels.end());
    program::BinaryOp::create(builder, kernels.getLoc(), image.target, image.format,
                              builder.getStrArrayAttr(symbols), builder.getStringAttr(image.data));
  }
  kernels.erase();
  if (top)
    for (auto program : top.getOps<program::ProgramOp>())
      bindScratch(program);
}

std::optional<StringRef> ptxFeatures(StringRef arch) {
  unsigned number = 0;
  if (!arch.consume_front("sm_") || arch.getAsInteger(10, number))
    return std::nullopt;
  switch (number) {
  case 75: case 80: case 86: case 87: case 89: case 90:
    return StringRef("+ptx80");
  case 100: case 103: case 120: case 121:
    return StringRef("+ptx88");
  default:
    return std::nullopt;
  }
}

LogicalResult verifyGpuArchs(Operation *anchor, ArrayRef<std::string> gpuArchs, StringRef option) {
  if (gpuArchs.empty())
    return anchor->emitError() << "no GPU architecture to compile for (" << option << ")";
  for (const std::string &arch : gpuArchs)
    if (arch != kCudaSimArch && !ptxFeatures(arch))
      return anchor->emitError()
             << "GPU architecture '" << arch
             << "' is not one ptxas assembles for: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, "
                "sm_100, sm_103, sm_120 or sm_121; or '"
             << kCudaSimArch << "', the simulated CUDA device";
  return success();
}

std::string ptxFallbackArch(ArrayRef<std::string> gpuArchs) {
  auto number = [](StringRef arch) {
    unsigned value = 0;
    (void)arch.drop_front(3).getAsInteger(10, value); // after "sm_"
    return value;
  };
  std::string oldest;
  for (const std::string &arch : gpuArchs)
    if (arch != kCudaSimArch && (oldest.empty() || number(arch) < number(oldest)))
      oldest = arch;
  return oldest;
}

} // namespace kiln
