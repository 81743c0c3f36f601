//===- NodeTest.cpp - Running one ONNX backend node test through Kiln -------===//

#include "NodeTest.h"

#include "compiler/Registration.h"
#include "frontends/onnx/HostTensor.h"
#include "frontends/onnx/importer/Importer.h"
#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/TestDataSet.h"
#include "frontends/onnx/ops/OpTable.h"
#include "kiln/inspect.h"
#include "kiln/runtime.h"

#if KILN_CONFORMANCE_HAVE_DRIVER
#include "compiler/driver/Compile.h"
#endif

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <filesystem>
#include <memory>
#include <set>
#include <vector>

namespace kiln::conformance {

const char *testStatusName(TestStatus status) {
  switch (status) {
  case TestStatus::Pass:
    return "pass";
  case TestStatus::Fail:
    return "fail";
  case TestStatus::Skip:
    return "skip";
  }
  return "fail";
}

namespace {

using onnx_frontend::NamedTensor;
using onnx_frontend::TestDataSet;

TestOutcome skip(std::string stage, std::string reason) {
  return TestOutcome{TestStatus::Skip, std::move(stage), std::move(reason), ""};
}

/// The line of `message` that says why a test failed: its first error (from "error: " on, so
/// that the file it names does not split the groups), or its first line when none is marked. A
/// loader's notes (an IR version accepted with a note) come before the error they do not cause.
std::string failureReason(const std::string &message) {
  size_t start = 0;
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    std::string line = message.substr(start, end == std::string::npos ? end : end - start);
    if (size_t error = line.find("error: "); error != std::string::npos)
      return line.substr(error);
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return message.substr(0, message.find('\n'));
}

TestOutcome fail(std::string stage, const std::string &message) {
  return TestOutcome{TestStatus::Fail, std::move(stage), failureReason(message), message};
}

/// Releases a runtime status and returns its message.
std::string takeMessage(kiln_status_t *status) {
  std::string message = std::string(kiln_status_code_string(kiln_status_code(status))) + ": " +
                        kiln_status_message(status);
  kiln_status_release(status);
  return message;
}

struct TensorDeleter {
  void operator()(kiln_tensor_t *tensor) const { kiln_tensor_release(tensor); }
};
using TensorPtr = std::unique_ptr<kiln_tensor_t, TensorDeleter>;

/// Collects the error diagnostics emitted on a context while it is alive.
class ErrorCollector {
public:
  explicit ErrorCollector(mlir::MLIRContext &context)
      : handler_(&context, [this](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error) {
            std::string text = diagnostic.str();
            for (const mlir::Diagnostic &note : diagnostic.getNotes())
              text += "\n  note: " + note.str();
            errors_.push_back(std::move(text));
          }
          return mlir::success();
        }) {}

  /// Every error, one per line; `fallback` when none was emitted.
  std::string text(const std::string &fallback) const {
    if (errors_.empty())
      return fallback;
    std::string joined;
    for (const std::string &error : errors_)
      joined += (joined.empty() ? "" : "\n") + error;
    return joined;
  }

private:
  std::vector<std::string> errors_;
  mlir::ScopedDiagnosticHandler handler_;
};

/// The reason to skip a model Kiln does not claim to cover, or an empty string.
std::string skipReason(const onnx_frontend::LoadedModel &model, const TestDataSet &data) {
  const onnx::GraphProto &graph = model.proto().graph();
  auto nonTensor = [](const onnx::ValueInfoProto &value) -> std::string {
    const onnx::TypeProto &type = value.type();
    if (type.has_sequence_type())
      return "sequence types";
    if (type.has_optional_type())
      return "optional types";
    if (type.has_map_type())
      return "map types";
    if (!type.has_tensor_type())
      return "non-tensor types";
    if (type.tensor_type().elem_type() == onnx::TensorProto::STRING)
      return "string tensors";
    return "";
  };
  for (const auto *values : {&graph.input(), &graph.output()})
    for (const onnx::ValueInfoProto &value : *values)
      if (std::string reason = nonTensor(value); !reason.empty())
        return reason;
  for (const auto *tensors : {&data.inputs, &data.outputs})
    for (const NamedTensor &tensor : *tensors)
      if (tensor.tensor.isString())
        return "string tensors";

  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attribute : node.attribute())
      if (attribute.type() == onnx::AttributeProto::GRAPH ||
          attribute.type() == onnx::AttributeProto::GRAPHS)
        return "control flow: " + node.op_type();

  const onnx_frontend::OpTable &table = onnx_frontend::defaultOpTable();
  for (const onnx::NodeProto &node : graph.node()) {
    auto opset = model.opsets().find(node.domain() == "ai.onnx" ? std::string() : node.domain());
    int64_t version = opset == model.opsets().end() ? 0 : opset->second;
    if (!table.lookup(node.domain(), node.op_type(), version))
      return "unsupported op: " +
             (node.domain().empty() ? node.op_type() : node.domain() + "." + node.op_type());
  }

