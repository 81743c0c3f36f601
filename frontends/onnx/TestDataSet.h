//===- TestDataSet.h - The input and output tensors of an ONNX backend test -===//
//
// An ONNX backend test is a directory with model.onnx and test_data_set_N/ folders holding
// input_K.pb and output_K.pb, serialized TensorProtos. input_K belongs to the K-th graph input
// that is not an initializer and output_K to the K-th graph output, as the ONNX backend runner
// pairs them.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_TESTDATASET_H
#define FRONTENDS_ONNX_TESTDATASET_H

#include "frontends/onnx/TensorFile.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::onnx_frontend {

/// One named tensor of a test data set, named after the graph input or output it belongs to.
struct NamedTensor {
  std::string name;
  ResolvedTensor tensor;
};

/// The tensors of one test_data_set_N directory.
struct TestDataSet {
  std::vector<NamedTensor> inputs;
  std::vector<NamedTensor> outputs;
  /// Inputs and outputs the graph declares with a type other than a tensor (sequence, optional,
  /// map): their files hold SequenceProto, OptionalProto or MapProto values, which are not read.
  std::vector<std::string> nonTensorValues;
};

/// Reads every input_K.pb and output_K.pb of `directory` (K = 0, 1, ... without gaps) and names
/// them after `graph`'s inputs (initializers excluded) and outputs; the files of values whose
/// declared type is not a tensor are listed in `nonTensorValues` instead. More files than the
/// graph has inputs or outputs, or an unreadable file, is an error reported to `sink`.
std::optional<TestDataSet> readTestDataSet(const std::string &directory,
                                           const onnx::GraphProto &graph, DiagnosticSink &sink);

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_TESTDATASET_H
