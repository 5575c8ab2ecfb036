//===- ValueRange.h - Integer value ranges of UOps --------------*- C++ -*-===//
// Interval arithmetic giving each integer, index or bool node a range [lo, hi] that contains every value it takes.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>

namespace tgc {

class UOp;

struct ValueRange {
  bool known = false; // false: not an integer/bool node, or a u64 node (whose values do not fit int64)
  int64_t lo = 0;
  int64_t hi = 0;
};

/// The range of `u` from its operands' ranges (which are already computed). Never recurses.
ValueRange computeRange(const UOp *u);

} // namespace tgc
