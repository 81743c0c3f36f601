//===- TensorData.cpp - Element types, tensor checks and resolved tensor data -===//

#include "frontends/onnx/TensorData.h"

#include <cstring>
#include <new>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_data is little-endian; tensor views assume a little-endian host"
#endif

namespace kiln::onnx_frontend {
namespace {

using onnx::TensorProto;

// Values 17..26 are newer than the libonnx 1.12 enum, so they are spelled as numbers.
constexpr ElementTypeInfo kElementTypes[] = {
    {TensorProto::FLOAT, "FLOAT", 32, TypedField::FloatData, 1},
    {TensorProto::UINT8, "UINT8", 8, TypedField::Int32Data, 1},
    {TensorProto::INT8, "INT8", 8, TypedField::Int32Data, 1},
    {TensorProto::UINT16, "UINT16", 16, TypedField::Int32Data, 1},
    {TensorProto::INT16, "INT16", 16, TypedField::Int32Data, 1},
    {TensorProto::INT32, "INT32", 32, TypedField::Int32Data, 1},
    {TensorProto::INT64, "INT64", 64, TypedField::Int64Data, 1},
    {TensorProto::STRING, "STRING", 0, TypedField::StringData, 1},
    {TensorProto::BOOL, "BOOL", 8, TypedField::Int32Data, 1},
    {TensorProto::FLOAT16, "FLOAT16", 16, TypedField::Int32Data, 1},
    {TensorProto::DOUBLE, "DOUBLE", 64, TypedField::DoubleData, 1},
    {TensorProto::UINT32, "UINT32", 32, TypedField::Uint64Data, 1},
    {TensorProto::UINT64, "UINT64", 64, TypedField::Uint64Data, 1},
    {TensorProto::COMPLEX64, "COMPLEX64", 64, TypedField::FloatData, 2},
    {TensorProto::COMPLEX128, "COMPLEX128", 128, TypedField::DoubleData, 2},
    {TensorProto::BFLOAT16, "BFLOAT16", 16, TypedField::Int32Data, 1},
    {17, "FLOAT8E4M3FN", 8, TypedField::Int32Data, 1},
    {18, "FLOAT8E4M3FNUZ", 8, TypedField::Int32Data, 1},
    {19, "FLOAT8E5M2", 8, TypedField::Int32Data, 1},
    {20, "FLOAT8E5M2FNUZ", 8, TypedField::Int32Data, 1},
    {21, "UINT4", 4, TypedField::Int32Data, 1},
    {22, "INT4", 4, TypedField::Int32Data, 1},
    {23, "FLOAT4E2M1", 4, TypedField::Int32Data, 1},
    {24, "FLOAT8E8M0", 8, TypedField::Int32Data, 1},
    {25, "UINT2", 2, TypedField::Int32Data, 1},
    {26, "INT2", 2, TypedField::Int32Data, 1},
};

/// Returns how many values `field` holds in `tensor`.
uint64_t typedFieldSize(const TensorProto &tensor, TypedField field) {
  switch (field) {
  case TypedField::FloatData:
    return static_cast<uint64_t>(tensor.float_data_size());
  case TypedField::Int32Data:
    return static_cast<uint64_t>(tensor.int32_data_size());
  case TypedField::StringData:
    return static_cast<uint64_t>(tensor.string_data_size());
  case TypedField::Int64Data:
    return static_cast<uint64_t>(tensor.int64_data_size());
  case TypedField::DoubleData:
    return static_cast<uint64_t>(tensor.double_data_size());
  case TypedField::Uint64Data:
    return static_cast<uint64_t>(tensor.uint64_data_size());
  }
  return 0;
}

constexpr TypedField kAllTypedFields[] = {TypedField::FloatData,  TypedField::Int32Data,
                                          TypedField::StringData, TypedField::Int64Data,
                                          TypedField::DoubleData, TypedField::Uint64Data};

} // namespace

bool isPackedSubByte(const ElementTypeInfo &type) { return type.bitWidth > 0 && type.bitWidth < 8; }

std::optional<SubByteInteger> subByteInteger(int32_t dataType) {
  switch (dataType) {
  case 21: // UINT4
    return SubByteInteger{4, false};
  case 22: // INT4
    return SubByteInteger{4, true};
  case 25: // UINT2
    return SubByteInteger{2, false};
  case 26: // INT2
    return SubByteInteger{2, true};
  default:
    return std::nullopt;
  }
}

std::vector<uint8_t> unpackSubByte(const ElementTypeInfo &type, const std::byte *data,
                                   uint64_t elementCount) {
  std::vector<uint8_t> values(elementCount);
  const unsigned bits = type.bitWidth, perByte = 8 / bits, mask = (1u << bits) - 1;
  std::optional<SubByteInteger> integer = subByteInteger(type.dataType);
  const bool sign = integer && integer->isSigned;
  for (uint64_t i = 0; i < elementCount; ++i) {
    unsigned value = (std::to_integer<unsigned>(data[i / perByte]) >> (i % perByte * bits)) & mask;
    if (sign && (value >> (bits - 1)) != 0)
      value |= ~mask; // Sign-extended to the byte.
    values[i] = static_cast<uint8_t>(value);
  }
  return values;
}

const char *typedFieldName(TypedField field) {
  switch (field) {
  case TypedField::FloatData:
    return "float_data";
  case TypedField::Int32Data:
    return "int32_data";
  case TypedField::StringData:
    return "string_data";
  case TypedField::Int64Data:
    return "int64_data";
  case TypedField::DoubleData:
    return "double_data";
  case TypedField::Uint64Data:
    return "uint64_data";
  }
  return "?";
}

const char *dataSourceName(TensorDataSource source) {
  switch (source) {
  case TensorDataSource::None:
    return "none";
  case TensorDataSource::RawData:
    return "raw_data";
  case TensorDataSource::TypedField:
    return "typed field";
  case TensorDataSource::ExternalData:
    return "external data";
  }
  return "?";
}

const ElementTypeInfo *findElementType(int32_t dataType) {
  for (const ElementTypeInfo &type : kElementTypes)
    if (type.dataType == dataType)
      return &type;
  return nullptr;
}

std::optional<uint64_t> rawByteSize(const ElementTypeInfo &type, uint64_t elementCount) {
  if (isPackedSubByte(type))
    return (elementCount + 8 / type.bitWidth - 1) / (8 / type.bitWidth);
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(elementCount, uint64_t{type.bitWidth / 8}, &bytes))
    return std::nullopt;
  return bytes;
}

