//===- Commands.cpp - kiln compile, run, inspect and bench ------------------===//

#include "Commands.h"

#include "Calibrate.h"
#include "PrecisionSearch.h"
#include "Program.h"

#include "compiler/pipelines/Pipelines.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <thread>

namespace kiln::cli {
namespace {

bool writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file.good()) {
    printError("cannot write " + path);
    return false;
  }
  return true;
}

std::string humanBytes(uint64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= (1u << 20))
    os << llvm::format("%.2f MiB", bytes / double(1u << 20));
  else if (bytes >= 1024)
    os << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return text;
}

/// An output's file name: the tensor name with characters unsafe in a path replaced by '_'.
std::string fileNameFor(const std::string &name) {
  std::string safe = name.empty() ? "output" : name;
  for (char &c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      c = '_';
  if (safe == "." || safe == "..")
    safe = "_";
  return safe + ".npy";
}

/// Element i of a tensor as a double (for the summary of `kiln run`).
double elementAt(const Tensor &tensor, size_t i) {
  const void *data = tensor.data();
  switch (tensor.elementType()) {
  case KILN_ELEMENT_TYPE_F32:
    return static_cast<const float *>(data)[i];
  case KILN_ELEMENT_TYPE_F64:
    return static_cast<const double *>(data)[i];
  case KILN_ELEMENT_TYPE_I64:
    return double(static_cast<const int64_t *>(data)[i]);
  case KILN_ELEMENT_TYPE_I32:
    return static_cast<const int32_t *>(data)[i];
  case KILN_ELEMENT_TYPE_I16:
    return static_cast<const int16_t *>(data)[i];
  case KILN_ELEMENT_TYPE_I8:
    return static_cast<const int8_t *>(data)[i];
  case KILN_ELEMENT_TYPE_U8:
  case KILN_ELEMENT_TYPE_BOOL:
    return static_cast<const uint8_t *>(data)[i];
  case KILN_ELEMENT_TYPE_U16:
    return static_cast<const uint16_t *>(data)[i];
  case KILN_ELEMENT_TYPE_U32:
    return static_cast<const uint32_t *>(data)[i];
  case KILN_ELEMENT_TYPE_U64:
    return double(static_cast<const uint64_t *>(data)[i]);
  case KILN_ELEMENT_TYPE_F16: {
    uint16_t half = static_cast<const uint16_t *>(data)[i];
    int exponent = (half >> 10) & 0x1f;
    double magnitude = exponent == 0    ? std::ldexp(half & 0x3ff, -24)
                       : exponent == 31 ? ((half & 0x3ff) ? std::nan("") : INFINITY)
                                        : std::ldexp(0x400 | (half & 0x3ff), exponent - 25);
    return (half & 0x8000) ? -magnitude : magnitude;
  }
  case KILN_ELEMENT_TYPE_BF16: {
    uint32_t bits = uint32_t(static_cast<const uint16_t *>(data)[i]) << 16;
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  default:
    return std::nan("");
  }
}

void printSummary(const std::string &name, const Tensor &tensor) {
  llvm::outs() << "  " << name << ": " << describeTensor(tensor);
  size_t count = tensor.elementCount();
  kiln_element_type_t type = tensor.elementType();
  if (count == 0 || type == KILN_ELEMENT_TYPE_F8E4M3FN || type == KILN_ELEMENT_TYPE_F8E5M2 ||
      type == KILN_ELEMENT_TYPE_F8E4M3FNUZ || type == KILN_ELEMENT_TYPE_F8E5M2FNUZ) {
    llvm::outs() << "\n";
    return;
  }
  double low = INFINITY, high = -INFINITY, sum = 0;
  size_t nans = 0;
  for (size_t i = 0; i < count; ++i) {
    double value = elementAt(tensor, i);
    if (std::isnan(value)) {
      ++nans;
      continue;
    }
    low = std::min(low, value);
    high = std::max(high, value);
    sum += value;
  }
  llvm::outs() << llvm::format("  min %.6g  max %.6g  mean %.6g", low, high,
                               sum / double(std::max<size_t>(1, count - nans)));
  if (nans)
    llvm::outs() << "  (" << nans << " NaN)";
  llvm::outs() << "  [";
  for (size_t i = 0; i < std::min<size_t>(count, 6); ++i)
    llvm::outs() << (i ? ", " : "") << llvm::format("%.6g", elementAt(tensor, i));
  llvm::outs() << (count > 6 ? ", ...]\n" : "]\n");
}

const char *stepKindName(kiln_step_kind_t kind) {
  switch (kind) {
  case KILN_STEP_KIND_DISPATCH:
    return "dispatch";
  case KILN_STEP_KIND_LIBRARY_CALL:
    return "library";
  case KILN_STEP_KIND_COPY:
    return "copy";
  }
  return "?";
}

const char *bufferKindName(kiln_buffer_kind_t kind) {
  switch (kind) {
  case KILN_BUFFER_KIND_ARENA:
    return "arena";
  case KILN_BUFFER_KIND_CONSTANT:
    return "const";
  case KILN_BUFFER_KIND_INPUT:
    return "input";
  case KILN_BUFFER_KIND_OUTPUT:
    return "output";
  }
  return "?";
}

/// A `--device` argument: "cpu", "cuda", "cuda:N" or "cuda-sim" (the simulated CUDA device).
struct DeviceChoice {
  std::string kind;
  uint32_t ordinal = 0;
};

std::optional<DeviceChoice> parseDevice(const std::string &text) {
  DeviceChoice choice;
  llvm::StringRef rest(text);
  if (rest == "cpu" || rest == "cuda" || rest == "cuda-sim") {
    choice.kind = rest.str();
    return choice;
  }
  if (rest.consume_front("cuda:") && !rest.empty() && !rest.getAsInteger(10, choice.ordinal)) {
    choice.kind = "cuda";
    return choice;
  }
  printError("--device '" + text + "' is not one of cpu, cuda, cuda:N, cuda-sim");
  return std::nullopt;
}

/// The target a model is compiled for to run on `device`: the simulated CUDA device runs cuda
/// artifacts with its own code object only.
void compileFor(const DeviceChoice &device, CompileOptions &options) {
  options.target.kind = device.kind == "cpu" ? TargetKind::Cpu : TargetKind::Cuda;
  if (device.kind == "cuda-sim") {
    options.target.gpuArchs.clear();
    options.target.cudaSim = true;
  }
}

/// `--precision auto` is kiln compile's search; a model compiled just in time takes a precision.
bool refuseAutoPrecision(const CompileOptions &options) {
  if (options.precision != Precision::Auto)
    return false;
  printError("--precision 'auto' is not one of fp32, tf32, bf16, fp16 (auto: kiln compile)");
  return true;
}

/// A session for `artifact` on `device`; `split` gives the device rank, rendezvous and timeout of
/// one device of a split model (its defaults: a model that is not split).
std::optional<Session> createSession(const Artifact &artifact, uint32_t threads,
                                     const DeviceChoice &device,
                                     const SessionOptions &split = SessionOptions()) {
  SessionOptions options = split;
  options.numThreads = threads;
  options.deviceKind = device.kind == "cuda"       ? KILN_DEVICE_KIND_CUDA
                       : device.kind == "cuda-sim" ? KILN_DEVICE_KIND_CUDA_SIM
                                                   : KILN_DEVICE_KIND_CPU;
  options.deviceOrdinal = static_cast<int32_t>(device.ordinal);
  Result<Session> session = Session::create(artifact, options);
  if (!session.ok()) {
    std::string message = session.status().message();
    if (artifact.device() != (device.kind == "cuda-sim" ? "cuda" : device.kind))
      message += "; run it with --device " + artifact.device();
    printError(message);
    return std::nullopt;
  }
  return std::move(session.value());
}

/// The sessions of every device of a split model, in this process: each device's session is
/// created on a thread of its own (creation waits until all have joined), meeting in a new
/// temporary directory. `threads` is the host threads shared out between them (0: every core).
/// On `--device cuda[:N]` device r runs on GPU N + r; on cuda-sim each is a simulated GPU of its
/// own.
std::optional<std::vector<Session>> createSplitSessions(const Artifact &artifact, uint32_t threads,
                                                        const DeviceChoice &device) {
  uint32_t devices = artifact.deviceCount();
  llvm::SmallString<128> rendezvous;
  // Private (mode 0700), as the runtime requires of the directory the devices meet in.
  std::error_code error = llvm::sys::fs::createUniqueDirectory("kiln-rendezvous", rendezvous);
  if (!error)
    error = llvm::sys::fs::setPermissions(rendezvous, llvm::sys::fs::owner_all);
  if (error) {
    printError("cannot create a rendezvous directory: " + error.message());
    return std::nullopt;
  }
  uint32_t cores = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Session> sessions(devices);
  std::vector<Status> created(devices);
  std::vector<std::thread> joining;
  for (uint32_t rank = 0; rank < devices; ++rank)
    joining.emplace_back([&, rank] {
      SessionOptions options;
      options.numThreads = std::max(1u, cores / devices);
      options.deviceKind = device.kind == "cuda"       ? KILN_DEVICE_KIND_CUDA
                           : device.kind == "cuda-sim" ? KILN_DEVICE_KIND_CUDA_SIM
                                                       : KILN_DEVICE_KIND_CPU;
      options.deviceOrdinal =
          device.kind == "cuda" ? static_cast<int32_t>(device.ordinal + rank) : 0;
      options.deviceRank = rank;
      options.rendezvous = std::string(rendezvous);
      Result<Session> session = Session::create(artifact, options);
      if (session.ok())
        sessions[rank] = std::move(session.value());
      else
        created[rank] = session.status();
    });
  for (std::thread &thread : joining)
    thread.join();
  llvm::sys::fs::remove_directories(rendezvous);
  for (const Status &status : created)
    if (!status.ok()) {
      printError(status.message());
      return std::nullopt;
    }
  return sessions;
}

/// Runs every device's session at once on `inputs`; device 0's outputs (each device computes the
/// same ones), or the first failure.
Result<std::vector<Tensor>> runSplitSessions(std::vector<Session> &sessions,
                                             const std::vector<const Tensor *> &inputs) {
  std::vector<std::optional<Result<std::vector<Tensor>>>> results(sessions.size());
  std::vector<std::thread> running;
  for (size_t rank = 0; rank < sessions.size(); ++rank)
    running.emplace_back([&, rank] { results[rank] = sessions[rank].run(inputs); });
  for (std::thread &thread : running)
    thread.join();
  for (size_t rank = 0; rank < sessions.size(); ++rank)
    if (!results[rank]->ok())
      return Status(results[rank]->status().code(),
                    "device " + std::to_string(rank) + ": " + results[rank]->status().message());
  return std::move(*results[0]);
}

std::vector<const Tensor *> pointers(const std::vector<Tensor> &tensors) {
  std::vector<const Tensor *> result;
  for (const Tensor &tensor : tensors)
    result.push_back(&tensor);
  return result;
}

} // namespace

int runCompile(const CompileCommand &command) {
  if (refuseOverwrite(command.output, command.force))
    return kExitUsage;
  CompileSettings settings;
  settings.options = command.options;
  if (command.options.target.costModel == "host") {
    std::string error;
    settings.options.target.costModel = ensureHostDescription(command.quiet, error);
    if (settings.options.target.costModel.empty()) {
      printError("--cost-model host: " + error);
      return kExitFailure;
    }
  }
  settings.progress = !command.quiet;
  auto start = std::chrono::steady_clock::now();
  if (command.options.precision == Precision::Auto) {
    PrecisionSearchOptions search;
    search.lowPrecision = command.options.autoPrecision;
    std::optional<AccuracyBudget> budget = parseAccuracyBudget(command.options.accuracyBudget);
    if (!budget)
      return kExitUsage;
    search.budget = *budget;
    search.calibrationInputs = command.options.calibrationInputs;
    search.samples = static_cast<int>(command.options.calibrationSamples);
    search.progress = !command.quiet;
    std::optional<PrecisionChoice> choice =
        searchPrecision(command.model, settings, search, llvm::outs());
    if (!choice)
      return kExitFailure;
    settings.options.precision = command.options.autoPrecision;
    settings.options.precisionLow = std::move(choice->low);
    settings.options.precisionEvidence = std::move(choice->evidence);
  }
  // The artifact streams into a temporary file beside the output, renamed over it once complete:
  // the weights are never copied in memory, and a failed compile leaves no partial file (and an
  // existing output, overwritten with --force, untouched).
  llvm::Expected<llvm::sys::fs::TempFile> temporary =
      llvm::sys::fs::TempFile::create(command.output + ".%%%%%%.partial");
  if (!temporary) {
    printError("cannot write " + command.output + ": " + llvm::toString(temporary.takeError()));
    return kExitFailure;
  }
  uint64_t size = 0;
  bool written = false;
  {
    llvm::raw_fd_ostream os(temporary->FD, /*shouldClose=*/false);
    written = compileModel(command.model, settings, os);
    os.flush();
    size = os.tell();
    if (written && os.has_error()) {
      printError("cannot write " + command.output + ": " + os.error().message());
      os.clear_error();
      written = false;
    }
  }
  if (!written) {
    llvm::consumeError(temporary->discard());
    return kExitFailure;
  }
  if (llvm::Error error = temporary->keep(command.output)) {
    printError("cannot write " + command.output + ": " + llvm::toString(std::move(error)));
    return kExitFailure;
  }
  if (!command.quiet)
    llvm::errs() << llvm::format(
        "kiln: wrote %s (%s) in %.2f s\n", command.output.c_str(), humanBytes(size).c_str(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

/// Writes the trace a session recorded to `path`, saying where on stderr.
bool writeTrace(const Session &session, const std::string &path) {
  Status written = session.writeTrace(path);
  if (!written.ok()) {
    printError(written.message());
    return false;
  }
  llvm::errs() << "kiln: wrote the trace " << path
               << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  return true;
}

int runRun(const RunCommand &command) {
  if (!command.trace.empty() && refuseOverwrite(command.trace, command.force))
    return kExitUsage;
  std::optional<std::vector<InputFile>> files = parseInputArguments(command.inputs);
  if (!files)
    return kExitUsage;
  std::optional<std::map<std::string, Tensor>> given = readInputFiles(*files);
  if (!given)
    return kExitUsage;
  std::optional<DeviceChoice> device = parseDevice(command.device);
  if (!device)
    return kExitUsage;
  CompileSettings settings;
  settings.options = command.options;
  compileFor(*device, settings.options);
  if (refuseAutoPrecision(settings.options))
    return kExitUsage;
  if ((command.deviceRank >= 0) != !command.rendezvous.empty()) {
    printError("--device-rank and --rendezvous go together (one process per device)");
    return kExitUsage;
  }
  if (command.rendezvousTimeout <= 0 || command.rendezvousTimeout > 86400) {
    printError("--rendezvous-timeout " + std::to_string(command.rendezvousTimeout) +
               " is not a number of seconds between 0 and 86400");
    return kExitUsage;
  }
  for (const auto &[name, tensor] : *given)
    settings.inputShapes[name] = tensor.dims();
  // An ONNX model compiled for this run is specialized for its inputs, as the conformance suite
  // specializes a node test: an input an operator needs at import time becomes a constant.
  std::vector<std::string> folded;
  settings.inputValues = &*given;
  settings.foldedInputs = &folded;
  // One process per device of a split model maps the file, reading its own device's weights
  // only; the file is the user's and kiln does not rewrite it.
  std::optional<Artifact> artifact =
      loadModel(command.model, settings, nullptr, /*mapped=*/command.deviceRank >= 0);
  if (!artifact)
    return kExitFailure;
  for (const std::string &name : folded)
    given->erase(name);
  // With no --input at all, every input is random; otherwise arrangeInputs names a missing one.
  bool randomized = given->empty() && artifact->inputCount() > 0;
  std::optional<std::vector<Tensor>> inputs =
      arrangeInputs(*artifact, std::move(*given), randomized, command.seed);
  if (!inputs)
    return kExitUsage;
  uint32_t devices = artifact->deviceCount();
  if (command.options.devices > 1 && static_cast<uint32_t>(command.options.devices) != devices) {
    printError(command.model + " runs on " + std::to_string(devices) + " device(s), not the " +
               std::to_string(command.options.devices) + " of --devices" +
               (devices == 1 ? " (compile it with --devices N)" : ""));
    return kExitUsage;
  }
  // One session per device of a split model (this process runs them all, or one of them with
  // --device-rank); the first one is traced.
  std::vector<Session> sessions;
  if (devices > 1 && command.deviceRank < 0) {
    std::optional<std::vector<Session>> split =
        createSplitSessions(*artifact, command.threads, *device);
    if (!split)
      return kExitFailure;
    sessions = std::move(*split);
  } else {
    SessionOptions split; // one device of a split model, meeting the others' processes
    if (command.deviceRank >= 0) {
      split.deviceRank = static_cast<uint32_t>(command.deviceRank);
      split.rendezvous = command.rendezvous;
      split.rendezvousTimeoutMs = static_cast<uint32_t>(command.rendezvousTimeout * 1000);
    }
    std::optional<Session> session = createSession(*artifact, command.threads, *device, split);
    if (!session)
      return kExitFailure;
    sessions.push_back(std::move(*session));
  }
  Session *session = &sessions[0];
  if (!command.trace.empty()) {
    if (Status started = session->startTrace(); !started.ok()) {
      printError(started.message());
      return kExitFailure;
    }
  }
  Result<std::vector<Tensor>> outputs = sessions.size() > 1
                                            ? runSplitSessions(sessions, pointers(*inputs))
                                            : session->run(pointers(*inputs));
  if (!outputs.ok()) {
    printError(command.model + ": " + outputs.status().message());
    return kExitFailure;
  }
  if (!command.trace.empty() && !writeTrace(*session, command.trace))
    return kExitFailure;

  if (!command.outputDir.empty()) {
    if (std::error_code error = llvm::sys::fs::create_directories(command.outputDir)) {
      printError("cannot create " + command.outputDir + ": " + error.message());
      return kExitFailure;
    }
  }
  bool summary = command.outputDir.empty() || randomized || command.summary;
  if (summary && randomized)
    llvm::outs() << "inputs (random, seed " << command.seed << "):\n";
  for (size_t i = 0; summary && randomized && i < inputs->size(); ++i)
    printSummary(artifact->input(i).value().name, (*inputs)[i]);
  if (summary)
    llvm::outs() << "outputs:\n";
  for (size_t i = 0; i < outputs.value().size(); ++i) {
    std::string name = artifact->output(i).value().name;
    const Tensor &tensor = outputs.value()[i];
    if (summary)
      printSummary(name, tensor);
    if (command.outputDir.empty())
      continue;
    llvm::SmallString<256> path(command.outputDir);
    llvm::sys::path::append(path, fileNameFor(name));
    Status written = tensor.writeNpy(std::string(path), command.force);
    if (!written.ok()) {
      printError(written.message() +
                 (llvm::sys::fs::exists(path) && !command.force ? " (pass --force to overwrite)"
                                                                 : ""));
      return kExitFailure;
    }
  }
  return 0;
}

namespace {

/// One device's share of a split model: its steps, its collectives (all-reduces, broadcasts)
/// and the bytes they move, its weights and its arena.
struct DeviceShare {
  size_t steps = 0, kernels = 0, libraryCalls = 0, collectives = 0;
  uint64_t collectiveBytes = 0, constants = 0, arena = 0;
};

DeviceShare shareOf(const Artifact &artifact) {
  DeviceShare share;
  share.steps = artifact.stepCount();
  for (size_t i = 0; i < share.steps; ++i) {
    kiln_step_info_t step = artifact.step(i).value();
    share.kernels += step.kind == KILN_STEP_KIND_DISPATCH;
    share.libraryCalls += step.kind == KILN_STEP_KIND_LIBRARY_CALL;
    llvm::StringRef name = step.name ? step.name : "";
    if (step.kind == KILN_STEP_KIND_LIBRARY_CALL &&
        (name.starts_with("gloo.") || name.starts_with("nccl."))) {
      ++share.collectives;
      share.collectiveBytes += step.binding_count ? step.bindings[step.binding_count - 1].size : 0;
    }
  }
  share.constants = artifact.constantsSize();
  share.arena = artifact.arenaSize();
  return share;
}

/// The devices of a split model side by side.
bool printPartition(const Artifact &artifact, llvm::raw_ostream &os) {
  uint32_t devices = artifact.deviceCount();
  std::string mode = artifact.partition();
  os << "partition: " << (mode == "pipeline" ? "pipeline" : mode == "batch" ? "batch parallel" : "tensor parallel")
     << " over " << devices << " devices; this file is device " << artifact.deviceRank() << "'s"
     << (artifact.deviceRank() == 0 ? " and carries every device's" : "") << "\n";
  os << "  device  steps  kernels  library calls  collectives (bytes each run)  weights      "
        "arena\n";
  for (uint32_t rank = 0; rank < devices; ++rank) {
    Result<Artifact> device = artifact.openDevice(rank);
    if (!device.ok()) {
      printError(device.status().message());
      return false;
    }
    DeviceShare share = shareOf(device.value());
    os << llvm::format("  %6u  %5zu  %7zu  %13zu  %11zu", rank, share.steps, share.kernels,
                       share.libraryCalls, share.collectives)
       << llvm::format(" %-16s", ("(" + humanBytes(share.collectiveBytes) + ")").c_str())
       << llvm::format("  %-11s", humanBytes(share.constants).c_str()) << humanBytes(share.arena)
       << "\n";
  }
  return true;
}

} // namespace

int runInspect(const InspectCommand &command) {
  Result<Artifact> loaded = Artifact::loadFile(command.artifact);
  if (!loaded.ok()) {
    printError(loaded.status().message());
    return kExitFailure;
  }
  llvm::raw_ostream &os = llvm::outs();
  if (loaded.value().deviceCount() > 1 && !printPartition(loaded.value(), os))
    return kExitFailure;
  if (command.deviceRank >= 0) {
    if (loaded.value().deviceCount() == 1 && command.deviceRank > 0) {
      printError(command.artifact + " is not split over devices; it has no device " +
                 std::to_string(command.deviceRank));
      return kExitUsage;
    }
    Result<Artifact> device = loaded.value().openDevice(static_cast<uint32_t>(command.deviceRank));
    if (!device.ok()) {
      printError(device.status().message());
      return kExitUsage;
    }
    loaded = std::move(device);
  }
  const Artifact &artifact = loaded.value();
  os << printable(command.artifact);
  if (artifact.deviceCount() > 1)
    os << " (device " << artifact.deviceRank() << " of " << artifact.deviceCount() << ")";
  os << ": kiln artifact, format " << artifact.formatVersion() << "\n";
  os << "  device:   " << printable(artifact.device()) << "\n";
  os << "  producer: " << printable(artifact.producer()) << "\n";
  os << "  source:   " << printable(artifact.source()) << "\n";
  os << "inputs:\n";
  for (size_t i = 0; i < artifact.inputCount(); ++i) {
    TensorSignature signature = artifact.input(i).value();
    os << "  " << printable(signature.name) << ": " << describeSignature(signature) << "\n";
  }
  os << "outputs:\n";
  for (size_t i = 0; i < artifact.outputCount(); ++i) {
    TensorSignature signature = artifact.output(i).value();
    os << "  " << printable(signature.name) << ": " << describeSignature(signature) << "\n";
  }
  std::vector<kiln_dim_symbol_t> symbols = artifact.symbols();
  if (!symbols.empty()) {
    os << "dimensions that vary from run to run (kiln compile --shape-range):\n";
    for (const kiln_dim_symbol_t &symbol : symbols)
      os << "  " << printable(symbol.name) << ": dimension " << symbol.dim << " of input '"
         << printable(artifact.input(symbol.input).value().name) << "', " << symbol.min << ".."
         << (symbol.max == INT64_MAX ? std::string("(no upper bound)") : std::to_string(symbol.max))
         << "\n";
  }
  std::vector<std::string> checks = artifact.checkMessages();
  if (!checks.empty()) {
    os << "checks of every run:\n";
    for (const std::string &message : checks)
      os << "  " << printable(message) << "\n";
  }
  os << "code objects:\n";
  for (size_t i = 0; i < artifact.codeObjectCount(); ++i) {
    kiln_code_object_info_t info = artifact.codeObject(i).value();
    const char *format = info.format == KILN_CODE_FORMAT_ELF_SHARED_OBJECT ? "ELF shared object"
                         : info.format == KILN_CODE_FORMAT_CUBIN           ? "cubin"
                                                                           : "PTX";
    os << "  #" << i << " " << printable(info.target) << ", " << format << ", " << humanBytes(info.byte_size)
       << ", " << info.kernel_count << " kernels\n";
    if (command.verbose)
      for (size_t k = 0; k < info.kernel_count; ++k)
        os << "      " << printable(info.kernel_names[k]) << "\n";
  }
  size_t dispatches = 0, libraryCalls = 0, copies = 0, recomputed = 0;
  os << "steps:\n";
  for (size_t i = 0; i < artifact.stepCount(); ++i) {
    kiln_step_info_t step = artifact.step(i).value();
    dispatches += step.kind == KILN_STEP_KIND_DISPATCH;
    libraryCalls += step.kind == KILN_STEP_KIND_LIBRARY_CALL;
    copies += step.kind == KILN_STEP_KIND_COPY;
    recomputed += step.description && llvm::StringRef(step.description).starts_with("recomputed: ");
    os << llvm::format("  %3zu ", i);
    if (artifact.streamCount() > 1)
      os << "[stream " << artifact.stepStream(i) << "] ";
    os << llvm::format("%-8s ", stepKindName(step.kind)) << printable(step.name ? step.name : "");
    if (step.kind == KILN_STEP_KIND_DISPATCH && step.cuda_block_size != 0) {
      // 0 items: a launch sized for each run by the run's sizes (a program for a range of
      // shapes); a static launch has at least one.
      if (step.cuda_work_items == 0)
        os << "  items of the run, blocks of " << step.cuda_block_size;
      else
        os << "  " << step.cuda_work_items << " items, blocks of " << step.cuda_block_size;
    } else if (step.kind == KILN_STEP_KIND_DISPATCH) {
      os << "  workgroups ";
      for (size_t d = 0; d < step.workgroup_rank; ++d)
        os << (d ? "x" : "") << step.workgroup_count[d];
    }
    if (step.description && *step.description)
      os << "  (" << printable(step.description) << ")";
    os << "\n";
    if (!command.verbose)
      continue;
    if (step.parameters && *step.parameters)
      os << "        " << printable(step.parameters) << "\n";
    for (size_t b = 0; b < step.binding_count; ++b) {
      const kiln_binding_info_t &binding = step.bindings[b];
      os << "        " << bufferKindName(binding.buffer_kind) << " #" << binding.buffer_index
         << " +" << binding.offset << " " << kiln_element_type_name(binding.element_type) << "[";
      for (size_t d = 0; d < binding.rank; ++d)
        os << (d ? "x" : "") << binding.dims[d];
      os << "] " << humanBytes(binding.size) << "\n";
    }
  }
  os << "  " << artifact.stepCount() << " steps: " << dispatches << " generated kernels, "
     << libraryCalls << " library calls, " << copies << " copies\n";
  if (uint64_t modeled = artifact.modeledKernelBytes())
    os << "  the generated kernels move " << humanBytes(modeled)
       << " per run (the compiler's cost model)\n";
  os << "memory:\n";
  std::vector<kiln_dim_symbol_t> dimSymbols = artifact.symbols();
  if (llvm::any_of(dimSymbols,
                   [](const kiln_dim_symbol_t &symbol) { return symbol.max == INT64_MAX; }))
    os << "  planned per run (a dimension has no upper bound); the sizes below are the nominal "
          "shape's\n";
  uint64_t arena = artifact.arenaSize(), naive = artifact.naiveIntermediateSize();
  os << "  arena:         " << humanBytes(arena) << " (" << arena << " bytes)\n";
  if (artifact.streamCount() > 1)
    os << "  streams:       " << artifact.streamCount() << "; on one stream the arena would be "
       << humanBytes(artifact.serialArenaSize()) << " (" << artifact.serialArenaSize()
       << " bytes)\n";
  if (uint64_t limit = artifact.memoryLimit()) {
    uint64_t unlimited = artifact.unlimitedArenaSize();
    os << "  memory limit:  " << humanBytes(limit) << " (" << limit << " bytes); without it the "
       << "arena is " << humanBytes(unlimited) << " (" << unlimited << " bytes), " << recomputed
       << (recomputed == 1 ? " step recomputes a value" : " steps recompute values") << "\n";
  }
  if (uint64_t bound = artifact.peakLiveSize())
    os << "  lower bound:   " << humanBytes(bound) << " (" << bound
       << " bytes live at once; the arena is "
       << llvm::format("%.3fx", double(arena) / double(bound)) << ")\n";
  os << "  naive sum:     " << humanBytes(naive) << " (" << naive << " bytes) of intermediates";
  if (naive)
    os << llvm::format(", the plan uses %.1f%%", 100.0 * double(arena) / double(naive));
  os << "\n";
  os << "  constants:     " << humanBytes(artifact.constantsSize()) << "\n";
  os << "  run peak:      " << humanBytes(artifact.runPeakMemory())
     << " (arena + outputs of one run)\n";
  return 0;
}

/// Per device of a split model, from the traces of `runs` runs: the milliseconds per run spent
/// in its own steps and in collectives (the "gloo." and "nccl." library calls). The traces are
/// started on every session before the runs.
std::optional<nlohmann::json> splitDeviceTimes(const std::vector<Session> &sessions, size_t runs) {
  nlohmann::json times = nlohmann::json::array();
  for (size_t rank = 0; rank < sessions.size(); ++rank) {
    llvm::SmallString<128> path;
    if (std::error_code error = llvm::sys::fs::createTemporaryFile("kiln-device", "json", path)) {
      printError("cannot create a temporary trace: " + error.message());
      return std::nullopt;
    }
    llvm::sys::fs::remove(path);
    Status written = sessions[rank].writeTrace(std::string(path));
    std::ifstream file{std::string(path)};
    nlohmann::json trace = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
    llvm::sys::fs::remove(path);
    if (!written.ok() || trace.is_discarded()) {
      printError("device " + std::to_string(rank) + ": no trace to time: " + written.message());
      return std::nullopt;
    }
    double steps = 0, collectives = 0;
    const nlohmann::json &events = trace.is_object() ? trace["traceEvents"] : trace;
    for (const nlohmann::json &event : events) {
      if (event.value("ph", "") != "X")
        continue;
      std::string name = event.value("name", "");
      bool collective =
          name.find("'gloo.") != std::string::npos || name.find("'nccl.") != std::string::npos;
      (collective ? collectives : steps) += event.value("dur", 0.0) / 1e3;
    }
    double count = double(std::max<size_t>(runs, 1));
    times.push_back(
        {{"device", rank}, {"steps", steps / count}, {"collectives", collectives / count}});
  }
  return times;
}

int runBench(const BenchCommand &command) {
  std::optional<DeviceChoice> device = parseDevice(command.device);
  if (!device)
    return kExitUsage;
  if (command.iterations < 1) {
    printError("--iterations must be at least 1");
    return kExitUsage;
  }
  if (!command.json.empty() && refuseOverwrite(command.json, command.force))
    return kExitUsage;
  if (!command.trace.empty() && refuseOverwrite(command.trace, command.force))
    return kExitUsage;
  CompileSettings settings;
  settings.options = command.options;
  compileFor(*device, settings.options);
  if (refuseAutoPrecision(settings.options))
    return kExitUsage;
  settings.batch = command.batch;
  double compileSeconds = 0;
  std::optional<Artifact> artifact = loadModel(command.model, settings, &compileSeconds);
  if (!artifact)
    return kExitFailure;
  // An artifact for a range of shapes runs at the shape --shape gives (the largest otherwise).
  std::optional<std::vector<Tensor>> inputs =
      arrangeInputs(*artifact, {}, /*randomizeMissing=*/true, command.seed,
                    shapeBindingsOf(command.options.shapes));
  if (!inputs)
    return kExitUsage;
  // A split model runs every device's session at once, a thread each; the first is traced.
  std::vector<Session> sessions;
  if (artifact->deviceCount() > 1) {
    std::optional<std::vector<Session>> split =
        createSplitSessions(*artifact, command.threads, *device);
    if (!split)
      return kExitFailure;
    sessions = std::move(*split);
  } else {
    std::optional<Session> created = createSession(*artifact, command.threads, *device);
    if (!created)
      return kExitFailure;
    sessions.push_back(std::move(*created));
  }
  Session *session = &sessions[0];
  std::vector<const Tensor *> feeds = pointers(*inputs);
  auto runOnce = [&]() -> Result<std::vector<Tensor>> {
    return sessions.size() > 1 ? runSplitSessions(sessions, feeds) : session->run(feeds);
  };

  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  };
  auto begin = Clock::now();
  for (int i = 0; i < command.warmup; ++i) {
    Result<std::vector<Tensor>> outputs = runOnce();
    if (!outputs.ok()) {
      printError(command.model + ": " + outputs.status().message());
      return kExitFailure;
    }
    if (command.maxSeconds > 0 && seconds(begin) > command.maxSeconds / 2)
      break;
  }
  // The trace covers the timed runs only. A split model's devices are all traced, for the time
  // each spends in its own steps and in collectives.
  for (size_t rank = 0; rank < sessions.size(); ++rank) {
    if (command.trace.empty() && sessions.size() == 1)
      break;
    if (Status started = sessions[rank].startTrace(); !started.ok()) {
      printError(started.message());
      return kExitFailure;
    }
  }
  std::vector<double> samples;
  begin = Clock::now();
  for (int i = 0; i < command.iterations; ++i) {
    auto start = Clock::now();
    Result<std::vector<Tensor>> outputs = runOnce();
    double ms = seconds(start) * 1e3;
    if (!outputs.ok()) {
      printError(command.model + ": " + outputs.status().message());
      return kExitFailure;
    }
    samples.push_back(ms);
    if (command.maxSeconds > 0 && samples.size() >= 3 && seconds(begin) > command.maxSeconds)
      break;
  }

  // Each CPU device's time in its own steps and in collectives, from its trace (a CUDA device's
  // run is one CUDA graph, traced as one slice: its collectives are not apart).
  std::optional<nlohmann::json> deviceTimes;
  if (sessions.size() > 1 && device->kind == "cpu") {
    deviceTimes = splitDeviceTimes(sessions, samples.size());
    if (!deviceTimes)
      return kExitFailure;
  }
  if (!command.trace.empty() && !writeTrace(*session, command.trace))
    return kExitFailure;

  // On a GPU, the steps alone as often again: inputs and outputs left in device memory, as a
  // framework's tensors on the GPU are timed (kiln_session_time_device). Not for a split model:
  // one device's steps alone would wait in their collectives for devices that do not run.
  std::vector<double> deviceSamples;
  if (device->kind != "cpu" && sessions.size() == 1) {
    Result<std::vector<double>> timed = session->timeDevice(samples.size());
    if (!timed.ok()) {
      printError(command.model + ": " + timed.status().message());
      return kExitFailure;
    }
    deviceSamples = timed.value();
  }

  // Nearest-rank percentiles of sorted samples.
  auto percentileOf = [](const std::vector<double> &values, double q) {
    size_t rank = static_cast<size_t>(std::ceil(q / 100.0 * double(values.size())));
    return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
  };
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  auto percentile = [&](double q) { return percentileOf(sorted, q); };
  double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(sorted.size());
  // The batch the runs took: the first input's leading dimension.
  int64_t batch = 1;
  if (!inputs->empty() && !inputs->front().dims().empty() && inputs->front().dims()[0] > 0)
    batch = inputs->front().dims()[0];
  Result<kiln_session_statistics_t> statistics = session->statistics();
  nlohmann::json result = {
      {"model", command.model},
      {"device", command.device},
      {"devices", sessions.size()},
      {"compile_s", compileSeconds},
      {"batch", batch},
      {"threads", statistics.ok() ? statistics.value().num_threads : 0},
      {"warmup", command.warmup},
      {"iterations", samples.size()},
      {"latency_ms",
       {{"p50", percentile(50)},
        {"p90", percentile(90)},
        {"p99", percentile(99)},
        {"min", sorted.front()},
        {"max", sorted.back()},
        {"mean", mean}}},
      {"throughput_per_s", double(batch) * 1000.0 / percentile(50)},
      {"peak_memory_bytes", residentMemory().peak},
      // The arena a run took (an artifact planned per run: its largest shape's so far).
      {"run_arena_bytes", statistics.ok() ? statistics.value().arena_size : 0},
      {"planned_memory_bytes",
       {{"arena", artifact->arenaSize()},
        {"naive_intermediates", artifact->naiveIntermediateSize()},
        {"peak_live", artifact->peakLiveSize()},
        {"modeled_kernel_bytes", artifact->modeledKernelBytes()},
        {"constants", artifact->constantsSize()},
        {"run_peak", artifact->runPeakMemory()}}},
      {"samples_ms", samples},
  };
  llvm::outs() << llvm::format(
      "%s on %s: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, %.1f/s over %zu "
      "runs (compile %.2f s, peak RSS %s, arena %s)\n",
      command.model.c_str(), command.device.c_str(), percentile(50), percentile(90), percentile(99),
      double(batch) * 1000.0 / percentile(50), samples.size(), compileSeconds,
      humanBytes(residentMemory().peak).c_str(),
      humanBytes(statistics.ok() ? statistics.value().arena_size : 0).c_str());
  if (!deviceSamples.empty()) {
    std::vector<double> device = deviceSamples;
    std::sort(device.begin(), device.end());
    result["device_latency_ms"] = {{"p50", percentileOf(device, 50)},
                                   {"p90", percentileOf(device, 90)},
                                   {"p99", percentileOf(device, 99)},
                                   {"min", device.front()},
                                   {"max", device.back()}};
    result["device_samples_ms"] = deviceSamples;
    llvm::outs() << llvm::format("  the steps alone on the device (inputs and outputs left in its "
                                 "memory): p50 %.3f ms, p90 %.3f ms\n",
                                 percentileOf(device, 50), percentileOf(device, 90));
  }
  if (deviceTimes) {
    result["device_times_ms"] = *deviceTimes;
    for (const nlohmann::json &times : *deviceTimes)
      llvm::outs() << llvm::format("  device %d: %.3f ms per run in its own steps, %.3f ms in "
                                   "collectives (waiting for the others included)\n",
                                   times["device"].get<int>(), times["steps"].get<double>(),
                                   times["collectives"].get<double>());
  }
  if (!command.json.empty() && !writeFile(command.json, result.dump(2) + "\n"))
    return kExitFailure;
  return 0;
}

} // namespace kiln::cli
