//===- InPlaceCopies.h - Copies that memory placement makes free -*- C++ -*-===//
// Calls that copy a whole temporary into a part of another (the operands of a concat), and a placement of the two
// in one block of memory in which the source already is that part, so that the call can be dropped.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <map>
#include <vector>

namespace tgc {

struct InPlaceCopies {
  /// Per call of the program: a copy whose source is placed where it copies to (plan-memory drops it).
  std::vector<bool> dropped;
  /// Per temporary placed with others: the block's base buffer and the byte offset from the base's start.
  std::map<const UOp *, std::pair<const UOp *, int64_t>> placed;
  /// Per base buffer: the bytes its block spans.
  std::map<const UOp *, int64_t> blockBytes;
};

/// The copies of `linear` (a scheduled program) that placement can make free, and the placement. Calls marked in
/// `skip` (run-once calls, the border calls of padded buffers) and the buffers they write take no part; every
/// buffer of a block starts a multiple of `align` bytes after the block's start.
InPlaceCopies findInPlaceCopies(const UOp *linear, const std::vector<bool> &skip, int64_t align);

} // namespace tgc
