//===- Coalesce.h - Lane accesses to adjacent addresses as vector accesses -*- C++ -*-===//
// The rewrites of the coalesce pass, also used by expand on the accesses it splits into lanes.
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"
#include "Passes/TargetDesc.h"

#include <vector>

namespace tgc {

/// A run of consecutive offsets [start, start + n) served by one access.
struct Run {
  int64_t start;
  int64_t n;
};

/// Sorted distinct offsets cut, from the first, into runs of consecutive offsets of at most the target's widest
/// access: each the largest power of two that fits (a run of 6 is 4 + 2, a run of 3 is 2 + 1), or the whole run
/// where the target reads and writes elements of `bits` bits through lane masks (TargetDesc::masksLanes).
std::vector<Run> cutRuns(const std::vector<int64_t> &sorted, const TargetDesc &t, int bits);

/// vectorize(load(b[i]), load(b[i+1]), ...) -> the lanes of vector loads of at most maxLanes (lanes share a load
/// when they have the same buffer, base and valid); nullptr when no two lanes share one.
const UOp *coalesceLoadLanes(const UOp *vectorize, const TargetDesc &t);

/// noop(store(b[i], x), store(b[i+1], y), ...) -> vector stores of vectorize(x, y, ...); nullptr when no two
/// lanes share a store or two stores write one address.
const UOp *coalesceStoreLanes(const UOp *noop, const TargetDesc &t);

} // namespace tgc
