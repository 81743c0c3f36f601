//===- Pipelines.cpp - Kiln's lowering pipelines ------------------------------===//

#include "compiler/pipelines/Pipelines.h"

#include "compiler/codegen/Passes.h"
#include "compiler/conversion/Passes.h"
#include "compiler/fusion/CostModel.h"
#include "compiler/fusion/Passes.h"
#include "compiler/librarycalls/Passes.h"
#include "compiler/partition/Passes.h"
#include "compiler/precision/Passes.h"
#include "compiler/program/Passes.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln {
namespace {

/// Appends a textual upstream pipeline; the passes it names are registered by
/// registerAllPasses. A malformed pipeline is a programming error caught by the lit tests.
void addTextual(mlir::OpPassManager &pm, llvm::StringRef pipeline) {
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error(llvm::Twine("invalid built-in pipeline: ") + pipeline);
}

/// Bufferizes whole functions, their signatures included, with identity layouts: kernels take
/// dense buffers.
constexpr llvm::StringLiteral kBufferizeFunctions =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map}";

} // namespace

void buildGraphToBuffersPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(createConvertGraphToLinalgPass());
  addTextual(pm, "func.func(linalg-fuse-elementwise-ops),canonicalize,cse");
  addTextual(pm, kBufferizeFunctions);
}

void buildCudaPipeline(mlir::OpPassManager &pm, const CudaPipelineOptions &options) {
  buildGraphToBuffersPipeline(pm);
  addTextual(pm, "func.func(convert-linalg-to-parallel-loops,gpu-map-parallel-loops,"
                 "convert-parallel-loops-to-gpu),lower-affine,gpu-kernel-outlining");
  std::string target = "nvvm-attach-target{chip=" + options.chip.getValue() +
                       " features=" + options.features.getValue();
  if (!options.libdevice.getValue().empty())
    target += " l=" + options.libdevice.getValue();
  target += "}";
  // The steps of upstream's gpu-lower-to-nvvm-pipeline, with Kiln's target attached (it links
  // libdevice, which the upstream pipeline's own target does not).
  addTextual(pm, "convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,"
                 "convert-nvvm-to-llvm,convert-func-to-llvm,expand-strided-metadata");
  addTextual(pm, target);
  addTextual(pm, "lower-affine,convert-arith-to-llvm,convert-index-to-llvm,canonicalize,cse,"
                 "gpu.module(convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),"
                 "gpu-to-llvm,reconcile-unrealized-casts");
  addTextual(pm, "gpu-module-to-binary{format=" + options.format.getValue() + "}");
}

llvm::ArrayRef<llvm::StringRef> compileStages(TargetKind target) {
  static const llvm::StringRef cpu[] = {"graph", "linalg", "kernels", "program", "tile",
                                        "bufferize", "llvm", "object", "memory"};
  static const llvm::StringRef cuda[] = {"graph",     "linalg",    "kernels", "program",
                                         "destinations", "bufferize", "gpu",     "binaries",
                                         "memory"};
  if (target == TargetKind::Cuda)
    return cuda;
  return cpu;
}

std::vector<ShapeBinding> shapeBindingsOf(llvm::ArrayRef<InputShape> shapes) {
  std::vector<ShapeBinding> bindings;
  for (const InputShape &shape : shapes)
    bindings.push_back(
        {shape.name, llvm::SmallVector<int64_t>(shape.dims.begin(), shape.dims.end()),
         llvm::SmallVector<std::pair<int64_t, int64_t>>(shape.bounds.begin(), shape.bounds.end())});
  return bindings;
}

void addShapeAndPartitionPasses(mlir::OpPassManager &pm, const CompileOptions &options,
                                llvm::ArrayRef<ShapeBinding> shapes) {
  bool cuda = options.target.kind == TargetKind::Cuda;
  if (!shapes.empty()) {
    pm.addNestedPass<mlir::func::FuncOp>(createRefineShapesPass(shapes));
  } else {
    pm.addNestedPass<mlir::func::FuncOp>(createRefineShapesPass(shapeBindingsOf(options.shapes)));
  }
  pm.addPass(mlir::createCanonicalizerPass());
  if (options.devices <= 1)
    return;
  if (options.partition == PartitionMode::Pipeline) {
    // Pipeline parallelism: this device's stage, with broadcasts of what crosses stages.
    PartitionPipelinePassOptions partition;
    partition.devices = options.devices;
    partition.rank = options.deviceRank;
    partition.microBatches = options.microBatches;
    pm.addPass(createPartitionPipelinePass(partition));
  } else if (options.partition == PartitionMode::Batch) {
    // Batch parallelism: this device's samples, the outputs gathered from every device.
    PartitionBatchPassOptions partition;
    partition.devices = options.devices;
    partition.rank = options.deviceRank;
    partition.gather = cuda ? "nccl.all_gather" : "gloo.all_gather";
    pm.addPass(createPartitionBatchPass(partition));
  } else {
    // Tensor parallelism: this device's part of every column- and row-parallel region, with an
    // all-reduce after each row-parallel matmul (NCCL on CUDA, Gloo on the CPU).
    PartitionTensorPassOptions partition;
    partition.devices = options.devices;
    partition.rank = options.deviceRank;
    partition.collective = cuda ? "nccl.all_reduce" : "gloo.all_reduce";
    pm.addPass(createPartitionTensorPass(partition));
  }
  pm.addPass(mlir::createCanonicalizerPass());
}

