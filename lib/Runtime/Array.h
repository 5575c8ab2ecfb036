//===- Array.h - Host arrays: element types, shapes, bytes ------*- C++ -*-===//
// The runtime's own description of a tensor in memory, independent of the compiler's IR (it ships in executables).
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tgc::rt {

/// Element types a tensor can have at the program boundary (the IR's scalars minus void and index).
enum class ElemType : uint8_t { Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 };

int elemSize(ElemType t);
std::string_view elemName(ElemType t); // "f32", "i64", ... as in the .uop format
bool elemFromName(std::string_view name, ElemType &out);

struct Array {
  ElemType type = ElemType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data; // row-major, little-endian

  int64_t numel() const;
  size_t byteSize() const { return size_t(numel()) * size_t(elemSize(type)); }
};

std::string shapeString(const std::vector<int64_t> &shape);

/// numel of a shape, or -1 when a dimension is negative or the count overflows.
int64_t checkedNumel(const std::vector<int64_t> &shape);

} // namespace tgc::rt
