//===- Linearize.h - A kernel's graph to an ordered list --------*- C++ -*-===//
// The linearization used by the linearize pass, and by the interpreter to run lowered kernels.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

namespace tgc {

/// The `linear` of a kernel `sink`: its nodes in an order a renderer can emit, loops opened by `range` and closed
/// by `end`.
const UOp *linearizeKernel(const UOp *sink);

/// Loop nesting order of two ranges: cache blocks ("block") outside output loops ("loop", "upcast"), those outside
/// reduce loops ("reduce", "unroll"), then by axis id.
bool rangeNestsBefore(const UOp *a, const UOp *b);

} // namespace tgc
