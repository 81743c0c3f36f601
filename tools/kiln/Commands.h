//===- Commands.h - kiln compile, run, inspect and bench --------*- C++ -*-===//
//
// The subcommands that compile and execute models. Each returns the process's exit code
// (Program.h): 0 success, 1 a failed step, 2 a usage error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "compiler/options/CompileOptions.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {

/// `kiln compile MODEL -o OUT.kiln --target cpu`: the compile options (CompileFlags.h) and the
/// command's own.
struct CompileCommand {
  std::string model;
  std::string output;
  /// Every compile option given (--target, --gpu-arch, --precision, ...).
  CompileOptions options;
  bool force = false;
  bool quiet = false;
};

/// `kiln run MODEL [--input NAME=@FILE]... [--output-dir DIR]`.
struct RunCommand {
  std::string model;
  std::string device = "cpu";
  std::vector<std::string> inputs;
  /// The compile options of a model compiled just in time (--shape, --precision, ...);
  /// `--devices N` also runs a split model over N CPU devices in this process, a thread each.
  CompileOptions options;
  /// `--device-rank R --rendezvous DIR`: run only device R of a split artifact, meeting the other
  /// devices' processes in DIR.
  int64_t deviceRank = -1;
  std::string rendezvous;
  /// How long to wait for the other devices, in seconds.
  double rendezvousTimeout = 60;
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
  int64_t batch = 0;
  /// The compile options of a model compiled just in time (--shape, --precision, ...).
  CompileOptions options;
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