  for (const auto *tensors : {&data.inputs, &data.outputs})
    for (const NamedTensor &tensor : *tensors)
      if (!onnx_frontend::hostElementType(tensor.tensor.view().dataType)) {
        const onnx_frontend::ElementTypeInfo *type = tensor.tensor.view().elementType;
        return std::string("element type: ") +
               (type ? type->name : std::to_string(tensor.tensor.view().dataType));
      }
  return "";
}

/// Finds the tensor called `name`, or nullptr.
const NamedTensor *findTensor(const std::vector<NamedTensor> &tensors, const std::string &name) {
  for (const NamedTensor &tensor : tensors)
    if (tensor.name == name)
      return &tensor;
  return nullptr;
}

#if KILN_CONFORMANCE_HAVE_DRIVER
/// What a compiled artifact lacks: for CUDA, a cubin for each of `options.gpuArchs` (gpu-module-
/// to-binary fails the compilation when ptxas refuses a kernel) and the PTX fallback; for the
/// CPU, its shared object. Empty when complete.
std::string missingCodeObjects(const kiln_artifact_t *artifact, const CompileOptions &options) {
  std::set<std::string> present;
  for (size_t i = 0; i < kiln_artifact_code_object_count(artifact); ++i) {
    kiln_code_object_info_t info{};
    info.struct_size = sizeof(info);
    if (kiln_status_t *status = kiln_artifact_code_object_info(artifact, i, &info)) {
      kiln_status_release(status);
      continue;
    }
    if (info.byte_size <= 4) // Too small to hold code.
      continue;
    if (info.format == KILN_CODE_FORMAT_CUBIN)
      present.insert(std::string(info.target) + "/cubin");
    else if (info.format == KILN_CODE_FORMAT_PTX)
      present.insert(std::string(info.target) + "/ptx");
    else
      present.insert("elf");
  }
  std::vector<std::string> wanted;
  if (options.target.kind == TargetKind::Cuda) {
    std::vector<std::string> archs = options.target.gpuArchNames();
    for (const std::string &arch : archs)
      wanted.push_back(arch == kCudaSimArch ? std::string("elf") : arch + "/cubin");
    if (std::string fallback = ptxFallbackArch(archs); !fallback.empty())
      wanted.push_back(fallback + "/ptx");
  } else {
    wanted.push_back("elf");
  }
  std::string missing;
  for (const std::string &want : wanted)
    if (!present.count(want))
      missing += (missing.empty() ? "the artifact lacks " : ", ") + want;
  return missing;
}
#endif

} // namespace

