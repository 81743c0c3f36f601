//===- HostTensor.h - ONNX tensors as Kiln runtime host tensors -------------===//
//
// Converts resolved ONNX tensors (TensorProto values, .pb tensor files) into the runtime's host
// tensors (kiln_tensor_t of kiln/runtime.h), the form runners feed to sessions and compare
// against. The runtime itself reads no protobuf; this bridge lives in the frontend.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_HOSTTENSOR_H
#define FRONTENDS_ONNX_HOSTTENSOR_H

#include "frontends/onnx/ModelLoader.h"

#include "kiln/runtime.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln::onnx_frontend {

/// The runtime element type of an ONNX TensorProto.DataType, or nullopt when the runtime has
/// none (STRING, complex). The 4- and 2-bit integer types are held in the 8-bit type of their
/// signedness, one element per byte (subByteInteger), FLOAT4E2M1 and FLOAT8E8M0 as their codes
/// in a uint8 (kFloat4E2M1, kFloat8E8M0).
std::optional<kiln_element_type_t> hostElementType(int32_t dataType);

/// Creates a host tensor with `view`'s element type, dims and data (packed 4- and 2-bit
/// integers unpacked, one per byte). Returns UNIMPLEMENTED,
/// naming the tensor and its ONNX type, when the runtime has no such element type (strings
/// included), and the runtime's status when it cannot allocate the tensor.
kiln_status_t *createHostTensor(const TensorView &view, kiln_tensor_t **outTensor);

/// The ONNX data type of a host element type (the inverse of hostElementType).
int32_t onnxDataType(kiln_element_type_t type);

/// A host tensor as an ONNX TensorProto named `name` (its bytes as raw_data, little-endian as
/// the host's), for specializing an import on concrete input values (ImportOptions::inputValues).
onnx::TensorProto tensorProto(const kiln_tensor_t *tensor, const std::string &name);

/// Reads the serialized TensorProto at `path` (a backend test's input_K.pb or output_K.pb) into
/// a host tensor. A file that cannot be read or parsed is INVALID_ARGUMENT (NOT_FOUND when it
/// does not exist), with the loader's message naming the file.
kiln_status_t *readHostTensorFile(const std::string &path, kiln_tensor_t **outTensor);

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_HOSTTENSOR_H
