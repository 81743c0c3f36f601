//===- HostTensor.cpp - ONNX tensors as Kiln runtime host tensors -----------===//

#include "frontends/onnx/HostTensor.h"

#include "frontends/onnx/TensorFile.h"

#include <filesystem>

namespace kiln::onnx_frontend {

std::optional<kiln_element_type_t> hostElementType(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return KILN_ELEMENT_TYPE_F32;
  case onnx::TensorProto::DOUBLE:
    return KILN_ELEMENT_TYPE_F64;
  case onnx::TensorProto::FLOAT16:
    return KILN_ELEMENT_TYPE_F16;
  case onnx::TensorProto::BFLOAT16:
    return KILN_ELEMENT_TYPE_BF16;
  case 17: // FLOAT8E4M3FN
    return KILN_ELEMENT_TYPE_F8E4M3FN;
  case 18: // FLOAT8E4M3FNUZ
    return KILN_ELEMENT_TYPE_F8E4M3FNUZ;
  case 19: // FLOAT8E5M2
    return KILN_ELEMENT_TYPE_F8E5M2;
  case 20: // FLOAT8E5M2FNUZ
    return KILN_ELEMENT_TYPE_F8E5M2FNUZ;
  case onnx::TensorProto::INT64:
    return KILN_ELEMENT_TYPE_I64;
  case onnx::TensorProto::INT32:
    return KILN_ELEMENT_TYPE_I32;
  case onnx::TensorProto::INT16:
    return KILN_ELEMENT_TYPE_I16;
  case onnx::TensorProto::INT8:
    return KILN_ELEMENT_TYPE_I8;
  case onnx::TensorProto::UINT8:
    return KILN_ELEMENT_TYPE_U8;
  case onnx::TensorProto::UINT16:
    return KILN_ELEMENT_TYPE_U16;
  case onnx::TensorProto::UINT32:
    return KILN_ELEMENT_TYPE_U32;
  case onnx::TensorProto::UINT64:
    return KILN_ELEMENT_TYPE_U64;
  case onnx::TensorProto::BOOL:
    return KILN_ELEMENT_TYPE_BOOL;
  default:
    if (std::optional<SubByteInteger> integer = subByteInteger(dataType))
      return integer->isSigned ? KILN_ELEMENT_TYPE_I8 : KILN_ELEMENT_TYPE_U8;
    if (dataType == kFloat4E2M1 || dataType == kFloat8E8M0)
      return KILN_ELEMENT_TYPE_U8; // The code (S.EE.M, or the exponent), one per byte.
    return std::nullopt;
  }
}

int32_t onnxDataType(kiln_element_type_t type) {
  for (int32_t dataType = 1; dataType <= 23; ++dataType)
    if (hostElementType(dataType) == type)
      return dataType;
  return onnx::TensorProto::UNDEFINED;
}

onnx::TensorProto tensorProto(const kiln_tensor_t *tensor, const std::string &name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnxDataType(kiln_tensor_element_type(tensor)));
  const int64_t *dims = kiln_tensor_dims(tensor);
  for (size_t d = 0; d < kiln_tensor_rank(tensor); ++d)
    proto.add_dims(dims[d]);
  proto.set_raw_data(kiln_tensor_const_data(tensor), kiln_tensor_byte_size(tensor));
  return proto;
}

kiln_status_t *createHostTensor(const TensorView &view, kiln_tensor_t **outTensor) {
  std::optional<kiln_element_type_t> type = hostElementType(view.dataType);
  if (!type) {
    std::string message =
        "tensor '" + view.name + "' has ONNX element type " +
        (view.elementType ? view.elementType->name : std::to_string(view.dataType)) +
        ", which the runtime has no host tensor type for";
    return kiln_status_create(KILN_STATUS_UNIMPLEMENTED, message.c_str());
  }
  if (view.elementType && isPackedSubByte(*view.elementType)) {
    std::vector<uint8_t> values = unpackSubByte(*view.elementType, view.data, view.elementCount);
    return kiln_tensor_create_copy(*type, view.dims.size(), view.dims.data(), values.data(),
                                   values.size(), outTensor);
  }
  return kiln_tensor_create_copy(*type, view.dims.size(), view.dims.data(), view.data,
                                 view.byteSize, outTensor);
}

kiln_status_t *readHostTensorFile(const std::string &path, kiln_tensor_t **outTensor) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    return kiln_status_create(KILN_STATUS_NOT_FOUND, (path + ": no such tensor file").c_str());
  DiagnosticSink sink(path);
  std::optional<ResolvedTensor> tensor = readTensorFile(path, sink);
  if (!tensor) {
    std::string message;
    for (const Diagnostic &diagnostic : std::move(sink).finish())
      if (diagnostic.severity == Severity::Error)
        message += (message.empty() ? "" : "; ") + diagnostic.message;
    return kiln_status_create(KILN_STATUS_INVALID_ARGUMENT, message.c_str());
  }
  return createHostTensor(tensor->view(), outTensor);
}

} // namespace kiln::onnx_frontend