TestOutcome runNodeTest(const std::string &directory, const NodeTestOptions &options,
                        const std::function<void(const std::string &stage)> &onStage) {
  namespace fs = std::filesystem;
  std::string modelPath = (fs::path(directory) / "model.onnx").string();

  // Load the model and the test's tensors.
  onStage("load");
  // Every opset loads; the operator table decides per operator version (a translator registered
  // from opset 1 covers the tests written for opsets 1 and 6).
  onnx_frontend::LoadOptions loadOptions;
  loadOptions.minDefaultOpset = 1;
  onnx_frontend::LoadResult loaded = onnx_frontend::loadOnnxModel(modelPath, loadOptions);
  if (!loaded.succeeded())
    return fail("load", loaded.formatDiagnostics());
  const onnx_frontend::LoadedModel &model = *loaded.model;
  onnx_frontend::DiagnosticSink sink(modelPath);
  std::optional<TestDataSet> data = onnx_frontend::readTestDataSet(
      (fs::path(directory) / "test_data_set_0").string(), model.proto().graph(), sink);
  if (!data) {
    std::string message;
    for (const onnx_frontend::Diagnostic &diagnostic : std::move(sink).finish())
      message += (message.empty() ? "" : "\n") + diagnostic.message;
    return fail("load", message);
  }
  if (std::string reason = skipReason(model, *data); !reason.empty())
    return skip("load", reason);

  // Import, specialized for the test's inputs (or, with inputsAtRunTime, their shapes only).
  onStage("import");
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  ErrorCollector errors(context);
  onnx_frontend::ImportOptions importOptions;
  importOptions.modelName = modelPath;
  std::vector<std::string> folded;
  importOptions.foldedInputs = &folded;
  for (const NamedTensor &input : data->inputs) {
    if (options.inputsAtRunTime)
      importOptions.inputShapes[input.name] = std::vector<int64_t>(
          input.tensor.proto().dims().begin(), input.tensor.proto().dims().end());
    else
      importOptions.inputValues[input.name] = input.tensor.proto();
  }
  auto module = onnx_frontend::importOnnxModel(context, model, importOptions);
  if (mlir::failed(module))
    return fail("import", errors.text("the import failed without a diagnostic"));

#if KILN_CONFORMANCE_HAVE_DRIVER
  // Compile for the device.
  onStage("compile");
  CompileOptions compileOptions;
  // The simulated CUDA device runs cuda artifacts with its own code object only.
  const bool simulated = options.device == "cuda-sim";
  compileOptions.target.kind =
      simulated || options.device == "cuda" ? TargetKind::Cuda : TargetKind::Cpu;
  if (simulated) {
    compileOptions.target.gpuArchs.clear();
    compileOptions.target.cudaSim = true;
  }
  CompileRequest request;
  request.sourceName = modelPath;
  compileOptions.streams = options.streams;
  if (!options.dumpIrDirectory.empty())
    compileOptions.dumpIrDirectory =
        (fs::path(options.dumpIrDirectory) / fs::path(directory).filename()).string();
  mlir::FailureOr<std::string> artifactBytes = compileToArtifact(**module, compileOptions, request);
  if (mlir::failed(artifactBytes))
    return fail("compile", errors.text("the compilation failed without a diagnostic"));

  // Run it through the runtime's C API on this thread.
  onStage("run");
  kiln_artifact_t *artifact = nullptr;
  if (kiln_status_t *status = kiln_artifact_load_memory(
          artifactBytes->data(), artifactBytes->size(), modelPath.c_str(), &artifact))
    return fail("run", "loading the artifact: " + takeMessage(status));
  std::unique_ptr<kiln_artifact_t, void (*)(kiln_artifact_t *)> artifactOwner(
      artifact, kiln_artifact_release);
  if (options.compileOnly) {
    if (std::string missing = missingCodeObjects(artifact, compileOptions); !missing.empty())
      return fail("compile", missing);
    return TestOutcome{TestStatus::Pass, "compiled", "", ""};
  }
  kiln_session_options_t sessionOptions;
  kiln_session_options_initialize(&sessionOptions);
  sessionOptions.device_kind = options.device == "cuda"       ? KILN_DEVICE_KIND_CUDA
                               : options.device == "cuda-sim" ? KILN_DEVICE_KIND_CUDA_SIM
                                                              : KILN_DEVICE_KIND_CPU;
  sessionOptions.num_threads = 1;
  kiln_session_t *session = nullptr;
  if (kiln_status_t *status = kiln_session_create(artifact, &sessionOptions, &session))
    return fail("run", "creating the session: " + takeMessage(status));
  std::unique_ptr<kiln_session_t, void (*)(kiln_session_t *)> sessionOwner(session,
                                                                           kiln_session_release);

  std::vector<TensorPtr> inputs;
  std::vector<const kiln_tensor_t *> inputPointers;
  for (size_t i = 0; i < kiln_artifact_input_count(artifact); ++i) {
    kiln_tensor_signature_t signature{};
    signature.struct_size = sizeof(signature);
    if (kiln_status_t *status = kiln_artifact_input_signature(artifact, i, &signature))
      return fail("run", "input signature " + std::to_string(i) + ": " + takeMessage(status));
    const NamedTensor *value = findTensor(data->inputs, signature.name);
    if (!value)
      return fail("run", std::string("the artifact's input '") + signature.name +
                             "' has no value in test_data_set_0");
    kiln_tensor_t *tensor = nullptr;
    if (kiln_status_t *status = onnx_frontend::createHostTensor(value->tensor.view(), &tensor))
      return fail("run", "input '" + value->name + "': " + takeMessage(status));
    inputs.emplace_back(tensor);
    inputPointers.push_back(tensor);
  }
  size_t outputCount = kiln_artifact_output_count(artifact);
  std::vector<kiln_tensor_t *> rawOutputs(outputCount, nullptr);
  if (kiln_status_t *status = kiln_session_run(session, inputPointers.size(), inputPointers.data(),
                                               outputCount, rawOutputs.data()))
    return fail("run", takeMessage(status));
  std::vector<TensorPtr> outputs;
  for (kiln_tensor_t *output : rawOutputs)
    outputs.emplace_back(output);

  // Compare every output with its reference.
  onStage("compare");
  if (outputCount != data->outputs.size())
    return fail("compare", "the artifact has " + std::to_string(outputCount) +
                               " outputs but test_data_set_0 has " +
                               std::to_string(data->outputs.size()));
  std::string mismatches;
  for (size_t i = 0; i < outputCount; ++i) {
    kiln_tensor_signature_t signature{};
    signature.struct_size = sizeof(signature);
    std::string name;
    if (!kiln_artifact_output_signature(artifact, i, &signature) && signature.name)
      name = signature.name;
    const NamedTensor *expected = name.empty() ? nullptr : findTensor(data->outputs, name);
    if (!expected)
      expected = &data->outputs[i];
    kiln_tensor_t *reference = nullptr;
    if (kiln_status_t *status =
            onnx_frontend::createHostTensor(expected->tensor.view(), &reference))
      return fail("compare", "output '" + expected->name + "': " + takeMessage(status));
    TensorPtr referenceOwner(reference);
    if (std::optional<std::string> difference = compareTensors(
            outputs[i].get(), reference, "output '" + expected->name + "'", options.tolerance))
      mismatches += (mismatches.empty() ? "" : "\n") + *difference;
  }
  if (!mismatches.empty())
    return fail("compare", mismatches);
  return TestOutcome{TestStatus::Pass, "done", "", ""};
#else
  (void)options;
  return skip("compile", "compile: this build has no compiler driver (import only)");
#endif
}

} // namespace kiln::conformance
