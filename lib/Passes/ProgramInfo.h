//===- ProgramInfo.h - Kernels, and what calls read and write ---*- C++ -*-===//
// Which nodes are kernels, range ids/kinds/sizes, and the buffer accesses of kernel calls, shared by the passes.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <string>
#include <vector>

namespace tgc {

struct CallAccess {
  std::vector<const UOp *> reads;  // buffers the kernel loads from
  std::vector<const UOp *> writes; // buffers the kernel stores to
};

/// Whether `u` is the root of a kernel: a sink or linear whose items are neither calls (a program) nor outputs (a
/// tensor graph).
bool isKernelRoot(const UOp *u);

/// A range's axis id and kind ("loop", "reduce", "upcast", "unroll"): its arg [id, kind].
int64_t rangeId(const UOp *range);
const std::string &rangeKind(const UOp *range);
/// The trip count of a range whose bound is a constant.
inline int64_t rangeSize(const UOp *range) { return range->src(0)->constInt(); }
/// Ranges ordered by axis id.
inline bool rangeIdLess(const UOp *a, const UOp *b) { return rangeId(a) < rangeId(b); }

/// The buffers a call reads and writes (through its kernel's define_global slots).
CallAccess callAccess(const UOp *call);

} // namespace tgc
