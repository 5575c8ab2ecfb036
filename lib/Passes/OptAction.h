//===- OptAction.h - Optimization actions on kernel ranges ------*- C++ -*-===//
// upcast:AXIS:AMOUNT and unroll:AXIS:AMOUNT, parsed once and applied by apply-opts (explicit) and optimize (chosen).
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <optional>
#include <string>
#include <vector>

namespace tgc {

struct OptAction {
  std::string kind;   // "upcast" | "unroll"
  int64_t axis = 0;   // a range id of the kernel
  int64_t amount = 0; // 0: the whole range
  std::string text;   // as written, for messages
};

/// "upcast:1:4,unroll:2:0" -> actions, or nullopt with `err` set.
std::optional<std::vector<OptAction>> parseOptActions(const std::string &text, std::string &err);

/// The kernel (a sink) with `o` applied: range `axis` of size n split into range(n/a) * a + range(a), the inner
/// range of kind "upcast" (loop ranges) or "unroll" (reduce ranges). nullptr when it does not apply.
const UOp *applyOptAction(const UOp *kernel, const OptAction &o);

} // namespace tgc
