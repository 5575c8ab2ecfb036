//===- TensorCore.cpp - Warp-level matrix multiply shapes -------*- C++ -*-===//
// The fragment layout of mma.sync.m16n8k16 with f16 or bf16 inputs and f32 accumulators, from the PTX ISA.
//===----------------------------------------------------------------------===//

#include "IR/TensorCore.h"

namespace tgc {

// m16n8k16, g = lane / 4 (groupID), t = lane % 4 (threadID_in_group):
//   A: a0..a7  row = g + 8 * ((j / 2) % 2)    col = 2t + j % 2 + 8 * (j / 4)
//   B: b0..b3  row = 2t + j % 2 + 8 * (j / 2)  col = g
//   C: c0..c3  row = g + 8 * (j / 2)          col = 2t + j % 2

std::pair<FragCoord, FragCoord> TensorCore::a(int j) const {
  return {{1, 0, 8 * ((j / 2) % 2)}, {0, 2, j % 2 + 8 * (j / 4)}};
}

std::pair<FragCoord, FragCoord> TensorCore::b(int j) const { return {{0, 2, j % 2 + 8 * (j / 2)}, {1, 0, 0}}; }

std::pair<FragCoord, FragCoord> TensorCore::c(int j) const { return {{1, 0, 8 * (j / 2)}, {0, 2, j % 2}}; }

bool TensorCore::takes(DType input) const { return input == dt::F16 || input == dt::BF16; }

const TensorCore *findTensorCore(std::string_view name) {
  static const TensorCore m16n8k16 = defaultTensorCore();
  return name == m16n8k16.name ? &m16n8k16 : nullptr;
}

const TensorCore &defaultTensorCore() {
  static const TensorCore tc{"m16n8k16", 16, 8, 16, 32, 8, 4, 4};
  return tc;
}

} // namespace tgc
