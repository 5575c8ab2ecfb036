//===- Array.cpp - Host arrays: element types, shapes, bytes ----*- C++ -*-===//
// Sizes and names of element types.
//===----------------------------------------------------------------------===//

#include "Runtime/Array.h"

namespace tgc::rt {

namespace {
struct Info {
  std::string_view name;
  int size;
};
constexpr Info kInfo[] = {{"bool", 1}, {"i8", 1},  {"u8", 1},   {"i16", 2}, {"u16", 2}, {"i32", 4}, {"u32", 4},
                          {"i64", 8},  {"u64", 8}, {"f16", 2},  {"bf16", 2}, {"f32", 4}, {"f64", 8}};
} // namespace

int elemSize(ElemType t) { return kInfo[size_t(t)].size; }
std::string_view elemName(ElemType t) { return kInfo[size_t(t)].name; }

bool elemFromName(std::string_view name, ElemType &out) {
  for (size_t i = 0; i < std::size(kInfo); ++i) {
    if (kInfo[i].name == name) {
      out = ElemType(i);
      return true;
    }
  }
  return false;
}

int64_t checkedNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > (int64_t(1) << 50) / d))
      return -1;
    n *= d;
  }
  return n;
}

int64_t Array::numel() const { return checkedNumel(shape); }

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace tgc::rt
