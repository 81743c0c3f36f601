//===- TensorFile.cpp - Standalone TensorProto values and .pb tensor files --===//

#include "frontends/onnx/TensorFile.h"

#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace kiln::onnx_frontend {

std::optional<ResolvedTensor> resolveTensor(std::unique_ptr<onnx::TensorProto> proto,
                                            const std::string &subject, DiagnosticSink &sink) {
  SourceLocation location = sink.fileLocation();
  location.tensor = proto->name();
  std::optional<TensorLayout> layout = validateTensorProto(*proto, subject, location, sink);
  if (!layout)
    return std::nullopt;
  if (layout->source == TensorDataSource::ExternalData) {
    sink.error(location, subject + " refers to external data, which a standalone tensor cannot "
                                   "resolve");
    return std::nullopt;
  }
  ResolvedTensor result;
  TensorView &view = result.view_;
  view.name = proto->name();
  view.dataType = proto->data_type();
  view.elementType = layout->type;
  view.dims.assign(proto->dims().begin(), proto->dims().end());
  view.elementCount = layout->elementCount;
  view.source = layout->source;
  view.origin = TensorOrigin::Initializer;
  view.location = location;
  view.graphDepth = 0;
  view.proto = proto.get();
  if (layout->source == TensorDataSource::RawData) {
    view.data = reinterpret_cast<const std::byte *>(proto->raw_data().data());
    view.byteSize = layout->byteSize;
  } else if (layout->source == TensorDataSource::TypedField &&
             layout->type->dataType != onnx::TensorProto::STRING) {
    view.byteSize = layout->byteSize;
    if (typedFieldIsViewable(*layout->type)) {
      view.data = typedFieldBytes(*proto, *layout);
    } else {
      result.buffer_ = std::make_unique<TensorBuffer>(layout->byteSize);
      convertTypedField(*proto, *layout, result.buffer_->data());
      view.data = result.buffer_->data();
    }
  }
  result.proto_ = std::move(proto);
  return result;
}

std::unique_ptr<onnx::TensorProto> parseTensorFile(const std::string &path, DiagnosticSink &sink) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    sink.error(sink.fileLocation(), "cannot open tensor file '" + path + "'");
    return nullptr;
  }
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) {
    sink.error(sink.fileLocation(), "cannot read tensor file '" + path + "'");
    return nullptr;
  }
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    sink.error(sink.fileLocation(),
               "tensor file '" + path + "' is larger than a serialized TensorProto may be (2 GiB)");
    return nullptr;
  }
  auto proto = std::make_unique<onnx::TensorProto>();
  if (!proto->ParseFromString(bytes)) {
    sink.error(sink.fileLocation(), "'" + path + "' is not a serialized onnx.TensorProto");
    return nullptr;
  }
  return proto;
}

std::optional<ResolvedTensor> readTensorFile(const std::string &path, DiagnosticSink &sink) {
  std::unique_ptr<onnx::TensorProto> proto = parseTensorFile(path, sink);
  if (!proto)
    return std::nullopt;
  return resolveTensor(std::move(proto), "tensor file '" + path + "'", sink);
}

} // namespace kiln::onnx_frontend