std::optional<uint64_t> typedValueCount(const ElementTypeInfo &type, uint64_t elementCount) {
  if (isPackedSubByte(type))
    return (elementCount + 8 / type.bitWidth - 1) / (8 / type.bitWidth);
  uint64_t values = 0;
  if (__builtin_mul_overflow(elementCount, uint64_t{type.valuesPerElement}, &values))
    return std::nullopt;
  return values;
}

std::string formatDims(const google::protobuf::RepeatedField<int64_t> &dims) {
  std::string text = "[";
  for (int i = 0; i < dims.size(); ++i) {
    if (i > 0)
      text += ", ";
    text += std::to_string(dims.Get(i));
  }
  return text + "]";
}

std::optional<TensorLayout> validateTensorProto(const TensorProto &tensor,
                                                const std::string &subject,
                                                const SourceLocation &location,
                                                DiagnosticSink &sink) {
  const std::size_t errorsBefore = sink.errorCount();
  TensorLayout layout;

  layout.type = findElementType(tensor.data_type());
  if (tensor.data_type() == TensorProto::UNDEFINED)
    sink.error(location, subject + " has no data_type (UNDEFINED)");
  else if (!layout.type)
    sink.error(location, subject + " has unknown data_type " + std::to_string(tensor.data_type()));

  // The element count and its byte size, with every multiplication overflow-checked.
  bool sizeKnown = true;
  uint64_t elementCount = 1;
  for (int i = 0; i < tensor.dims_size(); ++i) {
    const int64_t dim = tensor.dims(i);
    if (dim < 0) {
      sink.error(location, subject + " has negative dimension #" + std::to_string(i) + " (" +
                               std::to_string(dim) + ") in dims " + formatDims(tensor.dims()));
      sizeKnown = false;
      continue;
    }
    if (sizeKnown &&
        (__builtin_mul_overflow(elementCount, static_cast<uint64_t>(dim), &elementCount) ||
         elementCount > static_cast<uint64_t>(INT64_MAX))) {
      sink.error(location, subject + ": the element count of dims " + formatDims(tensor.dims()) +
                               " overflows 64 bits");
      sizeKnown = false;
    }
  }
  if (sizeKnown && layout.type) {
    std::optional<uint64_t> bytes = rawByteSize(*layout.type, elementCount);
    if (!bytes || *bytes > static_cast<uint64_t>(INT64_MAX) ||
        *bytes > static_cast<uint64_t>(SIZE_MAX)) {
      sink.error(location, subject + ": dims " + formatDims(tensor.dims()) + " of " +
                               layout.type->name + " need more bytes than fit in 64 bits");
      sizeKnown = false;
    } else {
      layout.byteSize = *bytes;
    }
  }
  layout.elementCount = elementCount;

  if (tensor.has_segment())
    sink.error(location, subject + " is segmented (TensorProto.segment), which is not supported");

  // Exactly one data source.
  const bool external = tensor.data_location() == TensorProto::EXTERNAL;
  if (tensor.data_location() != TensorProto::DEFAULT && !external)
    sink.error(location,
               subject + " has unknown data_location " + std::to_string(tensor.data_location()));
  if (!external && tensor.external_data_size() > 0)
    sink.error(location, subject + " has external_data entries but its data_location is not "
                                   "EXTERNAL");
  std::vector<std::string> sources;
  if (tensor.has_raw_data())
    sources.push_back("raw_data");
  for (TypedField field : kAllTypedFields)
    if (typedFieldSize(tensor, field) > 0)
      sources.push_back(typedFieldName(field));
  if (external)
    sources.push_back("external data");
  if (sources.size() > 1) {
    std::string list;
    for (const std::string &source : sources)
      list += (list.empty() ? "" : ", ") + source;
    sink.error(location, subject + " has " + std::to_string(sources.size()) + " data sources (" +
                             list + "); exactly one is allowed");
  }

  if (sink.errorCount() != errorsBefore || !layout.type || !sizeKnown)
    return std::nullopt;

  const ElementTypeInfo &type = *layout.type;
  if (sources.empty()) {
    if (elementCount != 0) {
      sink.error(location, subject + " has no data, but dims " + formatDims(tensor.dims()) +
                               " need " + std::to_string(elementCount) + " elements");
      return std::nullopt;
    }
    layout.source = TensorDataSource::None;
    return layout;
  }

  if (external) {
    if (type.dataType == TensorProto::STRING) {
      sink.error(location, subject + ": STRING tensors cannot be stored as external data");
      return std::nullopt;
    }
    layout.source = TensorDataSource::ExternalData;
    return layout;
  }

  if (tensor.has_raw_data()) {
    if (type.dataType == TensorProto::STRING) {
      sink.error(location, subject + ": STRING tensors cannot use raw_data; use string_data");
      return std::nullopt;
    }
    if (tensor.raw_data().size() != layout.byteSize) {
      sink.error(location, subject + ": raw_data holds " +
                               std::to_string(tensor.raw_data().size()) + " bytes, but dims " +
                               formatDims(tensor.dims()) + " of " + type.name + " need " +
                               std::to_string(layout.byteSize));
      return std::nullopt;
    }
    layout.source = TensorDataSource::RawData;
    return layout;
  }

  for (TypedField field : kAllTypedFields) {
    const uint64_t present = typedFieldSize(tensor, field);
    if (present == 0)
      continue;
    if (field != type.typedField) {
      sink.error(location, subject + ": " + typedFieldName(field) + " cannot hold " + type.name +
                               " values; the ONNX spec uses " + typedFieldName(type.typedField));
      return std::nullopt;
    }
    const std::optional<uint64_t> needed = typedValueCount(type, elementCount);
    if (!needed || present != *needed) {
      sink.error(location, subject + ": " + typedFieldName(field) + " holds " +
                               std::to_string(present) + " values, but dims " +
                               formatDims(tensor.dims()) + " of " + type.name + " need " +
                               (needed ? std::to_string(*needed) : std::string("more")));
      return std::nullopt;
    }
  }
  layout.source = TensorDataSource::TypedField;
  return layout;
}

