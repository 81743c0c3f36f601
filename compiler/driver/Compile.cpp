//===- Compile.cpp - Compiling a graph program into a .kiln artifact ----------===//
//
// The stages, each a pass pipeline over the module:
//   graph      bind shapes, canonicalize, select library calls
//   linalg     lower to linalg/tensor, fuse elementwise producers into their consumers
//   kernels    outline kernel groups (dispatch functions) from the entry function
//   program    the entry function becomes a program.program over buffers; the dispatch
//              functions move into the nested module @kernels
//   codegen    per kernel: destination passing, workgroup tiling, bufferization, lowering to
//              LLVM, the dispatch entry points; then host object code in a shared object (CPU)
//              or cubins and PTX (CUDA); @kernels becomes a program.executable
//   memory     the static memory plan, verified
//   artifact   the program translated into .kiln bytes
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Compile.h"

#include "compiler/Registration.h"
#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/codegen/CpuObject.h"
#include "compiler/codegen/Passes.h"
#include "compiler/conversion/Passes.h"
#include "compiler/librarycalls/Passes.h"
#include "compiler/program/Passes.h"
#include "compiler/transforms/Passes.h"
#include "dialects/graph/GraphDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

#ifndef KILN_DEFAULT_LIBDEVICE
#define KILN_DEFAULT_LIBDEVICE ""
#endif

namespace kiln {

using namespace mlir;

namespace {

/// A compiled code object and the symbol of each kernel it exports.
struct CodeObjectImage {
  std::string target;
  program::CodeFormat format = program::CodeFormat::elf;
  std::string data;
  std::vector<std::string> kernels;
};

/// What code generation made of the dispatch functions.
struct KernelTable {
  std::vector<CodeObjectImage> codeObjects;
  struct Entry {
    /// CPU: the exported kernel and the workgroups it runs over.
    std::string symbol;
    int64_t workgroupCount = 1;
    /// CUDA: the kernels launched in order (a dispatch that writes nothing has none) and the
    /// scratch buffers they bind after the dispatch's outputs.
    std::optional<SmallVector<Attribute>> cudaLaunches;
    SmallVector<Attribute> scratch;
  };
  /// Dispatch function name → what it became.
  llvm::StringMap<Entry> dispatches;
};

class Compilation {
public:
  Compilation(ModuleOp module, const CompileOptions &options)
      : module_(module), options_(options), context_(module.getContext()) {}

  FailureOr<std::string> run();

private:
  LogicalResult runPipeline(Operation *op, StringRef stage,
                            llvm::function_ref<void(OpPassManager &)> build);
  void dump(Operation *op, StringRef stage);
  LogicalResult checkLowered(func::FuncOp entry);
  FailureOr<KernelTable> compileKernels(ModuleOp kernels);
  FailureOr<KernelTable> compileCudaKernels(ModuleOp kernels);
  FailureOr<CodeObjectImage> serializeCudaKernels(ModuleOp kernels, ArrayRef<std::string> archs,
                                                  bool ptx);
  void replaceWithExecutable(ModuleOp kernels, const KernelTable &table);
  void bindScratch(program::ProgramOp program);

