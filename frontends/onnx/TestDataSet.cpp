//===- TestDataSet.cpp - The input and output tensors of an ONNX backend test ===//

#include "frontends/onnx/TestDataSet.h"

#include <filesystem>
#include <set>

namespace kiln::onnx_frontend {
namespace {

/// Reads `directory`/`prefix`K.pb for K = 0, 1, ... while the files exist, naming them after
/// `values`; the names of non-tensor values go to `nonTensor` unread. Returns false after
/// reporting an error.
bool readNumberedTensors(const std::filesystem::path &directory, const std::string &prefix,
                         const std::vector<const onnx::ValueInfoProto *> &values,
                         const std::string &what, std::vector<NamedTensor> &out,
                         std::vector<std::string> &nonTensor, DiagnosticSink &sink) {
  for (size_t k = 0;; ++k) {
    std::filesystem::path file = directory / (prefix + std::to_string(k) + ".pb");
    std::error_code error;
    if (!std::filesystem::is_regular_file(file, error))
      return true;
    if (k >= values.size()) {
      sink.error(sink.fileLocation(), "'" + file.string() + "' has no matching graph " + what +
                                          ": the graph has " + std::to_string(values.size()));
      return false;
    }
    if (values[k]->type().has_tensor_type() || !values[k]->has_type()) {
      std::unique_ptr<onnx::TensorProto> proto = parseTensorFile(file.string(), sink);
      if (!proto)
        return false;
      // NumPy has no bfloat16, so the tests store BFLOAT16 values as their UINT16 bit patterns
      // (both live in int32_data or raw_data with the same layout).
      if (proto->data_type() == onnx::TensorProto::UINT16 &&
          values[k]->type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16)
        proto->set_data_type(onnx::TensorProto::BFLOAT16);
      std::optional<ResolvedTensor> tensor =
          resolveTensor(std::move(proto), "tensor file '" + file.string() + "'", sink);
      if (!tensor)
        return false;
      out.push_back(NamedTensor{values[k]->name(), std::move(*tensor)});
    } else {
      nonTensor.push_back(values[k]->name());
    }
  }
}

} // namespace

std::optional<TestDataSet> readTestDataSet(const std::string &directory,
                                           const onnx::GraphProto &graph, DiagnosticSink &sink) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto &initializer : graph.initializer())
    initializers.insert(initializer.name());
  std::vector<const onnx::ValueInfoProto *> inputs, outputs;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.count(input.name()))
      inputs.push_back(&input);
  for (const onnx::ValueInfoProto &output : graph.output())
    outputs.push_back(&output);
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    sink.error(sink.fileLocation(), "test data set '" + directory + "' is not a directory");
    return std::nullopt;
  }
  TestDataSet set;
  if (!readNumberedTensors(directory, "input_", inputs, "input", set.inputs, set.nonTensorValues,
                           sink) ||
      !readNumberedTensors(directory, "output_", outputs, "output", set.outputs,
                           set.nonTensorValues, sink))
    return std::nullopt;
  return set;
}

} // namespace kiln::onnx_frontend
