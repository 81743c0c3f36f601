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

/// The values of --partition.
constexpr StringLiteral kPartitionModes[] = {"auto", "tensor", "pipeline", "batch"};

class Compilation {
public:
  Compilation(ModuleOp module, const CompileOptions &options,
              const std::vector<std::string> *deviceArtifacts = nullptr,
              ArrayRef<std::string> partitionChoice = {})
      : module_(module), options_(options), context_(module.getContext()),
        deviceArtifacts_(deviceArtifacts), partitionChoice_(partitionChoice) {}

  LogicalResult run(llvm::raw_ostream &os);

private:
  LogicalResult runStage(StringRef stage, const CompilePipelineOptions &pipeline);
  void dump(StringRef stage);
  LogicalResult checkStaticInputs(func::FuncOp entry);

  ModuleOp module_;
  const CompileOptions &options_;
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

LogicalResult Compilation::runStage(StringRef stage, const CompilePipelineOptions &pipeline) {
  if (options_.onStage)
    options_.onStage(stage);
  PassManager pm(context_, ModuleOp::getOperationName());
  buildCompileStage(pm, stage, pipeline, options_.shapeBindings);
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
    auto name = entry.getArgAttrOfType<StringAttr>(i, "kiln.name");
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
  if (options_.device != "cpu" && options_.device != "cuda")
    return module_.emitError() << "unknown device '" << options_.device
                               << "'; use --target cpu or cuda";
  if (options_.device == "cuda" && failed(verifyGpuArchs(module_, options_.gpuArchs, "--gpu-arch")))
    return failure();
  if (!options_.costModel.empty()) {
    std::string error;
    if (!fusion::DeviceDescription::load(options_.costModel, error))
      return module_.emitError() << "--cost-model: " << error;
  }
  FailureOr<func::FuncOp> entry = findEntryFunction(module_);
  if (failed(entry))
    return failure();
  dump("input");

  ArrayAttr precisionReport;
  CompilePipelineOptions pipeline;
  pipeline.target = options_.device;
  pipeline.entry = entry->getSymName().str();
  pipeline.gpuArchs = options_.gpuArchs;
  pipeline.costModel = options_.costModel;
  pipeline.memoryLimit = static_cast<int64_t>(options_.memoryLimit);
  pipeline.memoryPlan = options_.memoryPlan;
  pipeline.streams = options_.streams;
  pipeline.precision = options_.precision;
  pipeline.keepIoTypes = options_.keepIoTypes;
  pipeline.convLayout = options_.convLayout;
  pipeline.attention = options_.attention;
  pipeline.keepHigh = options_.keepHigh;
  if (options_.precisionLow) {
    pipeline.explicitLow = true;
    pipeline.precisionLow = *options_.precisionLow;
  }
  pipeline.emulatePrecision = options_.emulatePrecision;
  pipeline.devices = options_.devices;
  pipeline.deviceRank = options_.deviceRank;
  pipeline.partition = options_.partition;
  pipeline.microBatches = options_.microBatches;
  pipeline.precisionEvidence = options_.precisionEvidence;
  if (!options_.libdevice.empty())
    pipeline.libdevice = options_.libdevice;
  for (StringRef stage : compileStages(options_.device)) {
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
  if (options_.onStage)
    options_.onStage("artifact");
  if (options_.report) {
    for (const std::string &line : partitionChoice_)
      *options_.report << line << "\n";
    if (auto partition = module_->getAttrOfType<ArrayAttr>(kPartitionReportAttr))
      for (auto [i, line] : llvm::enumerate(partition.getAsRange<StringAttr>()))
        *options_.report << (i == 0 ? "partition: " : "  ") << line.getValue() << "\n";
    if (precisionReport) {
      *options_.report << "precision: " << options_.precision << ", " << precisionReport.size()
                       << " candidate ops (index, precision, class, op, node, why)\n";
      for (auto line : precisionReport.getAsRange<StringAttr>())
        *options_.report << "  " << line.getValue() << "\n";
    }
    if (auto fusion = module_->getAttrOfType<ArrayAttr>(kFusionReportAttr)) {
      for (auto [i, line] : llvm::enumerate(fusion.getAsRange<StringAttr>()))
        *options_.report << (i == 0 ? "fusion: " : "  ") << line.getValue() << "\n";
    }
    printProgramReport(*program, *options_.report);
    printMemoryPeak(*program, *options_.report, program->getAlignment().value_or(64));
  }
  ArtifactInfo info;
  info.source = options_.sourceName;
  info.producer = "kiln " KILN_VERSION_STRING;
  if (options_.devices > 1) {
    info.partitionMode = options_.partition;
    info.devices = static_cast<uint32_t>(options_.devices);
    info.rank = static_cast<uint32_t>(options_.deviceRank);
    info.deviceArtifacts = deviceArtifacts_;
  }
  return writeArtifact(module_, info, os);
}

/// `--partition auto`: the graph stage's shape and partitioning passes run on a copy of the
/// module for each mode the target takes (device 0's part), and the mode the cost model predicts
/// the shortest run for is chosen (each device on a host of its own; within 2% of the shortest,
/// the one whose device 0 holds the fewest weight bytes). `lines` gets each mode's prediction, or
/// why it cannot split this model, and the choice.
FailureOr<std::string> choosePartition(ModuleOp module, const CompileOptions &options,
                                       std::vector<std::string> &lines) {
  struct Candidate {
    StringRef mode;
    bool splits = false;
    double milliseconds = 0;
    uint64_t weights = 0;
    std::string why;
  };
  SmallVector<Candidate> candidates;
  for (StringRef mode : kPartitionModes) {
    if (mode == "auto" || (mode == "pipeline" && options.device != "cpu"))
      continue;
    Candidate candidate{mode};
    OwningOpRef<ModuleOp> copy(module.clone());
    CompilePipelineOptions pipeline;
    pipeline.target = options.device;
    pipeline.devices = options.devices;
    pipeline.deviceRank = 0;
    pipeline.partition = mode.str();
    pipeline.microBatches = options.microBatches;
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    addShapeAndPartitionPasses(pm, pipeline, options.shapeBindings);
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
    lines.push_back(
        candidate.splits
            ? llvm::formatv("  {0}: {1:F2} ms, device 0 holds {2:F2} MiB of weights{3}",
                            candidate.mode, candidate.milliseconds,
                            double(candidate.weights) / (1 << 20),
                            &candidate == best ? " (chosen)" : "")
                  .str()
            : llvm::formatv("  {0}: cannot split this model ({1})", candidate.mode, candidate.why)
                  .str());
  return best->mode.str();
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

LogicalResult compileToArtifact(ModuleOp module, const CompileOptions &options,
                                llvm::raw_ostream &os) {
  // The stages name upstream passes in textual pipelines, which needs them registered.
  static std::once_flag registered;
  std::call_once(registered, [] { registerAllPasses(); });
  if (options.devices < 1)
    return module.emitError() << "--devices " << options.devices << " is not a device count";
  if (options.devices == 1)
    return Compilation(module, options).run(os);
  if (!llvm::is_contained(kPartitionModes, options.partition))
    return module.emitError() << "--partition " << options.partition
                              << " is not supported; use auto, tensor, pipeline or batch";
  if (options.microBatches < 1)
    return module.emitError() << "--micro-batches " << options.microBatches
                              << " is not a count of micro-batches";
  if (options.microBatches > 1 && options.partition != "pipeline" && options.partition != "auto")
    return module.emitError() << "--micro-batches takes --partition pipeline (or auto), not "
                              << options.partition;
  if (options.partition == "pipeline" && options.device != "cpu")
    return module.emitError() << "--partition " << options.partition
                              << " runs on CPU devices (--target cpu)";
  if (options.streams > 1)
    return module.emitError() << "--devices " << options.devices << " with --streams "
                              << options.streams
                              << " is not supported: a device's collectives run in program order";
  CompileOptions chosen = options;
  std::vector<std::string> choice;
  if (options.partition == "auto") {
    FailureOr<std::string> mode = choosePartition(module, options, choice);
    if (failed(mode))
      return failure();
    chosen.partition = *mode;
  }
  // Progress names the device each stage is for.
  auto forDevice = [&options](CompileOptions &device, int64_t rank) {
    device.deviceRank = rank;
    if (options.onStage)
      device.onStage = [&options, rank](StringRef stage) {
        options.onStage(llvm::formatv("device {0}: {1}", rank, stage).str());
      };
  };
  // Every device's program from its own copy of the graph (the weights are shared until the
  // partitioner slices them); device 0's artifact is written last and carries the others.
  std::vector<std::string> others;
  for (int64_t rank = 1; rank < options.devices; ++rank) {
    OwningOpRef<ModuleOp> copy(module.clone());
    CompileOptions device = chosen;
    forDevice(device, rank);
    device.report = nullptr;
    if (!options.dumpIrDirectory.empty())
      device.dumpIrDirectory = llvm::formatv("{0}/device{1}", options.dumpIrDirectory, rank).str();
    std::string bytes;
    llvm::raw_string_ostream deviceOs(bytes);
    if (failed(Compilation(*copy, device).run(deviceOs)))
      return failure();
    deviceOs.flush();
    others.push_back(std::move(bytes));
  }
  CompileOptions first = chosen;
  forDevice(first, 0);
  return Compilation(module, first, &others, choice).run(os);
}

FailureOr<std::string> compileToArtifact(ModuleOp module, const CompileOptions &options) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(compileToArtifact(module, options, os)))
    return failure();
  os.flush();
  return bytes;
}

} // namespace kiln
