//===- TensorData.h - Element types, tensor checks and resolved tensor data -===//

#ifndef FRONTENDS_ONNX_TENSORDATA_H
#define FRONTENDS_ONNX_TENSORDATA_H

#include "frontends/onnx/Diagnostic.h"

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::onnx_frontend {

/// The repeated field of a TensorProto that holds an element type's values when neither
/// raw_data nor external data is used (the ONNX spec fixes one field per type).
enum class TypedField { FloatData, Int32Data, StringData, Int64Data, DoubleData, Uint64Data };

/// Returns the field's name in onnx.proto, e.g. "int32_data".
const char *typedFieldName(TypedField field);

/// What the loader knows about one ONNX element type (a TensorProto.DataType value).
struct ElementTypeInfo {
  int32_t dataType;
  /// The enumerator's name in onnx.proto, e.g. "FLOAT16".
  const char *name;
  /// Bits one element occupies in raw_data: 4 and 2 for the packed types, 0 for STRING.
  uint32_t bitWidth;
  /// The typed field that may hold this type's values.
  TypedField typedField;
  /// Values of `typedField` per element: 2 for the complex types, 1 otherwise. The packed sub-byte
  /// types store one packed byte per int32_data value.
  uint32_t valuesPerElement;
};

/// Returns the element type for `dataType`, or nullptr when it is UNDEFINED or a value this
/// loader does not know. The types newer than libonnx 1.12 (FLOAT8*, UINT4, INT4, FLOAT4E2M1,
/// FLOAT8E8M0, UINT2 and INT2: values 17..26) are known.
const ElementTypeInfo *findElementType(int32_t dataType);

/// Whether `type` packs several elements per byte: the 4-bit types two, the 2-bit types four,
/// from the low bits up.
bool isPackedSubByte(const ElementTypeInfo &type);

/// A 4- or 2-bit integer type (INT4, UINT4, INT2, UINT2). Kiln holds each element in one byte of
/// the 8-bit integer type of the same signedness, its value sign- or zero-extended: the loaders
/// unpack ONNX's packed data, and the operators that produce such values wrap or clamp them to
/// the narrow range.
struct SubByteInteger {
  unsigned bits;
  bool isSigned;
};

/// FLOAT4E2M1 (1 sign, 2 exponent and 1 mantissa bits: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
/// negatives, no infinity or NaN). Kiln holds each element's 4-bit code S.EE.M in a uint8; the
/// operators that convert to or from it (Cast, CastLike, QuantizeLinear, DequantizeLinear) encode
/// and decode it.
inline constexpr int32_t kFloat4E2M1 = 23;

/// FLOAT8E8M0 (an 8-bit exponent, bias 127: the powers of two 2^-127 to 2^127, 0xFF for NaN).
/// Kiln holds its code in a uint8, as for kFloat4E2M1; Cast encodes and decodes it.
inline constexpr int32_t kFloat8E8M0 = 24;

/// The 4- or 2-bit integer type `dataType` names, or nullopt.
std::optional<SubByteInteger> subByteInteger(int32_t dataType);

/// The `elementCount` elements of packed data of `type` (isPackedSubByte), one per byte: INT4
/// and INT2 sign-extended, the others zero-extended (FLOAT4E2M1: its 4-bit code).
std::vector<uint8_t> unpackSubByte(const ElementTypeInfo &type, const std::byte *data,
                                   uint64_t elementCount);

/// Returns how many bytes `elementCount` elements of `type` occupy in raw_data (little-endian,
/// 4-bit types packed two per byte, 2-bit types four), or nullopt when that overflows 64 bits.
std::optional<uint64_t> rawByteSize(const ElementTypeInfo &type, uint64_t elementCount);

/// Returns how many values of the type's typed field `elementCount` elements need, or nullopt on
/// overflow.
std::optional<uint64_t> typedValueCount(const ElementTypeInfo &type, uint64_t elementCount);

/// Formats dims as "[2, 3]".
std::string formatDims(const google::protobuf::RepeatedField<int64_t> &dims);

/// Where a tensor's bytes come from.
enum class TensorDataSource {
  /// The tensor has no elements and no data.
  None,
  RawData,
  /// float_data, int32_data, string_data, int64_data, double_data or uint64_data.
  TypedField,
  /// A file next to the model (data_location = EXTERNAL).
  ExternalData,
};

/// Where in a model a tensor was found.
enum class TensorOrigin {
  /// GraphProto.initializer of the main graph or of a subgraph.
  Initializer,
  /// A TENSOR or TENSORS attribute of a node (e.g. Constant's `value`).
  Attribute,
};

/// Returns "none", "raw_data", "typed field" or "external data".
const char *dataSourceName(TensorDataSource source);

/// What validating a TensorProto's metadata established: enough to resolve its data later
/// without checking anything again.
struct TensorLayout {
  const ElementTypeInfo *type = nullptr;
  uint64_t elementCount = 0;
  /// The size of the tensor's data in raw_data layout (0 for STRING).
  uint64_t byteSize = 0;
  TensorDataSource source = TensorDataSource::None;
};

/// Checks a tensor's data_type, dims and its single data source without reading or allocating
/// any tensor data: dims are non-negative, the element count and byte size fit in 64 bits,
/// exactly one source is present, raw_data and typed fields hold exactly as much as the dims
/// need, and the typed field is the one the element type uses. External data is only
/// recognised here; ExternalData.h checks its file. `subject` names the tensor in messages,
/// e.g. "initializer 'w'". Returns nullopt after reporting at least one error.
std::optional<TensorLayout> validateTensorProto(const onnx::TensorProto &tensor,
                                                const std::string &subject,
                                                const SourceLocation &location,
                                                DiagnosticSink &sink);

/// Memory owned by a loaded model for tensor data that could not be viewed in place, aligned to
/// `kTensorBufferAlignment` bytes.
class TensorBuffer {
public:
  static constexpr std::size_t kTensorBufferAlignment = 64;

  /// Allocates `size` bytes (throws std::bad_alloc when that fails).
  explicit TensorBuffer(std::size_t size);
  std::byte *data() { return data_.get(); }
  const std::byte *data() const { return data_.get(); }
  std::size_t size() const { return size_; }

private:
  struct AlignedDelete {
    void operator()(std::byte *pointer) const;
  };
  std::unique_ptr<std::byte[], AlignedDelete> data_;
  std::size_t size_;
};

/// Returns true when the tensor's typed field already has raw_data layout (FLOAT in float_data,
/// INT64 in int64_data, ...) and can be viewed in place; false when its values must be narrowed
/// (FLOAT16 bit patterns in int32_data, UINT32 in uint64_data, ...).
bool typedFieldIsViewable(const ElementTypeInfo &type);

/// Returns a view of a tensor's typed field in raw_data layout; only valid when
/// `typedFieldIsViewable(*layout.type)`.
const std::byte *typedFieldBytes(const onnx::TensorProto &tensor, const TensorLayout &layout);

/// Narrows a tensor's typed field into raw_data layout in `out` (`layout.byteSize` bytes).
void convertTypedField(const onnx::TensorProto &tensor, const TensorLayout &layout, std::byte *out);

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_TENSORDATA_H
