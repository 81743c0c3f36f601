//===- TensorFile.h - Standalone TensorProto values and .pb tensor files ----===//
//
// A TensorProto outside a model: the serialized tensors of the ONNX backend tests
// (test_data_set_N/input_K.pb, output_K.pb) and concrete input values handed to the importer.
// The tensor is validated like a model's tensors (TensorData.h) and its bytes resolved into
// raw_data layout.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_TENSORFILE_H
#define FRONTENDS_ONNX_TENSORFILE_H

#include "frontends/onnx/Diagnostic.h"
#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/TensorData.h"

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>
#include <string>

namespace kiln::onnx_frontend {

/// A validated TensorProto with its data resolved. Movable, not copyable; the view stays valid
/// when it moves.
class ResolvedTensor {
public:
  ResolvedTensor(ResolvedTensor &&) = default;
  ResolvedTensor &operator=(ResolvedTensor &&) = default;
  ResolvedTensor(const ResolvedTensor &) = delete;
  ResolvedTensor &operator=(const ResolvedTensor &) = delete;

  /// The tensor's data in raw_data layout (little-endian, booleans one byte each); `data` is
  /// nullptr for STRING tensors, whose values are `proto().string_data()`.
  const TensorView &view() const { return view_; }
  const onnx::TensorProto &proto() const { return *proto_; }
  /// True for STRING tensors.
  bool isString() const { return proto_->data_type() == onnx::TensorProto::STRING; }

private:
  friend std::optional<ResolvedTensor> resolveTensor(std::unique_ptr<onnx::TensorProto>,
                                                     const std::string &, DiagnosticSink &);
  ResolvedTensor() = default;

  std::unique_ptr<onnx::TensorProto> proto_;
  std::unique_ptr<TensorBuffer> buffer_;
  TensorView view_;
};

/// Validates `proto` (data type, dims, exactly one data source of the right size; external data
/// is refused) and resolves its bytes. `subject` names the tensor in messages, e.g. "input_0.pb".
/// Returns nullopt after reporting at least one error to `sink`.
std::optional<ResolvedTensor> resolveTensor(std::unique_ptr<onnx::TensorProto> proto,
                                            const std::string &subject, DiagnosticSink &sink);

/// Parses the file at `path` holding one serialized TensorProto (the backend tests' .pb files)
/// without checking its contents. Returns nullptr after reporting an error naming the file.
std::unique_ptr<onnx::TensorProto> parseTensorFile(const std::string &path, DiagnosticSink &sink);

/// Reads the file at `path` holding one serialized TensorProto and resolves it. Every error
/// names the file.
std::optional<ResolvedTensor> readTensorFile(const std::string &path, DiagnosticSink &sink);

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_TENSORFILE_H
