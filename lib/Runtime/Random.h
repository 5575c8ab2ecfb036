//===- Random.h - Deterministic input data ----------------------*- C++ -*-===//
// The one generator behind `--seed N` in tgc run, the interpreter and compiled executables: same seed, same data.
//===----------------------------------------------------------------------===//

#pragma once

#include "Runtime/Array.h"

#include <cstdint>
#include <string>

namespace tgc::rt {

/// Fill `a` (type and shape set) from (seed, name): floats uniform in [-1, 1) rounded to the type, signed integers
/// uniform in [-8, 8), unsigned in [0, 16), bools fair. The stream depends on the name, not on argument order.
void fillRandom(Array &a, uint64_t seed, const std::string &name);
/// The same data, `n` elements of `type`, written to `dst`.
void fillRandom(void *dst, ElemType type, int64_t n, uint64_t seed, const std::string &name);

/// The size a generated input gives a variable dimension with bounds [lo, hi]: small (interpreting a batch of 256
/// is slow) but more than one row, so rows that mix up show: min(lo + 1, hi).
inline int64_t generatedDimension(int64_t lo, int64_t hi) { return lo + 1 < hi ? lo + 1 : hi; }

} // namespace tgc::rt
