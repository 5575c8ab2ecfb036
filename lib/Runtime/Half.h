//===- Half.h - IEEE half and bfloat16 conversions --------------*- C++ -*-===//
// Round-to-nearest-even conversions between float and the 16-bit float formats, for the runtime.
//===----------------------------------------------------------------------===//

#pragma once

#include <bit>
#include <cstdint>

namespace tgc::rt {

inline uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u)
    return uint16_t(sign | 0x7e00u);
  if (absx >= 0x47800000u)
    return uint16_t(sign | 0x7c00u);
  if (absx < 0x38800000u) {
    float scaled = std::bit_cast<float>(absx) * 16777216.0f;
    float r = (scaled + 8388608.0f) - 8388608.0f;
    return uint16_t(sign | uint32_t(r));
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (uint32_t(int32_t(absx >> 23) - 127 + 15) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
    h += 1;
  return uint16_t(sign | h);
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = float(mant) / 16777216.0f;
    return sign ? -v : v;
  }
  if (exp == 31)
    return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

inline uint16_t floatToBF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(x >> 16);
}

inline float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

} // namespace tgc::rt
