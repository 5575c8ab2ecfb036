//===- Coalesce.h - Lane accesses to adjacent addresses as vector accesses -*- C++ -*-===//
// The rewrites of the coalesce pass, also used by expand on the accesses it splits into lanes.
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/UOp.h"

namespace tgc {

/// vectorize(load(b[i]), load(b[i+1]), ...) -> the lanes of vector loads of at most maxLanes (lanes share a load
/// when they have the same buffer, base and valid); nullptr when no two lanes share one.
const UOp *coalesceLoadLanes(const UOp *vectorize, int64_t maxLanes);

/// noop(store(b[i], x), store(b[i+1], y), ...) -> vector stores of vectorize(x, y, ...); nullptr when no two
/// lanes share a store or two stores write one address.
const UOp *coalesceStoreLanes(const UOp *noop, int64_t maxLanes);

} // namespace tgc
