//===- ProgramInfo.h - What calls read and write ----------------*- C++ -*-===//
// Buffer accesses of kernel calls, shared by scheduling and memory planning.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <vector>

namespace tgc {

struct CallAccess {
  std::vector<const UOp *> reads;  // buffers the kernel loads from
  std::vector<const UOp *> writes; // buffers the kernel stores to
};

/// The buffers a call reads and writes (through its kernel's define_global slots).
CallAccess callAccess(const UOp *call);

} // namespace tgc