void TensorBuffer::AlignedDelete::operator()(std::byte *pointer) const {
  ::operator delete[](pointer, std::align_val_t(kTensorBufferAlignment));
}

TensorBuffer::TensorBuffer(std::size_t size)
    : data_(static_cast<std::byte *>(
          ::operator new[](size == 0 ? 1 : size, std::align_val_t(kTensorBufferAlignment)))),
      size_(size) {}

bool typedFieldIsViewable(const ElementTypeInfo &type) {
  switch (type.dataType) {
  case TensorProto::FLOAT:
  case TensorProto::COMPLEX64:
  case TensorProto::INT32:
  case TensorProto::INT64:
  case TensorProto::DOUBLE:
  case TensorProto::COMPLEX128:
  case TensorProto::UINT64:
  case TensorProto::STRING:
    return true;
  default:
    return false;
  }
}

const std::byte *typedFieldBytes(const TensorProto &tensor, const TensorLayout &layout) {
  switch (layout.type->typedField) {
  case TypedField::FloatData:
    return reinterpret_cast<const std::byte *>(tensor.float_data().data());
  case TypedField::Int32Data:
    return reinterpret_cast<const std::byte *>(tensor.int32_data().data());
  case TypedField::Int64Data:
    return reinterpret_cast<const std::byte *>(tensor.int64_data().data());
  case TypedField::DoubleData:
    return reinterpret_cast<const std::byte *>(tensor.double_data().data());
  case TypedField::Uint64Data:
    return reinterpret_cast<const std::byte *>(tensor.uint64_data().data());
  case TypedField::StringData:
    return nullptr;
  }
  return nullptr;
}

