//===- kiln.cpp - The kiln command-line tool ---------------------------------===//
//
// `kiln check MODEL.mlir` parses a graph-dialect program, verifies it, binds and propagates shapes,
// and prints its signature and op counts. `kiln import MODEL.onnx` translates an ONNX model into a
// graph-dialect program. `kiln compile`, `run`, `inspect` and `bench` (Commands.h) compile models
// into .kiln artifacts and execute them.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"
#include "Commands.h"
#include "CompileFlags.h"
#include "Program.h"
#include "compiler/Registration.h"
#include "compiler/driver/CrashContext.h"
#include "compiler/transforms/Passes.h"
#include "dialects/kiln/KilnAttributes.h"
#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/importer/Importer.h"
#include "kiln/runtime.h"
#include "runtime/src/cuda/sim/register_simulated_cuda.h"
#include "tools/kiln-conformance/ConformanceTool.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace {

using kiln::cli::kExitUsage;
constexpr int kExitInvalidModel = kiln::cli::kExitFailure;

std::string describeType(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

int runCheck(const std::string &modelPath, const std::vector<std::string> &shapes,
             bool printIR) {
  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics quote the offending line of the model, as file:line:col.
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(modelPath, sourceMgr, mlir::ParserConfig(&context));
  if (!module) {
    llvm::errs() << "kiln: error: " << modelPath << ": not a valid graph program\n";
    return kExitInvalidModel;
  }
  mlir::PassManager pm(&context);
  kiln::RefineShapesPassOptions options;
  options.bindings.assign(shapes.begin(), shapes.end());
  pm.addNestedPass<mlir::func::FuncOp>(kiln::createRefineShapesPass(options));
  if (mlir::failed(pm.run(*module))) {
    llvm::errs() << "kiln: error: " << modelPath << ": shape propagation failed\n";
    return kExitInvalidModel;
  }
  for (auto function : module->getOps<mlir::func::FuncOp>()) {
    if (function.isExternal())
      continue;
    llvm::outs() << "function @" << function.getSymName() << "\n";
    for (unsigned i = 0; i < function.getNumArguments(); ++i) {
      auto name = function.getArgAttrOfType<mlir::StringAttr>(i, ::kiln::attrs::kName);
      llvm::outs() << "  input  " << (name ? name.getValue().str() : std::to_string(i)) << ": "
                   << describeType(function.getArgumentTypes()[i]) << "\n";
    }
    for (auto [i, type] : llvm::enumerate(function.getResultTypes()))
      llvm::outs() << "  output " << i << ": " << describeType(type) << "\n";
    std::map<std::string, int> counts;
    int total = 0;
    function.walk([&](mlir::Operation *op) {
      if (op != function.getOperation()) {
        ++counts[op->getName().getStringRef().str()];
        ++total;
      }
    });
    llvm::outs() << "  " << total << " ops:";
    for (const auto &[name, count] : counts)
      llvm::outs() << " " << name << "=" << count;
    llvm::outs() << "\n";
  }
  if (printIR) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
  }
  return 0;
}

