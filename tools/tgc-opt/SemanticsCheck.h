//===- SemanticsCheck.h - --check-semantics for tgc-opt ---------*- C++ -*-===//
// Runs the reference interpreter before and after every pass and compares the outputs.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Module.h"
#include "Interp/Interpreter.h"
#include "Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tgc {

class SemanticsCheck {
public:
  SemanticsCheck(uint64_t seed, DiagEngine &diags) : seed_(seed), diags_(diags) {}

  /// Record the reference outputs of the input module. False (and nothing to check) when it cannot run, e.g. a
  /// kernel fragment whose root is not a sink; an interpreter error is reported and also returns false.
  bool start(const Module &m);
  /// Run `m` on the same inputs and compare with the reference; reports and returns false on a difference.
  bool check(const Module &m, std::string_view pass);
  bool active() const { return active_; }

private:
  uint64_t seed_;
  DiagEngine &diags_;
  bool active_ = false;
  interp::ArrayMap inputs_;
  interp::ArrayMap reference_;
  std::map<std::string, rt::ElemType> precision_; // output -> the least precise float dtype it was computed in
};

/// Whether two arrays agree within the tolerance of `precision` (a float type: the least precise float dtype the
/// values were computed in; by default their own dtype); otherwise a description of the first difference.
std::optional<std::string> compareArrays(const rt::Array &expected, const rt::Array &actual,
                                         std::optional<rt::ElemType> precision = std::nullopt);

} // namespace tgc
