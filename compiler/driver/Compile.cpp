//===- Compile.cpp - Compiling a graph program into a .kiln artifact ----------===//
//
// The driver runs the compile pipeline (compiler/pipelines: the same stages `kiln-opt
// --kiln-compile-pipeline` runs) one stage at a time, for progress and --dump-ir, then translates
// the planned program into the artifact:
//   graph      bind shapes, canonicalize, select library calls
//   linalg     lower to linalg/tensor
//   kernels    fuse elementwise producers, outline kernel groups (dispatch functions)
//   program    the entry function becomes a program.program over buffers; the dispatch
//              functions move into the nested module @kernels, identical ones merged
//   codegen    CPU: tile, bufferize, llvm, object; CUDA: destinations, bufferize, gpu, binaries;
//              @kernels becomes a program.executable
//   memory     the static memory plan, verified
//   artifact   the program translated into .kiln bytes
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Compile.h"
#include "compiler/driver/CrashContext.h"
#include "dialects/kiln/KilnAttributes.h"

#include "compiler/Registration.h"
#include "compiler/artifact/ArtifactWriter.h"
#include "compiler/fusion/CostModel.h"
#include "compiler/fusion/Passes.h"
#include "compiler/partition/Passes.h"
#include "compiler/pipelines/Pipelines.h"
#include "compiler/precision/Passes.h"
#include "compiler/program/Liveness.h"

#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

namespace kiln {

using namespace mlir;

namespace {

/// One device's compilation. `options.target` is resolved (resolveTarget).
class Compilation {
public:
  Compilation(ModuleOp module, const CompileOptions &options, const CompileRequest &request,
              const std::vector<std::string> *deviceArtifacts = nullptr,
              ArrayRef<std::string> partitionChoice = {})
      : module_(module), options_(options), request_(request), context_(module.getContext()),
        deviceArtifacts_(deviceArtifacts), partitionChoice_(partitionChoice) {}

  LogicalResult run(llvm::raw_ostream &os);

private:
  LogicalResult runStage(StringRef stage, const CompileOptions &pipeline);
  void dump(StringRef stage);
  LogicalResult checkStaticInputs(func::FuncOp entry);

