//===- element_type.cpp - Element types of the C API ----------------------===//
//
// The table of element types: sizes, canonical names and accepted aliases.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/element_type.h"

#include "runtime/src/status.h"

namespace kiln::runtime {
namespace {

/// One row of the element type table.
struct ElementTypeInfo {
  kiln_element_type_t type;
  size_t size;
  const char* name;
  /// The NumPy/PyTorch spelling, also accepted by the parser.
  const char* alias;
};

constexpr ElementTypeInfo kElementTypeInfos[] = {
    {KILN_ELEMENT_TYPE_F32, 4, "f32", "float32"},
    {KILN_ELEMENT_TYPE_F16, 2, "f16", "float16"},
    {KILN_ELEMENT_TYPE_BF16, 2, "bf16", "bfloat16"},
    {KILN_ELEMENT_TYPE_F8E4M3FN, 1, "f8e4m3fn", "float8_e4m3fn"},
    {KILN_ELEMENT_TYPE_F8E5M2, 1, "f8e5m2", "float8_e5m2"},
    {KILN_ELEMENT_TYPE_F64, 8, "f64", "float64"},
    {KILN_ELEMENT_TYPE_I64, 8, "i64", "int64"},
    {KILN_ELEMENT_TYPE_I32, 4, "i32", "int32"},
    {KILN_ELEMENT_TYPE_I16, 2, "i16", "int16"},
    {KILN_ELEMENT_TYPE_I8, 1, "i8", "int8"},
    {KILN_ELEMENT_TYPE_U8, 1, "u8", "uint8"},
    {KILN_ELEMENT_TYPE_BOOL, 1, "bool", "i1"},
    {KILN_ELEMENT_TYPE_U16, 2, "u16", "uint16"},
    {KILN_ELEMENT_TYPE_U32, 4, "u32", "uint32"},
    {KILN_ELEMENT_TYPE_U64, 8, "u64", "uint64"},
    {KILN_ELEMENT_TYPE_F8E4M3FNUZ, 1, "f8e4m3fnuz", "float8_e4m3fnuz"},
    {KILN_ELEMENT_TYPE_F8E5M2FNUZ, 1, "f8e5m2fnuz", "float8_e5m2fnuz"},
};

const ElementTypeInfo* findInfo(kiln_element_type_t type) {
  for (const ElementTypeInfo& info : kElementTypeInfos) {
    if (info.type == type) return &info;
  }
  return nullptr;
}

}  // namespace

bool isValidElementType(kiln_element_type_t type) { return findInfo(type) != nullptr; }

std::optional<kiln_element_type_t> parseElementType(std::string_view name) {
  for (const ElementTypeInfo& info : kElementTypeInfos) {
    if (name == info.name || name == info.alias) return info.type;
  }
  return std::nullopt;
}

std::string describeElementType(kiln_element_type_t type) {
  if (const ElementTypeInfo* info = findInfo(type)) return info->name;
  return "element type " + std::to_string(static_cast<int>(type));
}

}  // namespace kiln::runtime

extern "C" {

size_t kiln_element_type_size(kiln_element_type_t type) {
  const kiln::runtime::ElementTypeInfo* info = kiln::runtime::findInfo(type);
  return info ? info->size : 0;
}

const char* kiln_element_type_name(kiln_element_type_t type) {
  const kiln::runtime::ElementTypeInfo* info = kiln::runtime::findInfo(type);
  return info ? info->name : nullptr;
}

kiln_status_t* kiln_element_type_parse(const char* name, kiln_element_type_t* out_type) {
  return kiln::runtime::guardCApi("kiln_element_type_parse", [&]() -> kiln::Status {
    if (name == nullptr || out_type == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_element_type_parse: name and out_type must not be NULL");
    }
    std::optional<kiln_element_type_t> type = kiln::runtime::parseElementType(name);
    if (!type) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          std::string("unknown element type '") + name +
                              "' (expected one of f32, f16, bf16, f8e4m3fn, f8e5m2, f64, i64, "
                              "i32, i16, i8, u8, bool)");
    }
    *out_type = *type;
    return kiln::Status();
  });
}

}  // extern "C"