int runImport(const std::string &modelPath, const std::string &outputPath,
              const std::vector<std::string> &shapes, bool force, bool locations,
              uint64_t resourceThreshold) {
  kiln::onnx_frontend::ImportOptions options;
  options.modelName = modelPath;
  options.resourceThresholdBytes = resourceThreshold;
  std::optional<std::vector<kiln::ShapeBinding>> bindings = kiln::cli::parseShapeFlags(shapes);
  if (!bindings)
    return kExitUsage;
  kiln::cli::importerShapes(*bindings, options.inputShapes);
  if (!outputPath.empty() && !force && llvm::sys::fs::exists(outputPath)) {
    llvm::errs() << "kiln: error: " << outputPath
                 << " already exists; pass --force to overwrite it\n";
    return kExitUsage;
  }

  kiln::onnx_frontend::LoadResult loaded = kiln::onnx_frontend::loadOnnxModel(modelPath);
  if (!loaded.diagnostics.empty())
    llvm::errs() << loaded.formatDiagnostics();
  if (!loaded.succeeded()) {
    llvm::errs() << "kiln: error: " << modelPath << ": not a valid ONNX model\n";
    return kExitInvalidModel;
  }

  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.getDiagEngine().registerHandler([&](mlir::Diagnostic &diagnostic) {
    const char *severity = diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error ? "error"
                           : diagnostic.getSeverity() == mlir::DiagnosticSeverity::Warning
                               ? "warning"
                               : "note";
    llvm::errs() << modelPath << ": " << severity << ": " << diagnostic.str() << "\n";
    for (const mlir::Diagnostic &note : diagnostic.getNotes())
      llvm::errs() << modelPath << ": note: " << note.str() << "\n";
    return mlir::success();
  });
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
      kiln::onnx_frontend::importOnnxModel(context, *loaded.model, options);
  if (mlir::failed(module)) {
    llvm::errs() << "kiln: error: " << modelPath << ": import failed\n";
    return kExitInvalidModel;
  }

  mlir::OpPrintingFlags printing;
  if (locations)
    printing.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (outputPath.empty()) {
    (*module)->print(llvm::outs(), printing);
    llvm::outs() << "\n";
    return 0;
  }
  std::error_code error;
  llvm::raw_fd_ostream out(outputPath, error);
  if (error) {
    llvm::errs() << "kiln: error: cannot write " << outputPath << ": " << error.message() << "\n";
    return kExitInvalidModel;
  }
  (*module)->print(out, printing);
  out << "\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // A crash is reported as an internal error naming the pass and op it happened in (exit code 3).
  kiln::crash::installHandler("kiln");
#if defined(KILN_HAVE_CUDA_SIM) && KILN_HAVE_CUDA_SIM
  // `--device cuda-sim`: the simulator is a library of its own, which this tool links.
  kiln::runtime::registerSimulatedCuda();
#endif
  // `kiln conformance ARGS` is kiln-conformance (its own options and --help).
  if (argc > 1 && std::string_view(argv[1]) == "conformance")
    return kiln::conformance::runConformanceTool(argc - 1, argv + 1);
  CLI::App app{"kiln: a graph-compiling deep-learning runtime"};
  app.require_subcommand(1);
  app.footer("kiln conformance ...: the ONNX node-test suite (kiln conformance --help)");
  app.set_version_flag("--version", std::string("kiln ") + kiln_version());

  std::string modelPath;
  std::vector<std::string> shapes;
  bool printIR = false;
  CLI::App *check = app.add_subcommand(
      "check", "Parse, verify and shape-propagate a graph program; print its signature and ops");
  check->add_option("model", modelPath, "Graph program (.mlir)")->required()->check(CLI::ExistingFile);
  check->add_option("--shape", shapes, "Bind a dynamic input shape, NAME=1x3x224x224");
  check->add_flag("--print-ir", printIR, "Print the program after shape propagation");

  std::string importPath, outputPath;
  std::vector<std::string> importShapes;
  bool force = false;
  bool locations = false;
  uint64_t resourceThreshold = 0;
  CLI::App *import = app.add_subcommand(
      "import", "Translate an ONNX model into a graph program and print it (or write it with -o)");
  import->add_option("model", importPath, "ONNX model (.onnx)")->required()->check(CLI::ExistingFile);
  import->add_option("-o,--output", outputPath, "Write the program to this file");
  import->add_option("--shape", importShapes, "Bind an input's shape, NAME=1x3x224x224 ('?' stays dynamic)");
  import->add_flag("--force", force, "Overwrite the output file if it exists");
  import->add_option("--resource-threshold", resourceThreshold,
                     "Keep tensors larger than this many bytes as resource blobs instead of "
                     "inline constants (0: always inline)");
  import->add_flag("--locations", locations,
                   "Print op locations (the ONNX node and operator each op comes from)");

  kiln::cli::CompileCommand compile;
  CLI::App *compileApp = app.add_subcommand(
      "compile", "Compile a model (.onnx or .mlir) ahead of time into a .kiln artifact");
  compileApp->add_option("model", compile.model, "ONNX model or graph program")
      ->required()
      ->check(CLI::ExistingFile);
  compileApp->add_option("-o,--output", compile.output, "The artifact to write (.kiln)")->required();
  kiln::cli::CompileFlags compileFlags;
  compileFlags.bind(compileApp, kiln::kCompileScope);
  compileApp->add_flag("--force", compile.force, "Overwrite the output file if it exists");
  compileApp->add_flag("-q,--quiet", compile.quiet, "Print no progress");

  kiln::cli::RunCommand run;
  CLI::App *runApp = app.add_subcommand(
      "run", "Run a model: a .kiln artifact, or an .onnx/.mlir model compiled just in time");
  runApp->add_option("model", run.model, "Artifact, ONNX model or graph program")
      ->required()
      ->check(CLI::ExistingFile);
  runApp->add_option("--device", run.device, "Device to run on: cpu, cuda, cuda:N or cuda-sim (the simulated CUDA device)")
      ->capture_default_str();
  runApp->add_option("--input", run.inputs,
                     "An input, NAME=@FILE.npy or NAME=@FILE.pb (ONNX TensorProto); with none, "
                     "seeded random inputs");
  kiln::cli::CompileFlags runFlags;
  runFlags.bind(runApp, kiln::kRunScope);
  runApp->add_option("--device-rank", run.deviceRank,
                     "Run only this device of a split artifact (one process per device)");
  runApp->add_option("--rendezvous", run.rendezvous,
                     "With --device-rank: the new, empty directory where the devices' processes "
                     "meet");
  runApp
      ->add_option("--rendezvous-timeout", run.rendezvousTimeout,
                   "With --device-rank: how long to wait for the other devices (seconds)")
      ->capture_default_str();
  runApp->add_option("--output-dir", run.outputDir, "Write each output as DIR/NAME.npy");
  runApp->add_option("--trace", run.trace,
                     "Write a Chrome trace-event JSON of the run's steps (Perfetto opens it)");
  runApp->add_option("--threads", run.threads, "Worker threads (0: one per core)");
  runApp->add_option("--seed", run.seed, "Seed of the random inputs")->capture_default_str();
  runApp->add_flag("--summary", run.summary, "Print the outputs' summary with --output-dir too");
  runApp->add_flag("--force", run.force, "Overwrite output files (and the trace) that exist");

  kiln::cli::InspectCommand inspect;
  CLI::App *inspectApp = app.add_subcommand(
      "inspect", "Print an artifact's signature, code objects, steps and memory plan");
  inspectApp->add_option("artifact", inspect.artifact, "A .kiln artifact")
      ->required()
      ->check(CLI::ExistingFile);
  inspectApp->add_option("--device-rank", inspect.deviceRank,
                         "Print the program of this device of a model split over devices");
  inspectApp->add_flag("-v,--verbose", inspect.verbose,
                       "Also list every kernel symbol and each step's buffer bindings");

  kiln::cli::BenchCommand bench;
  CLI::App *benchApp = app.add_subcommand(
      "bench", "Measure a model's latency, throughput and memory on random inputs");
  benchApp->add_option("model", bench.model, "Artifact, ONNX model or graph program")
      ->required()
      ->check(CLI::ExistingFile);
  benchApp
      ->add_option("--device", bench.device,
                   "Device to run on: cpu, cuda, cuda:N or cuda-sim (the simulated CUDA device)")
      ->capture_default_str();
  benchApp->add_option("--batch", bench.batch,
                       "Bind every dynamic leading (batch) dimension to N");
  kiln::cli::CompileFlags benchFlags;
  benchFlags.bind(benchApp, kiln::kBenchScope);
  benchApp->add_option("--warmup", bench.warmup, "Untimed runs first")->capture_default_str();
  benchApp->add_option("--iterations", bench.iterations, "Timed runs")->capture_default_str();
  benchApp->add_option("--max-seconds", bench.maxSeconds,
                       "Stop timing after this long (at least 3 runs; 0: no limit)");
  benchApp->add_option("--threads", bench.threads, "Worker threads (0: one per core)");
  benchApp->add_option("--seed", bench.seed, "Seed of the random inputs")->capture_default_str();
  benchApp->add_option("--json", bench.json, "Write the figures to this JSON file");
  benchApp->add_option(
      "--trace", bench.trace,
      "Write a Chrome trace-event JSON of the timed runs' steps (Perfetto opens it)");
  benchApp->add_flag("--force", bench.force, "Overwrite the JSON and trace files if they exist");

  kiln::cli::CalibrateCommand calibrate;
  CLI::App *calibrateApp = app.add_subcommand(
      "calibrate",
      "Measure this host (arithmetic rate, memory bandwidth, kernel dispatch, cores, cache) for "
      "the fusion cost model, and write its device description");
  calibrateApp->add_option("-o,--output", calibrate.output,
                           "Write the description here (default: Kiln's cache, which "
                           "--cost-model host reads)");
  calibrateApp->add_option("--threads", calibrate.threads, "Threads to measure (0: one per core)")
      ->capture_default_str();
  calibrateApp->add_flag("--force", calibrate.force, "Overwrite the output file if it exists");
  calibrateApp->add_flag("-q,--quiet", calibrate.quiet, "Print only where it was written");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    // --help and --version end parsing with exit code 0; everything else is a usage error.
    return app.exit(error) == 0 ? 0 : kExitUsage;
  }
  if (check->parsed())
    return runCheck(modelPath, shapes, printIR);
  if (import->parsed())
    return runImport(importPath, outputPath, importShapes, force, locations,
                     resourceThreshold);
  if (compileApp->parsed())
    return compileFlags.apply(compile.options) ? kiln::cli::runCompile(compile) : kExitUsage;
  if (runApp->parsed())
    return runFlags.apply(run.options) ? kiln::cli::runRun(run) : kExitUsage;
  if (inspectApp->parsed())
    return kiln::cli::runInspect(inspect);
  if (benchApp->parsed())
    return benchFlags.apply(bench.options) ? kiln::cli::runBench(bench) : kExitUsage;
  if (calibrateApp->parsed())
    return kiln::cli::runCalibrate(calibrate);
  return kExitUsage;
}