  ModuleOp module_;
  const CompileOptions &options_;
  const CompileRequest &request_;
  MLIRContext *context_;
  const std::vector<std::string> *deviceArtifacts_;
  /// `--partition auto`: each mode's prediction and the choice, for the report.
  ArrayRef<std::string> partitionChoice_;
  int dumpIndex_ = 0;
};

void Compilation::dump(StringRef stage) {
  if (options_.dumpIrDirectory.empty())
    return;
  llvm::sys::fs::create_directories(options_.dumpIrDirectory);
  SmallString<128> path(options_.dumpIrDirectory);
  llvm::sys::path::append(path, llvm::formatv("{0:02}-{1}.mlir", dumpIndex_++, stage).str());
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (!error)
    module_->print(os);
}

LogicalResult Compilation::runStage(StringRef stage, const CompileOptions &pipeline) {
  if (request_.onStage)
    request_.onStage(stage);
  crash::Scope scope(("stage '" + stage + "' of the compile pipeline").str());
  PassManager pm(context_, ModuleOp::getOperationName());
  crash::instrument(pm);
  buildCompileStage(pm, stage, pipeline, *request_.shapeBindings);
  if (failed(pm.run(module_)))
    return failure();
  dump(stage);
  return success();
}

/// After the graph stage every input's shape is known, or lies within ranges the user gave
/// (`--shape-range`), or the user must bind it.
LogicalResult Compilation::checkStaticInputs(func::FuncOp entry) {
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    auto name = entry.getArgAttrOfType<StringAttr>(i, ::kiln::attrs::kName);
    StringRef inputName = name ? name.getValue() : StringRef("?");
    if (tensor && tensor.hasStaticShape())
      continue;
    // Each dynamic dimension has a range, or "?" (kiln.dim_bounds with no upper bound).
    auto bounds = entry.getArgAttrOfType<DenseI64ArrayAttr>(i, kDimBoundsAttr);
    if (!tensor || !bounds || bounds.size() != 2 * tensor.getRank())
      return entry.emitError() << "input '" << inputName << "' has type " << type
                               << "; bind its dynamic dimensions with --shape NAME=DIMS, give "
                                  "them ranges with --shape-range NAME=1..8x..., or leave them "
                                  "open with --shape NAME=?x...";
    std::optional<int64_t> open;
    for (int64_t d = 0; d < tensor.getRank(); ++d)
      if (tensor.isDynamicDim(d) && ShapedType::isDynamic(bounds[2 * d + 1]))
        open = d;
    if (open && options_.memoryLimit != 0)
      return entry.emitError() << "dimension " << *open << " of input '" << inputName
                               << "' has no upper bound, so no arena size holds for every run; "
                                  "--memory-limit needs ranges (--shape-range NAME=1..N)";
    if (options_.devices > 1)
      return entry.emitError() << "input '" << inputName << "' keeps dynamic dimensions (" << type
                               << "): a program split over devices needs them bound "
                               << "with --shape";
  }
  return success();
}

LogicalResult Compilation::run(llvm::raw_ostream &os) {
  const Target &target = options_.target;
  if (target.kind == TargetKind::Cuda &&
      failed(verifyGpuArchs(module_, target.gpuArchNames(), "--gpu-arch")))
    return failure();
  std::string error;
  if (!fusion::DeviceDescription::load(target.costModel, error))
    return module_.emitError() << "--cost-model: " << error;
  FailureOr<func::FuncOp> entry = findEntryFunction(module_);
  if (failed(entry))
    return failure();
  dump("input");

  ArrayAttr precisionReport;
  // The pipeline compiles the entry function found here; every other option goes unchanged.
  CompileOptions pipeline = options_;
  pipeline.entry = entry->getSymName().str();
  // The request's bindings (compileToArtifact resolved them) replace the options' shapes.
  pipeline.shapes.clear();
  for (StringRef stage : compileStages(target.kind)) {
    if (failed(runStage(stage, pipeline)))
      return failure();
    if (stage == "graph" && failed(checkStaticInputs(*entry)))
      return failure();
    if (stage == "graph")
      precisionReport = entry->getOperation()->getAttrOfType<ArrayAttr>(kPrecisionReportAttr);
  }

  FailureOr<program::ProgramOp> program = findProgram(module_);
  if (failed(program))
    return failure();
  if (request_.onStage)
    request_.onStage("artifact");
  if (llvm::raw_ostream *report = request_.report) {
    for (const std::string &line : partitionChoice_)
      *report << line << "\n";
    if (auto partition = module_->getAttrOfType<ArrayAttr>(kPartitionReportAttr))
      for (auto [i, line] : llvm::enumerate(partition.getAsRange<StringAttr>()))
        *report << (i == 0 ? "partition: " : "  ") << line.getValue() << "\n";
    if (precisionReport) {
      *report << "precision: " << nameOf(options_.precision) << ", " << precisionReport.size()
              << " candidate ops (index, precision, class, op, node, why)\n";
      for (auto line : precisionReport.getAsRange<StringAttr>())
        *report << "  " << line.getValue() << "\n";
    }
    if (auto fusion = module_->getAttrOfType<ArrayAttr>(kFusionReportAttr)) {
      for (auto [i, line] : llvm::enumerate(fusion.getAsRange<StringAttr>()))
        *report << (i == 0 ? "fusion: " : "  ") << line.getValue() << "\n";
    }
    printProgramReport(*program, *report);
    printMemoryPeak(*program, *report, program->getAlignment().value_or(64));
  }
  ArtifactInfo info;
  info.source = request_.sourceName;
  info.producer = "kiln " KILN_VERSION_STRING;
  if (options_.devices > 1) {
    info.partitionMode = std::string(nameOf(options_.partition));
    info.devices = static_cast<uint32_t>(options_.devices);
    info.rank = static_cast<uint32_t>(options_.deviceRank);
    info.deviceArtifacts = deviceArtifacts_;
  }
  crash::Scope scope("writing the artifact");
  return writeArtifact(module_, info, os);
}

/// `--partition auto`: the graph stage's shape and partitioning passes run on a copy of the
/// module for each mode the target takes (device 0's part), and the mode the cost model predicts
/// the shortest run for is chosen (each device on a host of its own; within 2% of the shortest,
/// the one whose device 0 holds the fewest weight bytes). `lines` gets each mode's prediction, or
/// why it cannot split this model, and the choice.
FailureOr<PartitionMode> choosePartition(ModuleOp module, const CompileOptions &options,
                                         const CompileRequest &request,
                                         std::vector<std::string> &lines) {
  struct Candidate {
    PartitionMode mode;
    bool splits = false;
    double milliseconds = 0;
    uint64_t weights = 0;
    std::string why;
  };
  SmallVector<Candidate> candidates;
  for (PartitionMode mode :
       {PartitionMode::Tensor, PartitionMode::Pipeline, PartitionMode::Batch}) {
    if (mode == PartitionMode::Pipeline && options.target.kind != TargetKind::Cpu)
      continue;
    Candidate candidate{mode};
    OwningOpRef<ModuleOp> copy(module.clone());
    CompileOptions pipeline;
    pipeline.target.kind = options.target.kind;
    pipeline.devices = options.devices;
    pipeline.deviceRank = 0;
    pipeline.partition = mode;
    pipeline.microBatches = options.microBatches;
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    crash::instrument(pm);
    addShapeAndPartitionPasses(pm, pipeline, *request.shapeBindings);
    {
      // A mode that cannot split the model is one answer among others, not an error.
      ScopedDiagnosticHandler quiet(module.getContext(), [&](Diagnostic &diagnostic) {
        if (candidate.why.empty() && diagnostic.getSeverity() == DiagnosticSeverity::Error)
          candidate.why = diagnostic.str();
        return success();
      });
      candidate.splits = succeeded(pm.run(*copy));
    }
    if (auto predicted = (*copy)->getAttrOfType<FloatAttr>(kPartitionPredictedAttr);
        candidate.splits && predicted) {
      candidate.milliseconds = predicted.getValueAsDouble();
      copy->walk([&](graph::ConstantOp constant) {
        candidate.weights += uint64_t(fusion::tensorBytes(constant.getType()));
      });
    } else {
      candidate.splits = false;
    }
    candidates.push_back(std::move(candidate));
  }
  const Candidate *best = nullptr;
  for (const Candidate &candidate : candidates)
    if (candidate.splits && (!best || candidate.milliseconds < best->milliseconds))
      best = &candidate;
  if (!best)
    return module.emitError() << "--partition auto: no mode splits this model over "
                              << options.devices << " devices ("
                              << (candidates.empty() ? std::string() : candidates.front().why)
                              << ")";
  double shortest = best->milliseconds;
  for (const Candidate &candidate : candidates)
    if (candidate.splits && candidate.milliseconds <= shortest * 1.02 &&
        candidate.weights < best->weights)
      best = &candidate;
  lines.push_back(llvm::formatv("partition auto over {0} devices (cost model 'cpu', one run, "
                                "each device on a host of its own):",
                                options.devices)
                      .str());
  for (const Candidate &candidate : candidates)
    lines.push_back(candidate.splits
                        ? llvm::formatv("  {0}: {1:F2} ms, device 0 holds {2:F2} MiB of weights{3}",
                                        nameOf(candidate.mode), candidate.milliseconds,
                                        double(candidate.weights) / (1 << 20),
                                        &candidate == best ? " (chosen)" : "")
                              .str()
                        : llvm::formatv("  {0}: cannot split this model ({1})",
                                        nameOf(candidate.mode), candidate.why)
                              .str());
  return best->mode;
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

LogicalResult compileToArtifact(ModuleOp module, const CompileOptions &given,
                                const CompileRequest &givenRequest, llvm::raw_ostream &os) {
  // The stages name upstream passes in textual pipelines, which needs them registered.
  static std::once_flag registered;
  std::call_once(registered, [] { registerAllPasses(); });
  // The target is resolved once (the host CPU's features, the cost model's device) and every
  // device's pipeline reads it unchanged.
  CompileOptions options = given;
  if (std::string error = resolveTarget(options.target); !error.empty())
    return module.emitError() << error;
  CompileRequest request = givenRequest;
  if (!request.shapeBindings)
    request.shapeBindings = shapeBindingsOf(options.shapes);
  if (options.devices < 1)
    return module.emitError() << "--devices " << options.devices << " is not a device count";
  if (options.devices == 1)
    return Compilation(module, options, request).run(os);
  StringRef partition = nameOf(options.partition);
  if (options.microBatches < 1)
    return module.emitError() << "--micro-batches " << options.microBatches
                              << " is not a count of micro-batches";
  if (options.microBatches > 1 && options.partition != PartitionMode::Pipeline &&
      options.partition != PartitionMode::Auto)
    return module.emitError() << "--micro-batches takes --partition pipeline (or auto), not "
                              << partition;
  if (options.partition == PartitionMode::Pipeline && options.target.kind != TargetKind::Cpu)
    return module.emitError() << "--partition " << partition
                              << " runs on CPU devices (--target cpu)";
  if (options.streams > 1)
    return module.emitError() << "--devices " << options.devices << " with --streams "
                              << options.streams
                              << " is not supported: a device's collectives run in program order";
  CompileOptions chosen = options;
  std::vector<std::string> choice;
  if (options.partition == PartitionMode::Auto) {
    FailureOr<PartitionMode> mode = choosePartition(module, options, request, choice);
    if (failed(mode))
      return failure();
    chosen.partition = *mode;
  }
  // Progress names the device each stage is for.
  auto forDevice = [&request](CompileRequest &device, int64_t rank) {
    if (request.onStage)
      device.onStage = [&request, rank](StringRef stage) {
        request.onStage(llvm::formatv("device {0}: {1}", rank, stage).str());
      };
  };
  // Every device's program from its own copy of the graph (the weights are shared until the
  // partitioner slices them); device 0's artifact is written last and carries the others.
  std::vector<std::string> others;
  for (int64_t rank = 1; rank < options.devices; ++rank) {
    OwningOpRef<ModuleOp> copy(module.clone());
    CompileOptions device = chosen;
    device.deviceRank = rank;
    CompileRequest deviceRequest = request;
    forDevice(deviceRequest, rank);
    deviceRequest.report = nullptr;
    if (!options.dumpIrDirectory.empty())
      device.dumpIrDirectory = llvm::formatv("{0}/device{1}", options.dumpIrDirectory, rank).str();
    std::string bytes;
    llvm::raw_string_ostream deviceOs(bytes);
    if (failed(Compilation(*copy, device, deviceRequest).run(deviceOs)))
      return failure();
    deviceOs.flush();
    others.push_back(std::move(bytes));
  }
  CompileOptions first = chosen;
  first.deviceRank = 0;
  CompileRequest firstRequest = request;
  forDevice(firstRequest, 0);
  return Compilation(module, first, firstRequest, &others, choice).run(os);
}

FailureOr<std::string> compileToArtifact(ModuleOp module, const CompileOptions &options,
                                         const CompileRequest &request) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(compileToArtifact(module, options, request, os)))
    return failure();
  os.flush();
  return bytes;
}

} // namespace kiln
