//===- Random.cpp - Deterministic input data --------------------*- C++ -*-===//
// splitmix64 over (seed, FNV-1a of the name, element index); conversions are exact and host-independent.
//===----------------------------------------------------------------------===//

#include "Runtime/Random.h"

#include "Runtime/Half.h"

#include <cstring>

namespace tgc::rt {
namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// dst[i] = convert(the random bits of element i), for i in [0, n): one loop per type, no branch inside it.
template <typename T, typename Convert> void fill(void *dst, int64_t n, uint64_t stream, Convert convert) {
  auto *out = static_cast<unsigned char *>(dst);
  for (int64_t i = 0; i < n; ++i) {
    T v = convert(splitmix(stream + uint64_t(i)));
    std::memcpy(out + size_t(i) * sizeof(T), &v, sizeof(T));
  }
}

// 24 random bits: a float in [-1, 1) with a step of 2^-23, exact in f32 and f64
float unitFloat(uint64_t r) { return float(int32_t(r >> 40) - (1 << 23)) / float(1 << 23); }
int64_t smallSigned(uint64_t r) { return int64_t(r >> 60) - 8; } // [-8, 8)
uint64_t smallUnsigned(uint64_t r) { return r >> 60; }           // [0, 16)

} // namespace

void fillRandom(void *dst, ElemType type, int64_t n, uint64_t seed, const std::string &name) {
  uint64_t s = splitmix(seed ^ splitmix(fnv1a(name)));
  switch (type) {
  case ElemType::Bool: return fill<uint8_t>(dst, n, s, [](uint64_t r) { return uint8_t(r >> 63); });
  case ElemType::I8: return fill<int8_t>(dst, n, s, [](uint64_t r) { return int8_t(smallSigned(r)); });
  case ElemType::U8: return fill<uint8_t>(dst, n, s, [](uint64_t r) { return uint8_t(smallUnsigned(r)); });
  case ElemType::I16: return fill<int16_t>(dst, n, s, [](uint64_t r) { return int16_t(smallSigned(r)); });
  case ElemType::U16: return fill<uint16_t>(dst, n, s, [](uint64_t r) { return uint16_t(smallUnsigned(r)); });
  case ElemType::I32: return fill<int32_t>(dst, n, s, [](uint64_t r) { return int32_t(smallSigned(r)); });
  case ElemType::U32: return fill<uint32_t>(dst, n, s, [](uint64_t r) { return uint32_t(smallUnsigned(r)); });
  case ElemType::I64: return fill<int64_t>(dst, n, s, smallSigned);
  case ElemType::U64: return fill<uint64_t>(dst, n, s, smallUnsigned);
  case ElemType::F16: return fill<uint16_t>(dst, n, s, [](uint64_t r) { return floatToHalf(unitFloat(r)); });
  case ElemType::BF16: return fill<uint16_t>(dst, n, s, [](uint64_t r) { return floatToBF16(unitFloat(r)); });
  case ElemType::F32: return fill<float>(dst, n, s, unitFloat);
  case ElemType::F64: return fill<double>(dst, n, s, [](uint64_t r) { return double(unitFloat(r)); });
  }
}

void fillRandom(Array &a, uint64_t seed, const std::string &name) {
  a.data.resize(a.byteSize());
  fillRandom(a.data.data(), a.type, a.numel(), seed, name);
}

} // namespace tgc::rt