  ModuleOp module_;
  const CompileOptions &options_;
  MLIRContext *context_;
  int dumpIndex_ = 0;
};

void addTextual(OpPassManager &pm, StringRef pipeline) {
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error(llvm::Twine("invalid built-in pipeline: ") + pipeline);
}

void Compilation::dump(Operation *op, StringRef stage) {
  if (options_.dumpIrDirectory.empty())
    return;
  llvm::sys::fs::create_directories(options_.dumpIrDirectory);
  SmallString<128> path(options_.dumpIrDirectory);
  llvm::sys::path::append(path, llvm::formatv("{0:02}-{1}.mlir", dumpIndex_++, stage).str());
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (!error)
    op->print(os);
}

LogicalResult Compilation::runPipeline(Operation *op, StringRef stage,
                                       llvm::function_ref<void(OpPassManager &)> build) {
  if (options_.onStage)
    options_.onStage(stage);
  PassManager pm(context_, op->getName().getStringRef());
  build(pm);
  if (failed(pm.run(op)))
    return failure();
  dump(op, stage);
  return success();
}

/// Every graph op must have been lowered or turned into a library call by now.
LogicalResult Compilation::checkLowered(func::FuncOp entry) {
  bool ok = true;
  Dialect *graph = context_->getLoadedDialect<graph::GraphDialect>();
  entry.walk([&](Operation *op) {
    if (op->getDialect() == graph) {
      op->emitError() << "'" << op->getName() << "' has no code generation yet";
      ok = false;
    }
  });
  return success(ok);
}

/// Rewrites memref.copy into a linalg copy so that it lowers to loops instead of a call into
/// MLIR's runner library, which kernels do not link.
/// Replaces transcendental math ops on f32 (exp, log, tanh, erf, ...) with MLIR's polynomial
/// approximations: plain arithmetic the LLVM vectorizer turns into vector code, where the libm
/// calls they would otherwise become keep every loop scalar. The approximations stay within a
/// few ulp of libm.
LogicalResult approximateMath(ModuleOp kernels) {
  RewritePatternSet patterns(kernels.getContext());
  populateMathPolynomialApproximationPatterns(patterns);
  return applyPatternsGreedily(kernels, std::move(patterns));
}

void lowerMemRefCopies(ModuleOp kernels) {
  SmallVector<memref::CopyOp> copies;
  kernels.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    OpBuilder builder(copy);
    linalg::makeMemRefCopyOp(builder, copy.getLoc(), copy.getSource(), copy.getTarget());
    copy.erase();
  }
}

FailureOr<KernelTable> Compilation::compileKernels(ModuleOp kernels) {
  if (failed(runPipeline(kernels, "tile", [](OpPassManager &pm) {
        pm.addPass(createTileDispatchesPass());
        addTextual(pm, "canonicalize,cse");
      })))
    return failure();
  if (failed(runPipeline(kernels, "bufferize", [](OpPassManager &pm) {
        addTextual(pm, "one-shot-bufferize{bufferize-function-boundaries "
                       "function-boundary-type-conversion=identity-layout-map},"
                       "drop-equivalent-buffer-results,canonicalize,cse,"
                       "buffer-deallocation-pipeline,canonicalize");
        pm.addPass(createDistributeWorkgroupsPass());
      })))
    return failure();

  KernelTable table;
  CodeObjectImage image;
  image.format = program::CodeFormat::elf;
  for (auto function : kernels.getOps<func::FuncOp>()) {
    KernelTable::Entry entry;
    entry.symbol = ("kiln_" + function.getSymName()).str();
    if (auto count = function->getAttrOfType<IntegerAttr>(kWorkgroupCountAttr))
      entry.workgroupCount = count.getInt();
    image.kernels.push_back(entry.symbol);
    table.dispatches[function.getSymName()] = entry;
  }

  lowerMemRefCopies(kernels);
  if (failed(approximateMath(kernels)))
    return kernels.emitError("the approximation of math functions did not converge");
  if (failed(runPipeline(kernels, "llvm", [](OpPassManager &pm) {
        addTextual(pm, "func.func(convert-linalg-to-loops),lower-affine,convert-scf-to-cf,"
                       "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
                       "convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,"
                       "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
                       "convert-arith-to-llvm,convert-cf-to-llvm,convert-index-to-llvm,"
                       "convert-ub-to-llvm,reconcile-unrealized-casts");
        pm.addPass(createExportCpuDispatchAbiPass());
      })))
    return failure();

  if (options_.onStage)
    options_.onStage("object");
  FailureOr<CpuObject> object = emitCpuSharedObject(kernels);
  if (failed(object))
    return failure();
  image.target = object->target;
  image.data = std::move(object->sharedObject);
  table.codeObjects.push_back(std::move(image));
  return table;
}

/// The architectures the toolkit's ptxas (CUDA 13) assembles for, and the PTX ISA version each
/// needs at least, as an NVVM target feature.
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

FailureOr<CodeObjectImage> Compilation::serializeCudaKernels(ModuleOp kernels,
                                                             ArrayRef<std::string> archs,
                                                             bool ptx) {
  std::string libdevice =
      options_.libdevice.empty() ? std::string(KILN_DEFAULT_LIBDEVICE) : options_.libdevice;
  std::string stage = ptx ? "ptx" : "cubin";
  if (failed(runPipeline(kernels, stage, [&](OpPassManager &pm) {
        for (const std::string &arch : archs) {
          std::string target = "nvvm-attach-target{module=" + kCudaKernelModule.str() +
                               " chip=" + arch + " features=" + ptxFeatures(arch)->str() + " O=3";
          if (!libdevice.empty())
            target += " l=" + libdevice;
          addTextual(pm, target + "}");
        }
        addTextual(pm, std::string("gpu-module-to-binary{format=") + (ptx ? "isa" : "bin") + "}");
      })))
    return failure();
  auto binary = kernels.lookupSymbol<gpu::BinaryOp>(kCudaKernelModule);
  if (!binary)
    return kernels.emitError("the CUDA kernels were not serialized");
  CodeObjectImage image;
  image.format = ptx ? program::CodeFormat::ptx : program::CodeFormat::cubin;
  for (Attribute attribute : binary.getObjects()) {
    auto object = cast<gpu::ObjectAttr>(attribute);
    auto target = cast<NVVM::NVVMTargetAttr>(object.getTarget());
    image.target = target.getChip().str();
    image.data = object.getObject().getValue().str();
  }
  return image;
}

FailureOr<KernelTable> Compilation::compileCudaKernels(ModuleOp kernels) {
  if (failed(runPipeline(kernels, "destinations", [](OpPassManager &pm) {
        TileDispatchesPassOptions tile;
        tile.tile = false;
        pm.addPass(createTileDispatchesPass(tile));
        addTextual(pm, "canonicalize,cse");
      })))
    return failure();
  if (failed(runPipeline(kernels, "bufferize", [](OpPassManager &pm) {
        addTextual(pm, "one-shot-bufferize{bufferize-function-boundaries "
                       "function-boundary-type-conversion=identity-layout-map},"
                       "drop-equivalent-buffer-results,canonicalize,cse");
      })))
    return failure();
  lowerMemRefCopies(kernels);
  if (failed(runPipeline(kernels, "gpu", [](OpPassManager &pm) {
        // Integer powers become calls of generated functions, which the kernels copy.
        addTextual(pm, "func.func(convert-linalg-to-parallel-loops),convert-math-to-funcs,"
                       "canonicalize,cse");
        pm.addPass(createOutlineCudaKernelsPass());
        addTextual(pm, "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
                       "canonicalize,cse,"
                       "gpu.module(convert-vector-to-llvm,convert-gpu-to-nvvm{"
                       "use-bare-ptr-memref-call-conv=1},canonicalize,cse,"
                       "reconcile-unrealized-casts)");
      })))
    return failure();

  // The kernels in launch order; every code object lists them alike.
  KernelTable table;
  std::vector<std::string> names;
  for (auto function : kernels.getOps<func::FuncOp>()) {
    auto launches = function->getAttrOfType<ArrayAttr>(kCudaLaunchesAttr);
    if (!launches)
      continue;
    KernelTable::Entry entry;
    if (auto scratch = function->getAttrOfType<ArrayAttr>(kCudaScratchAttr))
      entry.scratch.assign(scratch.begin(), scratch.end());
    entry.cudaLaunches.emplace();
    for (Attribute launch : launches) {
      auto fields = cast<ArrayAttr>(launch);
      names.push_back(cast<StringAttr>(fields[0]).getValue().str());
      entry.cudaLaunches->push_back(program::CudaLaunchAttr::get(
          context_, names.back(), cast<IntegerAttr>(fields[1]).getInt(),
          cast<IntegerAttr>(fields[2]).getInt()));
    }
    table.dispatches[function.getSymName()] = entry;
  }

  // PTX for the oldest architecture is the fallback: the driver compiles PTX for any GPU at least
  // as new as its target, so it covers every GPU the cubins do not (sm_86 and sm_89 for
  // sm_80,sm_90 take the sm_80 cubin; sm_100 and sm_120 compile the PTX). It is serialized from a
  // copy because serializing replaces the kernel module.
  OwningOpRef<ModuleOp> ptxCopy = cast<ModuleOp>(kernels->clone());
  for (const std::string &arch : options_.gpuArchs) {
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>(kernels->clone());
    FailureOr<CodeObjectImage> cubin = serializeCudaKernels(*copy, {arch}, /*ptx=*/false);
    if (failed(cubin))
      return failure();
    cubin->kernels = names;
    table.codeObjects.push_back(std::move(*cubin));
  }
  FailureOr<CodeObjectImage> ptx =
      serializeCudaKernels(*ptxCopy, {ptxFallbackArch(options_.gpuArchs)}, /*ptx=*/true);
  if (failed(ptx))
    return failure();
  ptx->kernels = names;
  table.codeObjects.push_back(std::move(*ptx));
  return table;
}

/// Replaces the compiled kernel module with the program.executable describing what it became.
void Compilation::replaceWithExecutable(ModuleOp kernels, const KernelTable &table) {
  OpBuilder builder(kernels);
  auto executable = program::ExecutableOp::create(builder, kernels.getLoc(), kKernelsSymbol);
  builder.setInsertionPointToStart(&executable.getBody().front());
  // In the order of the dispatch functions, for a stable printed form.
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
    } else {
      kernel.setSymbolAttr(builder.getStringAttr(entry.symbol));
      kernel.setWorkgroupsAttr(builder.getI64IntegerAttr(entry.workgroupCount));
    }
  }
  for (const CodeObjectImage &image : table.codeObjects) {
    SmallVector<StringRef> symbols(image.kernels.begin(), image.kernels.end());
    program::BinaryOp::create(builder, kernels.getLoc(), image.target, image.format,
                              builder.getStrArrayAttr(symbols),
                              builder.getStringAttr(image.data));
  }
  kernels.erase();
}

