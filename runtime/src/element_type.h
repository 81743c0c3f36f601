//===- element_type.h - Element type helpers inside the runtime -*- C++ -*-===//
//
// Validation and parsing of kiln_element_type_t for the runtime's C++ code.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_ELEMENT_TYPE_H_
#define KILN_RUNTIME_SRC_ELEMENT_TYPE_H_

#include <optional>
#include <string>
#include <string_view>

#include "kiln/runtime.h"

namespace kiln::runtime {

/// Every valid element type, in enum order.
inline constexpr kiln_element_type_t kAllElementTypes[] = {
    KILN_ELEMENT_TYPE_F32,        KILN_ELEMENT_TYPE_F16,        KILN_ELEMENT_TYPE_BF16,
    KILN_ELEMENT_TYPE_F8E4M3FN,   KILN_ELEMENT_TYPE_F8E5M2,     KILN_ELEMENT_TYPE_F64,
    KILN_ELEMENT_TYPE_I64,        KILN_ELEMENT_TYPE_I32,        KILN_ELEMENT_TYPE_I16,
    KILN_ELEMENT_TYPE_I8,         KILN_ELEMENT_TYPE_U8,         KILN_ELEMENT_TYPE_BOOL,
    KILN_ELEMENT_TYPE_U16,        KILN_ELEMENT_TYPE_U32,        KILN_ELEMENT_TYPE_U64,
    KILN_ELEMENT_TYPE_F8E4M3FNUZ, KILN_ELEMENT_TYPE_F8E5M2FNUZ,
};

/// Returns whether `type` is one of the enumerators of kiln_element_type_t.
bool isValidElementType(kiln_element_type_t type);

/// Parses a canonical name or an alias (see kiln_element_type_parse).
std::optional<kiln_element_type_t> parseElementType(std::string_view name);

/// Returns the canonical name of `type` for messages, or "element type N" for
/// an invalid value.
std::string describeElementType(kiln_element_type_t type);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_ELEMENT_TYPE_H_