void convertTypedField(const TensorProto &tensor, const TensorLayout &layout, std::byte *out) {
  const ElementTypeInfo &type = *layout.type;
  if (type.typedField == TypedField::Uint64Data) {
    // UINT32 values are held in uint64_data.
    for (int i = 0; i < tensor.uint64_data_size(); ++i) {
      const uint32_t value = static_cast<uint32_t>(tensor.uint64_data(i));
      std::memcpy(out + std::size_t(i) * 4, &value, 4);
    }
    return;
  }
  // Every other narrowed type lives in int32_data: one value per element (one packed byte per
  // two elements for the 4-bit types, per four for the 2-bit ones), keeping the low bits of each
  // value.
  const std::size_t width = isPackedSubByte(type) ? 1 : type.bitWidth / 8;
  for (int i = 0; i < tensor.int32_data_size(); ++i) {
    uint32_t value = static_cast<uint32_t>(tensor.int32_data(i));
    if (type.dataType == TensorProto::BOOL)
      value = value != 0 ? 1 : 0;
    if (width == 1) {
      out[i] = static_cast<std::byte>(value & 0xffu);
    } else {
      const uint16_t half = static_cast<uint16_t>(value & 0xffffu);
      std::memcpy(out + std::size_t(i) * 2, &half, 2);
    }
  }
}

} // namespace kiln::onnx_frontend
