//===- OptAction.h - Optimization actions on kernel ranges ------*- C++ -*-===//
// upcast:AXIS:AMOUNT and unroll:AXIS:AMOUNT, parsed once and applied by apply-opts (explicit) and optimize (chosen).
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"
#include "Passes/TargetDesc.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

struct OptAction {
  std::string kind;   // "upcast" | "unroll" | "local" | "group" | "grouptop" | "tc"
  int64_t axis = 0;   // a range id of the kernel
  int64_t amount = 0; // 0: the whole range
  std::string text;   // as written, for messages
};

/// The kind of range an action creates ("upcast", "unroll", "local", "group"), nullptr for an unknown action.
const char *rangeKindOfAction(const std::string &action);
/// The kind of range an action splits: "loop" for upcast and local, "reduce" for unroll, group and grouptop.
const char *actionAppliesTo(const std::string &action);

/// "upcast:1:4,unroll:2:0" -> actions, or nullopt with `err` set.
std::optional<std::vector<OptAction>> parseOptActions(const std::string &text, std::string &err);

/// Why an action cannot be used on the target ("" when it can): tc needs a target with tensor cores.
std::string actionUnsupported(const OptAction &o, const TargetDesc &t);

/// What a kernel must be for an action that applied to none of them, for the error message.
std::string actionRequirement(const OptAction &o);

/// The kernel (a sink) with `o` applied: range `axis` of size n split into range(n/a) * a + range(a) (grouptop:
/// range(a) * (n/a) + range(n/a)), the new range of kind "upcast" or "local" (loop ranges), "unroll" or "group"
/// (reduce ranges). nullptr when it does not apply.
/// tc:AXIS:0 splits the kernel's matmul-like reduce over range AXIS into tensor core tiles (TensorCores.cpp).
const UOp *applyOptAction(const UOp *kernel, const OptAction &o);

/// The actions optimize's heuristics choose for a kernel (Optimize.cpp), with their text set.
std::vector<OptAction> heuristicActions(const UOp *kernel, const TargetDesc &t);

/// 16 hex digits of the FNV-1a hash of `text` (stable across runs and machines).
std::string hashHex(std::string_view text);

/// A kernel's key in a tuning cache: 16 hex digits of a hash of its canonical text before optimization, so the
/// same kernel in any model, and in the same model compiled again, has the same key.
std::string kernelTuningKey(const UOp *kernel);

/// The kernel with its reduce over range `axis` done by `wmma` ops, one warp per output tile; nullptr when the
/// kernel is not a reduce of products of two f16 or bf16 operands that the tensor core's sizes divide.
const UOp *applyTensorCore(const UOp *kernel, int64_t axis);
/// The ids of the m and n ranges applyTensorCore would tile, nullopt when it does not apply.
std::optional<std::pair<int64_t, int64_t>> tensorCoreAxes(const UOp *kernel, int64_t axis);

} // namespace tgc
