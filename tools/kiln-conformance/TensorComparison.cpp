//===- TensorComparison.cpp - Comparing a run's outputs with reference tensors ===//

#include "TensorComparison.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

namespace kiln::conformance {
namespace {

/// Decodes a small float format with `exponentBits` and `mantissaBits` (and a sign bit) stored
/// in the low bits of `bits`. `ieeeSpecials` says whether the top exponent encodes infinities
/// and NaNs (IEEE style); otherwise only the all-ones pattern is NaN (the E4M3FN convention).
/// `fnuz`: the FNUZ formats, biased one more, whose only NaN is the negative zero pattern.
double decodeSmallFloat(uint32_t bits, int exponentBits, int mantissaBits, bool ieeeSpecials,
                        bool fnuz = false) {
  const uint32_t mantissaMask = (1u << mantissaBits) - 1;
  const uint32_t exponentMask = (1u << exponentBits) - 1;
  const bool negative = (bits >> (exponentBits + mantissaBits)) & 1u;
  const uint32_t exponent = (bits >> mantissaBits) & exponentMask;
  const uint32_t mantissa = bits & mantissaMask;
  const int bias = (1 << (exponentBits - 1)) - (fnuz ? 0 : 1);
  double value;
  if (fnuz && negative && exponent == 0 && mantissa == 0)
    return std::numeric_limits<double>::quiet_NaN();
  if (fnuz) {
    value = exponent == 0 ? std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissaBits)
                          : std::ldexp(static_cast<double>(mantissa | (1u << mantissaBits)),
                                       static_cast<int>(exponent) - bias - mantissaBits);
  } else if (ieeeSpecials && exponent == exponentMask) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::quiet_NaN();
  } else if (!ieeeSpecials && exponent == exponentMask && mantissa == mantissaMask) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissaBits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1u << mantissaBits)),
                       static_cast<int>(exponent) - bias - mantissaBits);
  }
  return negative ? -value : value;
}

bool isFloatType(kiln_element_type_t type) {
  switch (type) {
  case KILN_ELEMENT_TYPE_F32:
  case KILN_ELEMENT_TYPE_F64:
  case KILN_ELEMENT_TYPE_F16:
  case KILN_ELEMENT_TYPE_BF16:
  case KILN_ELEMENT_TYPE_F8E4M3FN:
  case KILN_ELEMENT_TYPE_F8E5M2:
  case KILN_ELEMENT_TYPE_F8E4M3FNUZ:
  case KILN_ELEMENT_TYPE_F8E5M2FNUZ:
    return true;
  default:
    return false;
  }
}

/// Element `i` of a tensor's data read as a `T` (unaligned-safe).
template <typename T> T load(const unsigned char *data, size_t i) {
  T value;
  std::memcpy(&value, data + i * sizeof(T), sizeof(T));
  return value;
}

/// Element `i` of a floating-point tensor's data as a double.
double floatElement(kiln_element_type_t type, const unsigned char *data, size_t i) {
  switch (type) {
  case KILN_ELEMENT_TYPE_F32:
    return load<float>(data, i);
  case KILN_ELEMENT_TYPE_F64:
    return load<double>(data, i);
  case KILN_ELEMENT_TYPE_F16:
    return decodeSmallFloat(load<uint16_t>(data, i), 5, 10, /*ieeeSpecials=*/true);
  case KILN_ELEMENT_TYPE_BF16: {
    uint32_t widened = static_cast<uint32_t>(load<uint16_t>(data, i)) << 16;
    float value;
    std::memcpy(&value, &widened, 4);
    return value;
  }
  case KILN_ELEMENT_TYPE_F8E4M3FN:
    return decodeSmallFloat(data[i], 4, 3, /*ieeeSpecials=*/false);
  case KILN_ELEMENT_TYPE_F8E5M2:
    return decodeSmallFloat(data[i], 5, 2, /*ieeeSpecials=*/true);
  case KILN_ELEMENT_TYPE_F8E4M3FNUZ:
    return decodeSmallFloat(data[i], 4, 3, /*ieeeSpecials=*/false, /*fnuz=*/true);
  case KILN_ELEMENT_TYPE_F8E5M2FNUZ:
    return decodeSmallFloat(data[i], 5, 2, /*ieeeSpecials=*/false, /*fnuz=*/true);
  default:
    return 0;
  }
}

/// Element `i` of an integer or boolean tensor's data. A u64 element keeps its bits (values above
/// INT64_MAX read as negative), so equality is exact; formatInteger prints it unsigned.
int64_t integerElement(kiln_element_type_t type, const unsigned char *data, size_t i) {
  switch (type) {
  case KILN_ELEMENT_TYPE_I64:
  case KILN_ELEMENT_TYPE_U64:
    return load<int64_t>(data, i);
  case KILN_ELEMENT_TYPE_I32:
    return load<int32_t>(data, i);
  case KILN_ELEMENT_TYPE_I16:
    return load<int16_t>(data, i);
  case KILN_ELEMENT_TYPE_I8:
    return static_cast<int8_t>(data[i]);
  case KILN_ELEMENT_TYPE_U8:
    return data[i];
  case KILN_ELEMENT_TYPE_U16:
    return load<uint16_t>(data, i);
  case KILN_ELEMENT_TYPE_U32:
    return load<uint32_t>(data, i);
  case KILN_ELEMENT_TYPE_BOOL:
    return data[i] != 0;
  default:
    return 0;
  }
}

