//===- Array.h - Host arrays: element types, shapes, bytes ------*- C++ -*-===//
// The runtime's own description of a tensor in memory, independent of the compiler's IR (it ships in executables).
//===----------------------------------------------------------------------===//

#pragma once

#include "Runtime/tgc_runtime.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tgc::rt {

/// Element types a tensor can have at the program boundary (the IR's scalars minus void and index).
/// The ABI's tgc_dtype as a C++ enum: the IR maps its scalars to these through DTypes.def's runtime column.
enum class ElemType : uint8_t {
  Bool = TGC_BOOL,
  I8 = TGC_I8,
  U8 = TGC_U8,
  I16 = TGC_I16,
  U16 = TGC_U16,
  I32 = TGC_I32,
  U32 = TGC_U32,
  I64 = TGC_I64,
  U64 = TGC_U64,
  F16 = TGC_F16,
  BF16 = TGC_BF16,
  F32 = TGC_F32,
  F64 = TGC_F64,
};

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
