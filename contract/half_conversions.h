//===- half_conversions.h - f32 to and from f16 and bf16 --------*- C++ -*-===//
//
// Bit-exact IEEE conversions between f32 and the 16-bit floats (round to nearest, ties to even;
// overflow to infinity; NaN stays NaN, quiet). Header-only and free of the runtime's types, so
// that the simulated CUDA device's library references (runtime/src/cuda/sim/library_reference.cpp)
// and the compiler's conversion of weights to half precision (compiler/precision/
// AssignPrecision.cpp) round the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONTRACT_HALF_CONVERSIONS_H_
#define KILN_CONTRACT_HALF_CONVERSIONS_H_

#include <cstdint>
#include <cstring>

namespace kiln::contract {

inline uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

inline float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) return bitsFloat(sign | 0x7f800000u | (mantissa << 13));  // Inf, NaN
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in f32.
    float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return bitsFloat(sign | floatBits(magnitude));
  }
  return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline uint16_t floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  bits &= 0x7fffffffu;
  if (bits > 0x7f800000u)  // NaN: quiet, with the payload's top bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((bits >> 13) & 0x3ffu));
  // From halfway between 65504 and 65536 up (the tie rounds to the even 65536): Inf.
  if (bits >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (bits < 0x38800000u) {
    // Below the smallest normal: a count of 2^-24 units, rounded to nearest even (1024 units
    // is the smallest normal's encoding). The scaling is exact.
    float units = bitsFloat(bits) * 16777216.0f;
    auto whole = static_cast<uint32_t>(units);
    float fraction = units - static_cast<float>(whole);
    if (fraction > 0.5f || (fraction == 0.5f && (whole & 1u))) ++whole;
    return static_cast<uint16_t>(sign | whole);
  }
  // Normal: rebias the exponent (127 - 15 = 112) and round the 13 dropped bits to nearest even;
  // a carry moves into the exponent as it should.
  bits += 0xc8000fffu + ((bits >> 13) & 1u);
  return static_cast<uint16_t>(sign | (bits >> 13));
}

inline float bf16ToFloat(uint16_t value) { return bitsFloat(static_cast<uint32_t>(value) << 16); }

inline uint16_t floatToBf16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace kiln::contract

#endif  // KILN_CONTRACT_HALF_CONVERSIONS_H_
