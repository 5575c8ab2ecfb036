//===- Float16.h - IEEE half and bfloat16 conversions -----------*- C++ -*-===//
// Round-to-nearest-even conversions between float and the two 16-bit float formats, independent of the host.
//===----------------------------------------------------------------------===//

#pragma once

#include <bit>
#include <cstdint>

namespace tgc {

/// float -> IEEE binary16 bits, round to nearest even, NaN stays NaN, overflow goes to inf.
inline uint16_t floatToHalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) // NaN
    return uint16_t(sign | 0x7e00u);
  if (absx >= 0x47800000u) // >= 65536: overflow (values in [65520, 65536) round to inf below too)
    return uint16_t(sign | 0x7c00u);
  if (absx < 0x38800000u) { // below the smallest normal half: subnormal or zero
    // value = absx as float; half subnormal unit is 2^-24.
    float a = std::bit_cast<float>(absx);
    // scale so that one half-subnormal ulp is 1.0, then round to nearest even via the float adder.
    float scaled = a * 16777216.0f; // 2^24; exact (power of two)
    // round to nearest even integer using the magic-number trick (valid for 0 <= scaled < 2^23)
    float r = (scaled + 8388608.0f) - 8388608.0f;
    return uint16_t(sign | uint32_t(r));
  }
  uint32_t mant = absx & 0x7fffffu;
  int32_t exp = int32_t(absx >> 23) - 127 + 15;
  uint32_t halfMant = mant >> 13;
  uint32_t rest = mant & 0x1fffu;
  uint32_t h = (uint32_t(exp) << 10) | halfMant;
  if (rest > 0x1000u || (rest == 0x1000u && (halfMant & 1u)))
    h += 1; // may carry into the exponent, and up to inf: both are correct
  return uint16_t(sign | h);
}

inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = float(mant) / 16777216.0f; // mant * 2^-24
    return sign ? -v : v;
  }
  if (exp == 31)
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

/// float -> bfloat16 bits, round to nearest even.
inline uint16_t floatToBF16Bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((x >> 16) | 0x40u); // quiet NaN
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return uint16_t(x >> 16);
}

inline float bf16BitsToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

} // namespace tgc
