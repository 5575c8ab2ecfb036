//===- ProgramInfo.h - Kernels, and what calls read and write ---*- C++ -*-===//
// Which nodes are kernels, and the buffer accesses of kernel calls, shared by the passes.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <vector>

namespace tgc {

struct CallAccess {
  std::vector<const UOp *> reads;  // buffers the kernel loads from
  std::vector<const UOp *> writes; // buffers the kernel stores to
};

/// Whether `u` is the root of a kernel: a sink or linear whose items are neither calls (a program) nor outputs (a
/// tensor graph).
bool isKernelRoot(const UOp *u);

/// The buffers a call reads and writes (through its kernel's define_global slots).
CallAccess callAccess(const UOp *call);

} // namespace tgc
