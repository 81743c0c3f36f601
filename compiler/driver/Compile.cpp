//===- Compile.cpp - Compiling a graph program into a .kiln artifact ----------===//
//
// The stages, each a pass pipeline over the module:
//   graph      bind shapes, canonicalize, select library calls
//   linalg     lower to linalg/tensor, fuse elementwise producers into their consumers
//   kernels    outline kernel groups (dispatch functions) from the entry function
//   codegen    per kernel: destination passing, workgroup tiling, bufferization, lowering to
//              LLVM, the dispatch entry points; then host object code in a shared object
//   artifact   buffers, the static memory plan, steps, constants → .kiln bytes
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Compile.h"

#include "compiler/Registration.h"
#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/codegen/CpuObject.h"
#include "compiler/codegen/Passes.h"
#include "compiler/conversion/Passes.h"
#include "compiler/librarycalls/Passes.h"
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
  OwningOpRef<ModuleOp> splitKernels();
  FailureOr<KernelTable> compileKernels(ModuleOp kernels);
  FailureOr<KernelTable> compileCudaKernels(ModuleOp kernels);
  FailureOr<CodeObjectImage> serializeCudaKernels(ModuleOp kernels, ArrayRef<std::string> archs,
                                                  bool ptx);
  void addScratchResults(func::FuncOp entry);

  /// CUDA: the scratch buffers (kiln.cuda_scratch) of each dispatch function, as tensor types.
  llvm::StringMap<SmallVector<Type>> scratch_;

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

/// Moves the dispatch functions into a module of their own, leaving declarations behind.
OwningOpRef<ModuleOp> Compilation::splitKernels() {
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(module_.getLoc());
  OpBuilder builder(kernels->getBodyRegion());
  for (auto function : llvm::make_early_inc_range(module_.getOps<func::FuncOp>())) {
    if (!function->hasAttr(kDispatchAttr) || function.isExternal())
      continue;
    builder.clone(*function);
    function.getBody().getBlocks().clear();
    function.setPrivate();
  }
  return kernels;
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
  image.format = 0;
  for (auto function : kernels.getOps<func::FuncOp>()) {
    KernelTable::Entry entry;
    entry.codeObject = 0;
    entry.kernel = image.kernels.size();
    if (auto count = function->getAttrOfType<IntegerAttr>(kWorkgroupCountAttr))
      entry.workgroupCount = count.getInt();
    image.kernels.push_back(("kiln_" + function.getSymName()).str());
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
  image.format = ptx ? 2 : 1;
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
    if (auto scratch = function->getAttrOfType<ArrayAttr>(kCudaScratchAttr))
      for (Attribute type : scratch) {
        auto memref = cast<MemRefType>(cast<TypeAttr>(type).getValue());
        scratch_[function.getSymName()].push_back(
            RankedTensorType::get(memref.getShape(), memref.getElementType()));
      }
    auto launches = function->getAttrOfType<ArrayAttr>(kCudaLaunchesAttr);
    if (!launches)
      continue;
    KernelTable::Entry entry;
    for (Attribute launch : launches) {
      auto fields = cast<ArrayAttr>(launch);
      KernelTable::CudaLaunch cuda;
      cuda.kernel = names.size();
      names.push_back(cast<StringAttr>(fields[0]).getValue().str());
      cuda.blockSize = cast<IntegerAttr>(fields[1]).getInt();
      cuda.workItems = cast<IntegerAttr>(fields[2]).getInt();
      entry.cudaLaunches.push_back(cuda);
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

/// Gives each call of a dispatch with scratch buffers one more (unused) result per buffer, after
/// its own, so the memory plan reserves them for the duration of the call; the kernels take them
/// as bindings after the outputs.
void Compilation::addScratchResults(func::FuncOp entry) {
  SmallVector<func::CallOp> calls;
  entry.walk([&](func::CallOp call) {
    if (scratch_.count(call.getCallee()))
      calls.push_back(call);
  });
  for (func::CallOp call : calls) {
    const SmallVector<Type> &extra = scratch_[call.getCallee()];
    SmallVector<Type> results(call.getResultTypes());
    results.append(extra.begin(), extra.end());
    OpBuilder builder(call);
    auto replacement = func::CallOp::create(builder, call.getLoc(), call.getCalleeAttr(), results,
                                            call.getOperands());
    replacement->setDiscardableAttrs(call->getDiscardableAttrDictionary());
    for (auto [from, to] : llvm::zip(call.getResults(), replacement.getResults()))
      from.replaceAllUsesWith(to);
    if (auto callee = module_.lookupSymbol<func::FuncOp>(call.getCalleeAttr()))
      callee.setFunctionType(
          FunctionType::get(context_, callee.getArgumentTypes(), results));
    call.erase();
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
  ArtifactInfo info;
  info.inputTypes.assign(entry->getArgumentTypes().begin(), entry->getArgumentTypes().end());
  info.outputTypes.assign(entry->getResultTypes().begin(), entry->getResultTypes().end());

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

  OwningOpRef<ModuleOp> kernels = splitKernels();
  FailureOr<KernelTable> table = options_.device == "cuda" ? compileCudaKernels(*kernels)
                                                            : compileKernels(*kernels);
  if (failed(table))
    return failure();
  addScratchResults(*entry);

  if (options_.onStage)
    options_.onStage("artifact");
  info.device = options_.device;
  info.source = options_.sourceName;
  info.producer = "kiln " KILN_VERSION_STRING;
  return writeArtifact(*entry, *table, info, options_.report);
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