/// Binds each CUDA dispatch's scratch buffers: one allocation per buffer after its outputs,
/// live for the step only.
void Compilation::bindScratch(program::ProgramOp program) {
  for (auto dispatch : llvm::to_vector(program.getBody().front().getOps<program::DispatchOp>())) {
    auto kernel = SymbolTable::lookupNearestSymbolFrom<program::KernelOp>(
        dispatch, dispatch.getKernelAttr());
    if (!kernel || !kernel.getScratch())
      continue;
    OpBuilder builder(dispatch);
    SmallVector<Value> buffers;
    for (Attribute type : *kernel.getScratch())
      buffers.push_back(program::AllocOp::create(
          builder, dispatch.getLoc(), cast<MemRefType>(cast<TypeAttr>(type).getValue()),
          IntegerAttr()));
    dispatch.getOutputsMutable().append(buffers);
  }
}

FailureOr<std::string> Compilation::run() {
  if (options_.device != "cpu" && options_.device != "cuda")
    return module_.emitError() << "unknown device '" << options_.device
                               << "'; use --target cpu or cuda";
  if (options_.device == "cuda") {
    if (options_.gpuArchs.empty())
      return module_.emitError("no GPU architecture to compile for (--gpu-arch)");
    for (const std::string &arch : options_.gpuArchs)
      if (!ptxFeatures(arch))
        return module_.emitError()
               << "GPU architecture '" << arch
               << "' is not one ptxas assembles for: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, "
                  "sm_100, sm_103, sm_120 or sm_121";
  }
  FailureOr<func::FuncOp> entry = findEntryFunction(module_);
  if (failed(entry))
    return failure();
  std::string entryName = entry->getSymName().str();
  dump(module_, "input");

  if (failed(runPipeline(module_, "graph", [&](OpPassManager &pm) {
        RefineShapesPassOptions refine;
        refine.bindings.assign(options_.shapeBindings.begin(), options_.shapeBindings.end());
        pm.addNestedPass<func::FuncOp>(createRefineShapesPass(refine));
        pm.addPass(createCanonicalizerPass());
        // Convolutions and matmuls become library calls (oneDNN, or cuDNN and cuBLASLt), with
        // their epilogues fused.
        if (options_.device == "cuda")
          pm.addPass(createSelectCudaLibraryCallsPass());
        else
          pm.addPass(createSelectCpuLibraryCallsPass());
      })))
    return failure();
  for (auto [i, type] : llvm::enumerate(entry->getArgumentTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape()) {
      auto name = entry->getArgAttrOfType<StringAttr>(i, "kiln.name");
      return entry->emitError() << "input '" << (name ? name.getValue() : StringRef("?"))
                                << "' has type " << type
                                << "; bind its dynamic dimensions with --shape NAME=DIMS";
    }
  }

  // The lowering makes unsigned element types signless; the signature keeps the declared ones.
  auto declare = [&](Type type, auto setAttr) {
    auto tensor = cast<RankedTensorType>(type);
    if (tensor.getElementType().isUnsignedInteger())
      setAttr(TypeAttr::get(tensor));
  };
  for (auto [i, type] : llvm::enumerate(entry->getArgumentTypes()))
    declare(type, [&](TypeAttr attr) { entry->setArgAttr(i, "kiln.declared_type", attr); });
  for (auto [i, type] : llvm::enumerate(entry->getResultTypes()))
    if (isa<RankedTensorType>(type))
      declare(type, [&](TypeAttr attr) { entry->setResultAttr(i, "kiln.declared_type", attr); });

  if (failed(runPipeline(module_, "linalg", [&](OpPassManager &pm) {
        pm.addNestedPass<func::FuncOp>(createConvertGraphToLinalgPass());
      })))
    return failure();
  if (failed(checkLowered(*entry)))
    return failure();
  if (failed(runPipeline(module_, "kernels", [&](OpPassManager &pm) {
        addTextual(pm, "func.func(linalg-fuse-elementwise-ops),canonicalize,cse");
        FormDispatchesPassOptions form;
        form.entryName = entryName;
        pm.addPass(createFormDispatchesPass(form));
        addTextual(pm, "canonicalize,cse");
      })))
    return failure();

  if (failed(runPipeline(module_, "program", [&](OpPassManager &pm) {
        FormProgramPassOptions form;
        form.entry = entryName;
        form.device = options_.device;
        pm.addPass(createFormProgramPass(form));
        pm.addPass(createDeduplicateKernelsPass());
      })))
    return failure();

  auto kernels = module_.lookupSymbol<ModuleOp>(kKernelsSymbol);
  FailureOr<KernelTable> table = options_.device == "cuda" ? compileCudaKernels(kernels)
                                                            : compileKernels(kernels);
  if (failed(table))
    return failure();
  replaceWithExecutable(kernels, *table);
  FailureOr<program::ProgramOp> program = findProgram(module_);
  if (failed(program))
    return failure();
  bindScratch(*program);

  if (failed(runPipeline(module_, "memory", [&](OpPassManager &pm) {
        pm.addPass(createPlanMemoryPass());
        pm.addPass(createVerifyMemoryPlanPass());
      })))
    return failure();

  if (options_.onStage)
    options_.onStage("artifact");
  if (options_.report)
    printProgramReport(*program, *options_.report);
  ArtifactInfo info;
  info.source = options_.sourceName;
  info.producer = "kiln " KILN_VERSION_STRING;
  return writeArtifact(module_, info);
}

} // namespace

FailureOr<func::FuncOp> findEntryFunction(ModuleOp module) {
  if (auto main = module.lookupSymbol<func::FuncOp>("main"))
    if (!main.isExternal())
      return main;
  func::FuncOp entry;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal() || function.isPrivate())
      continue;
    if (entry)
      return module.emitError("the module has several public functions and none is @main");
    entry = function;
  }
  if (!entry)
    return module.emitError("the module has no function to compile");
  return entry;
}

FailureOr<std::string> compileToArtifact(ModuleOp module, const CompileOptions &options) {
  // The stages name upstream passes in textual pipelines, which needs them registered.
  static std::once_flag registered;
  std::call_once(registered, [] { registerAllPasses(); });
  return Compilation(module, options).run();
}

std::string ptxFallbackArch(ArrayRef<std::string> gpuArchs) {
  auto number = [](StringRef arch) {
    unsigned value = 0;
    (void)arch.drop_front(3).getAsInteger(10, value); // after "sm_"
    return value;
  };
  return *llvm::min_element(gpuArchs, [&](const std::string &a, const std::string &b) {
    return number(a) < number(b);
  });
}

} // namespace kiln
