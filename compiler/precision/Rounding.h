//===- Rounding.h - f32 to f16 and bf16, round to nearest even -*- C++ -*-===//
//
// The conversions kiln-assign-precision applies to the weights: bit for bit what a cast on the
// device gives (IEEE round to nearest, ties to even; overflow to infinity; NaN stays NaN), fast
// enough for every weight of a large model.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PRECISION_ROUNDING_H
#define KILN_COMPILER_PRECISION_ROUNDING_H

#include <cstdint>
#include <cstring>

namespace kiln::precision {

/// The IEEE half nearest to `value` (ties to even), as its bits.
inline uint16_t roundToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t exponent = (bits >> 23) & 0xFFu;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFFu) // infinity, or NaN (kept quiet and NaN)
    return static_cast<uint16_t>(sign | 0x7C00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u));
  int biased = static_cast<int>(exponent) - 127 + 15;
  if (biased >= 31)
    return static_cast<uint16_t>(sign | 0x7C00u);
  if (biased <= 0) {
    if (biased < -10)
      return static_cast<uint16_t>(sign);
    // A subnormal half: the significand with its implicit bit, shifted to units of 2^-24.
    uint32_t significand = mantissa | 0x800000u;
    int shift = 14 - biased;
    uint32_t half = significand >> shift;
    uint32_t rest = significand & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(biased) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFFu;
  // A carry out of the mantissa increments the exponent, up to infinity: still correct.
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}

/// The bfloat16 nearest to `value` (ties to even), as its bits.
inline uint16_t roundToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x7FFFFFu))
    return static_cast<uint16_t>((bits >> 16) | 0x40u); // NaN stays NaN
  uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

} // namespace kiln::precision

#endif // KILN_COMPILER_PRECISION_ROUNDING_H
