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

template <typename T> void put(Array &a, int64_t i, T v) { std::memcpy(&a.data[size_t(i) * sizeof(T)], &v, sizeof(T)); }

} // namespace

void fillRandom(Array &a, uint64_t seed, const std::string &name) {
  int64_t n = a.numel();
  a.data.assign(size_t(n) * size_t(elemSize(a.type)), 0);
  uint64_t stream = splitmix(seed ^ splitmix(fnv1a(name)));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = splitmix(stream + uint64_t(i));
    // 24 random bits: a float in [-1, 1) with a step of 2^-23, exact in f32 and f64
    float f = float(int32_t(r >> 40) - (1 << 23)) / float(1 << 23);
    int64_t s = int64_t(r >> 60) - 8; // [-8, 8)
    uint64_t u = r >> 60;              // [0, 16)
    switch (a.type) {
    case ElemType::Bool:
      put<uint8_t>(a, i, uint8_t(r >> 63));
      break;
    case ElemType::I8:
      put<int8_t>(a, i, int8_t(s));
      break;
    case ElemType::U8:
      put<uint8_t>(a, i, uint8_t(u));
      break;
    case ElemType::I16:
      put<int16_t>(a, i, int16_t(s));
      break;
    case ElemType::U16:
      put<uint16_t>(a, i, uint16_t(u));
      break;
    case ElemType::I32:
      put<int32_t>(a, i, int32_t(s));
      break;
    case ElemType::U32:
      put<uint32_t>(a, i, uint32_t(u));
      break;
    case ElemType::I64:
      put<int64_t>(a, i, s);
      break;
    case ElemType::U64:
      put<uint64_t>(a, i, u);
      break;
    case ElemType::F16:
      put<uint16_t>(a, i, floatToHalf(f));
      break;
    case ElemType::BF16:
      put<uint16_t>(a, i, floatToBF16(f));
      break;
    case ElemType::F32:
      put<float>(a, i, f);
      break;
    case ElemType::F64:
      put<double>(a, i, double(f));
      break;
    }
  }
}

} // namespace tgc::rt