void buildCompileStage(mlir::OpPassManager &pm, llvm::StringRef stage,
                       const CompileOptions &options, llvm::ArrayRef<ShapeBinding> shapes) {
  const Target &target = options.target;
  bool cuda = target.kind == TargetKind::Cuda;
  if (stage == "graph") {
    addShapeAndPartitionPasses(pm, options, shapes);
    // Products of one input with several weights (query, key and value) become one.
    pm.addNestedPass<mlir::func::FuncOp>(createFuseSiblingMatmulsPass());
    if (options.precision != Precision::Fp32) {
      AssignPrecisionPassOptions assign;
      assign.precision = options.precision;
      assign.keepIoTypes = options.keepIoTypes;
      assign.keepHigh.assign(options.keepHigh.begin(), options.keepHigh.end());
      if (options.precisionLow)
        assign.low.assign(options.precisionLow->begin(), options.precisionLow->end());
      assign.explicitLow = options.precisionLow.has_value();
      assign.evidence.assign(options.precisionEvidence.begin(), options.precisionEvidence.end());
      assign.emulate = options.emulatePrecision;
      pm.addNestedPass<mlir::func::FuncOp>(createAssignPrecisionPass(assign));
      // Casts of constants fold: the weights are stored in the low precision.
      pm.addPass(mlir::createCanonicalizerPass());
    }
    // Convolutions and matmuls become library calls (oneDNN, or cuDNN and cuBLASLt), with their
    // epilogues fused.
    if (cuda) {
      SelectCudaLibraryCallsPassOptions select;
      select.fuseAttention = options.attention != AttentionMode::Unfused;
      select.device = target.costModel;
      pm.addPass(createSelectCudaLibraryCallsPass(select));
    } else {
      // oneDNN computes bf16 where the target CPU has AVX512-BF16 (the CPU artifact is built
      // for it; compiler/codegen/cpu/CpuObject.cpp).
      SelectCpuLibraryCallsPassOptions select;
      select.nativeBf16 = target.hasCpuFeature("avx512bf16");
      select.fuseAttention = options.attention != AttentionMode::Unfused;
      select.device = target.costModel;
      pm.addPass(createSelectCpuLibraryCallsPass(select));
    }
    if (cuda && options.convLayout != ConvLayout::Nchw) {
      // Half-precision convolutions (every one with nhwc) take NHWC, what cuDNN's tensor-core
      // kernels want.
      CudaChannelsLastPassOptions channelsLast;
      channelsLast.allTypes = options.convLayout == ConvLayout::Nhwc;
      pm.addPass(createCudaChannelsLastPass(channelsLast));
      pm.addPass(mlir::createCanonicalizerPass());
      pm.addPass(mlir::createCSEPass());
    } else if (!cuda && options.convLayout != ConvLayout::Nchw) {
      // oneDNN's fast convolutions run channels-last (or channel-blocked): NHWC values between
      // them spare a conversion in and out of every call.
      pm.addPass(createCpuChannelsLastPass());
      pm.addPass(mlir::createCanonicalizerPass());
      pm.addPass(mlir::createCSEPass());
    }
  } else if (stage == "linalg") {
    pm.addNestedPass<mlir::func::FuncOp>(createConvertGraphToLinalgPass());
    pm.addPass(createVerifyGraphLoweredPass());
  } else if (stage == "kernels") {
    pm.addNestedPass<mlir::func::FuncOp>(createGeneralizeReductionsPass());
    pm.addNestedPass<mlir::func::FuncOp>(createFoldDataMovementPass());
    // Over dynamic shapes the sizes of a result read its producer (tensor.dim of the value):
    // read from the inputs instead, so that the producer's one reader is the consumer that
    // fuses it.
    addTextual(pm, "resolve-ranked-shaped-type-result-dims,canonicalize,cse");
    // Costly work repeated across a broadcast is worth a kernel of its own on a CPU; a GPU
    // computes millions of exponentials in the time of one launch.
    FuseElementwisePassOptions elementwise;
    FuseSharedProducersPassOptions shared;
    if (cuda)
      elementwise.maxRepeatedEvaluations = shared.maxRepeatedEvaluations = 1 << 22;
    shared.device = target.costModel;
    pm.addNestedPass<mlir::func::FuncOp>(createFuseElementwisePass(elementwise));
    // Elementwise fusion propagates reshapes through reductions (a global pooling's kept unit
    // dims become an expansion of its input): folded into their readers again, a producer read
    // by such a reduction and by another kernel has only generics as readers, which
    // kiln-fuse-shared-producers copies it into (EfficientNet's SiLU before its
    // squeeze-and-excitation, on CUDA).
    pm.addNestedPass<mlir::func::FuncOp>(createFoldDataMovementPass());
    pm.addNestedPass<mlir::func::FuncOp>(createFuseSharedProducersPass(shared));
    // Dimensions of the run read from intermediate values (an exporter's Shape of a hidden
    // state) resolve to the inputs' dimensions, so no value is kept alive for its shape alone.
    addTextual(pm, "resolve-ranked-shaped-type-result-dims,canonicalize,cse");
    PlanFusionPassOptions plan;
    plan.entryName = options.entry;
    plan.device = target.costModel;
    // A CUDA group becomes one row kernel (a warp per row), which passes one value per row
    // between its ops.
    plan.rowValuesOnly = cuda;
    // Independent kernels on streams of their own would wait for each other in one kernel.
    plan.horizontal = options.streams <= 1;
    pm.addPass(createPlanFusionPass(plan));
    FormDispatchesPassOptions form;
    form.entryName = options.entry;
    pm.addPass(createFormDispatchesPass(form));
    addTextual(pm, "resolve-ranked-shaped-type-result-dims,canonicalize,cse");
  } else if (stage == "program") {
    FormProgramPassOptions form;
    form.entry = options.entry;
    form.device = std::string(nameOf(target.kind));
    pm.addPass(createFormProgramPass(form));
    pm.addPass(createDeduplicateKernelsPass());
  } else if (stage == "tile") {
    mlir::OpPassManager &kernels = pm.nest<mlir::ModuleOp>();
    kernels.addPass(createTileDispatchesPass());
    addTextual(kernels, "canonicalize,cse");
  } else if (stage == "destinations") {
    mlir::OpPassManager &kernels = pm.nest<mlir::ModuleOp>();
    kernels.addPass(createSplitReductionsPass());
    TileDispatchesPassOptions tile;
    tile.tile = false;
    tile.rowTiles = true;
    kernels.addPass(createTileDispatchesPass(tile));
    addTextual(kernels, "canonicalize,cse");
  } else if (stage == "bufferize") {
    mlir::OpPassManager &kernels = pm.nest<mlir::ModuleOp>();
    addTextual(kernels, kBufferizeFunctions);
    addTextual(kernels, "drop-equivalent-buffer-results,canonicalize,cse");
    if (!cuda) {
      addTextual(kernels, "buffer-deallocation-pipeline,canonicalize");
      kernels.addPass(createDistributeWorkgroupsPass());
    }
    kernels.addPass(createLowerMemRefCopiesPass());
  } else if (stage == "llvm") {
    mlir::OpPassManager &kernels = pm.nest<mlir::ModuleOp>();
    kernels.addPass(createApproximateMathPass());
    kernels.addPass(createReassociateReductionsPass());
    kernels.addPass(createExpandFloat8ConversionsPass());
    kernels.addPass(createEraseEmptyBindingsPass());
    kernels.addPass(createBindRunSizesPass());
    kernels.addPass(createLowerLinalgToLoopsPass());
    addTextual(kernels, "lower-affine,convert-scf-to-cf,"
                        "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
                        "convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,"
                        "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
                        "convert-arith-to-llvm,convert-cf-to-llvm,convert-index-to-llvm,"
                        "convert-ub-to-llvm,reconcile-unrealized-casts");
    kernels.addPass(createAttachAccessGroupsPass());
    kernels.addPass(createExportCpuDispatchAbiPass());
  } else if (stage == "object") {
    EmitCpuExecutablePassOptions emit;
    emit.cpu = target.cpu;
    emit.features.assign(target.cpuFeatures.begin(), target.cpuFeatures.end());
    pm.addPass(createEmitCpuExecutablePass(emit));
  } else if (stage == "gpu") {
    mlir::OpPassManager &kernels = pm.nest<mlir::ModuleOp>();
    kernels.addPass(createEraseEmptyBindingsPass());
    // Integer powers become calls of generated functions, which the kernels copy.
    addTextual(kernels, "func.func(convert-linalg-to-parallel-loops),convert-math-to-funcs,"
                        "canonicalize,cse");
    kernels.addPass(createExpandFloat8ConversionsPass());
    // A program for a range of shapes: kernels read their bindings' dimensions from the run's
    // sizes, which the runtime uploads with the inputs.
    BindRunSizesPassOptions runSizes;
    runSizes.workgroupId = false;
    kernels.addPass(createBindRunSizesPass(runSizes));
    addTextual(kernels, "canonicalize,cse");
    kernels.addPass(createOutlineCudaKernelsPass());
    // f32 attention calls become kernels of their own beside the others (the program's steps
    // and the kernel module both change, so the pass runs on the whole module).
    pm.addPass(createGenerateCudaAttentionPass());
    mlir::OpPassManager &lower = pm.nest<mlir::ModuleOp>();
    addTextual(lower, "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
                        "canonicalize,cse,"
                        "gpu.module(convert-vector-to-llvm,convert-gpu-to-nvvm{"
                        "use-bare-ptr-memref-call-conv=1},canonicalize,cse,"
                        "reconcile-unrealized-casts)");
  } else if (stage == "binaries") {
    EmitCudaExecutablePassOptions emit;
    std::vector<std::string> archs = target.gpuArchNames();
    emit.gpuArchs.assign(archs.begin(), archs.end());
    emit.libdevice = target.libdevice.empty() ? KILN_DEFAULT_LIBDEVICE : target.libdevice;
    pm.addPass(createEmitCudaExecutablePass(emit));
  } else if (stage == "memory") {
    if (options.streams != 1) {
      AssignStreamsPassOptions assign;
      assign.streams = options.streams;
      pm.addPass(createAssignStreamsPass(assign));
    }
    if (options.memoryLimit > 0) {
      RematerializePassOptions remat;
      remat.memoryLimit = static_cast<int64_t>(options.memoryLimit);
      pm.addPass(createRematerializePass(remat));
    }
    PlanMemoryPassOptions plan;
    plan.memoryPlan = std::string(nameOf(options.memoryPlan));
    pm.addPass(createPlanMemoryPass(plan));
    pm.addPass(createVerifyMemoryPlanPass());
  } else {
    llvm::report_fatal_error(llvm::Twine("unknown compile stage: ") + stage);
  }
}

void buildCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &options) {
  for (llvm::StringRef stage : compileStages(options.target.kind)) {
    buildCompileStage(pm, stage, options);
    if (stage == options.stopAfter)
      break;
  }
}

std::string parseCompilePipelineOptions(llvm::StringRef text, CompileOptions &options) {
  // NAME=VALUE pairs separated by spaces; a list's values are separated by commas (as
  // mlir::PassOptions' lists are), and a flag may stand alone.
  llvm::SmallVector<llvm::StringRef> pairs;
  text.split(pairs, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef pair : pairs) {
    auto [name, value] = pair.split('=');
    const OptionSpec *spec = findCompileOption(std::string_view(name.data(), name.size()));
    if (!spec || !(spec->scopes & kPipelineScope))
      return "no option '" + name.str() + "'";
    std::vector<std::string> values;
    if (spec->arity == OptionSpec::Arity::List) {
      llvm::SmallVector<llvm::StringRef> items;
      value.split(items, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
      for (llvm::StringRef item : items)
        values.push_back(item.str());
    } else {
      values.push_back(value.str());
    }
    if (std::string error = spec->set(options, values); !error.empty())
      return name.str() + ": " + error;
  }
  return resolveTarget(options.target);
}

void registerPipelines() {
  mlir::registerPassPipeline(
      "kiln-compile-pipeline",
      "What kiln compile runs: graph to a planned program with compiled kernels",
      [](mlir::OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler) {
        CompileOptions options;
        if (std::string error = parseCompilePipelineOptions(text, options); !error.empty())
          return errorHandler("kiln-compile-pipeline: " + error);
        buildCompilePipeline(pm, options);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>) {});
  mlir::PassPipelineRegistration<CudaPipelineOptions>(
      "kiln-cuda-pipeline",
      "Lowers a graph program to host code and gpu.binary kernels for one NVIDIA architecture",
      [](mlir::OpPassManager &pm, const CudaPipelineOptions &options) {
        buildCudaPipeline(pm, options);
      });
}

} // namespace kiln
