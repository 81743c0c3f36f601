//===- Commands.h - kiln compile, run, inspect and bench --------*- C++ -*-===//
//
// The subcommands that compile and execute models. Each returns the process's exit code
// (Program.h): 0 success, 1 a failed step, 2 a usage error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {

/// `--precision fp32|tf32|bf16|fp16` (and `auto` for compile), `--keep-io-types` and
/// `--keep-high NODE` (ONNX nodes kept in fp32): the flags compile, run and bench share.
struct PrecisionFlags {
  std::string precision = "fp32";
  bool keepIoTypes = false;
  std::vector<std::string> keepHigh;
  /// `--conv-layout auto|nchw|nhwc`: the tensor layout of convolutions.
  std::string convLayout = "auto";
  /// `--attention fused|unfused`: attention as one library call, or products and a softmax.
  std::string attention = "fused";
};

/// `kiln compile MODEL -o OUT.kiln --target cpu`.
struct CompileCommand {
  std::string model;
  std::string output;
  std::string target = "cpu";
  /// CUDA architectures to assemble cubins for.
  std::vector<std::string> gpuArchs = {"sm_80", "sm_90"};
  std::vector<std::string> shapes;
  std::string dumpIrDirectory;
  /// `--memory-limit 256MiB`: the most bytes the arena may take (empty: no limit).
  std::string memoryLimit;
  /// `--memory-plan auto|bounds|per-run`: a program for a range of shapes plans its arena for
  /// the upper bounds, or per run (CompileOptions::memoryPlan).
  std::string memoryPlan = "auto";
  /// `--cost-model NAME|FILE|host`: the fusion cost model's device (Calibrate.h).
  std::string costModel;
  /// `--streams N`: independent steps run on up to N streams at once (CPU).
  int64_t streams = 1;
  /// `--devices N --partition auto|tensor|pipeline|batch`: the model split over N devices.
  int64_t devices = 1;
  std::string partition = "tensor";
  /// `--micro-batches M`: with --partition pipeline, M micro-batches in flight.
  int64_t microBatches = 1;
  PrecisionFlags precision;
  /// `--precision auto`: the low precision tried, the budget and the calibration inputs.
  std::string autoPrecision = "fp16";
  std::string accuracyBudget = "rtol=0.01,atol=0.001";
  std::string calibrationInputs;
  int calibrationSamples = 4;
  bool report = false;
  bool force = false;
  bool quiet = false;
};

/// `kiln run MODEL [--input NAME=@FILE]... [--output-dir DIR]`.
struct RunCommand {
  std::string model;
  std::string device = "cpu";
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string memoryLimit;
  /// `--streams N`: independent steps run on up to N streams at once (CPU).
  int64_t streams = 1;
  /// `--devices N`: the model split over N CPU devices (compiled just in time with --partition,
  /// or a split artifact), all run by this process, one thread per device.
  int64_t devices = 1;
  std::string partition = "tensor";
  int64_t microBatches = 1;
  /// `--device-rank R --rendezvous DIR`: run only device R of a split artifact, meeting the other
  /// devices' processes in DIR.
  int64_t deviceRank = -1;
  std::string rendezvous;
  /// How long to wait for the other devices, in seconds.
  double rendezvousTimeout = 60;
  PrecisionFlags precision;
  std::string outputDir;
  /// Chrome trace-event JSON of the run's steps.
  std::string trace;
  uint32_t threads = 0;
  uint64_t seed = 0;
  bool summary = false;
  bool force = false;
};

/// `kiln inspect OUT.kiln`.
struct InspectCommand {
  std::string artifact;
  bool verbose = false;
  /// `--device-rank R`: the program of device R of a split model (default: the file's own).
  int64_t deviceRank = -1;
};

/// `kiln bench MODEL --device cpu --iterations N --json FILE`.
struct BenchCommand {
  std::string model;
  std::string device = "cpu";
  std::vector<std::string> shapes;
  int64_t batch = 0;
  std::string memoryLimit;
  /// `--streams N`: independent steps run on up to N streams at once (CPU).
  int64_t streams = 1;
  /// `--devices N`: a model compiled just in time is split over N CPU devices (`--partition`),
  /// run in this process (a split artifact runs on its devices anyway).
  int64_t devices = 1;
  std::string partition = "tensor";
  int64_t microBatches = 1;
  PrecisionFlags precision;
  int warmup = 3;
  int iterations = 20;
  double maxSeconds = 0;
  uint32_t threads = 0;
  uint64_t seed = 0;
  std::string json;
  /// Chrome trace-event JSON of the timed runs' steps.
  std::string trace;
  bool force = false;
};

int runCompile(const CompileCommand &command);
int runRun(const RunCommand &command);
int runInspect(const InspectCommand &command);
int runBench(const BenchCommand &command);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMMANDS_H