/// An integerElement value as text: u64 elements unsigned.
std::string formatInteger(kiln_element_type_t type, int64_t value) {
  if (type == KILN_ELEMENT_TYPE_U64)
    return std::to_string(static_cast<uint64_t>(value));
  return std::to_string(value);
}

/// The multi-index of flat element `flat` of a tensor with `dims`, as "[1, 2, 0]".
std::string formatIndex(const int64_t *dims, size_t rank, size_t flat) {
  std::vector<int64_t> index(rank);
  for (size_t d = rank; d-- > 0;) {
    index[d] = dims[d] == 0 ? 0 : static_cast<int64_t>(flat % static_cast<size_t>(dims[d]));
    flat = dims[d] == 0 ? flat : flat / static_cast<size_t>(dims[d]);
  }
  std::string text = "[";
  for (size_t d = 0; d < rank; ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

std::string formatNumber(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

} // namespace

std::string formatTensorType(const kiln_tensor_t *tensor) {
  const char *name = kiln_element_type_name(kiln_tensor_element_type(tensor));
  std::string text = std::string(name ? name : "?") + "[";
  const int64_t *dims = kiln_tensor_dims(tensor);
  for (size_t d = 0; d < kiln_tensor_rank(tensor); ++d)
    text += (d ? "," : "") + std::to_string(dims[d]);
  return text + "]";
}

std::optional<std::string> compareTensors(const kiln_tensor_t *actual,
                                          const kiln_tensor_t *expected, const std::string &what,
                                          const Tolerance &requested) {
  kiln_element_type_t type = kiln_tensor_element_type(expected);
  Tolerance tolerance = requested;
  if (type == KILN_ELEMENT_TYPE_BF16) {
    tolerance.relative = std::max(tolerance.relative, kBfloat16Tolerance.relative);
    tolerance.absolute = std::max(tolerance.absolute, kBfloat16Tolerance.absolute);
  }
  bool sameShape =
      kiln_tensor_rank(actual) == kiln_tensor_rank(expected) &&
      std::equal(kiln_tensor_dims(actual), kiln_tensor_dims(actual) + kiln_tensor_rank(actual),
                 kiln_tensor_dims(expected));
  if (kiln_tensor_element_type(actual) != type || !sameShape)
    return what + " is " + formatTensorType(actual) + ", expected " + formatTensorType(expected);

  const auto *got = static_cast<const unsigned char *>(kiln_tensor_const_data(actual));
  const auto *want = static_cast<const unsigned char *>(kiln_tensor_const_data(expected));
  size_t count = kiln_tensor_element_count(expected);
  size_t mismatches = 0;
  size_t worst = 0;
  // How far the worst element is beyond its tolerance (infinite for NaN or infinity mismatches).
  double worstExcess = -1;
  std::string worstValues;
  for (size_t i = 0; i < count; ++i) {
    double excess;
    std::string values;
    if (isFloatType(type)) {
      double a = floatElement(type, got, i), e = floatElement(type, want, i);
      if (std::isnan(a) || std::isnan(e) || std::isinf(a) || std::isinf(e)) {
        bool same = (std::isnan(a) && std::isnan(e)) || a == e;
        excess = same ? 0 : std::numeric_limits<double>::infinity();
      } else {
        double allowed = tolerance.absolute + tolerance.relative * std::fabs(e);
        excess = std::fabs(a - e) / allowed;
        excess = excess <= 1 ? 0 : excess;
      }
      if (excess > worstExcess && excess > 0)
        values = "got " + formatNumber(a) + ", expected " + formatNumber(e) + " (|diff| " +
                 formatNumber(std::fabs(a - e)) + ")";
    } else {
      int64_t a = integerElement(type, got, i), e = integerElement(type, want, i);
      excess = a == e ? 0 : std::numeric_limits<double>::infinity();
      if (excess > worstExcess && excess > 0)
        values = "got " + formatInteger(type, a) + ", expected " + formatInteger(type, e);
    }
    if (excess == 0)
      continue;
    ++mismatches;
    if (excess > worstExcess) {
      worstExcess = excess;
      worst = i;
      worstValues = values;
    }
  }
  if (mismatches == 0)
    return std::nullopt;
  return what + ": " + std::to_string(mismatches) + " of " + std::to_string(count) +
         " elements differ; worst at " +
         formatIndex(kiln_tensor_dims(expected), kiln_tensor_rank(expected), worst) + ": " +
         worstValues;
}

} // namespace kiln::conformance
