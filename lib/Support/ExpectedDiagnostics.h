//===- ExpectedDiagnostics.h - MLIR-style expected-error checks -*- C++ -*-===//
// Reads `// expected-error {{text}}` comments from a source and matches them against produced diagnostics.
//===----------------------------------------------------------------------===//
//
// Syntax (as in mlir-opt --verify-diagnostics):
//   // expected-error {{substring}}          on the same line
//   // expected-error @+1 {{substring}}      on the next line (@-N: N lines above; @below/@above: next/previous)
//   // expected-error @unknown {{substring}} on a diagnostic with no line (e.g. about the whole file)
// `expected-warning` and `expected-note` work the same way.

#pragma once

#include "Support/Diagnostics.h"

#include <string>
#include <string_view>
#include <vector>

namespace tgc {

struct ExpectedDiagnostic {
  Severity severity;
  int line; // 0: @unknown
  std::string substring;
  int commentLine;
  bool matched = false;
};

/// Parse the expected-diagnostic comments of `text` (whose first line is `firstLine`). Malformed comments are
/// reported to `diags` as errors at their own line.
std::vector<ExpectedDiagnostic> parseExpectedDiagnostics(std::string_view text, const std::string &file,
                                                         int firstLine, DiagEngine &diags);

/// Match `produced` against `expected`; report unexpected and missing ones to `out`. True when all matched.
bool checkExpectedDiagnostics(std::vector<ExpectedDiagnostic> &expected, const std::vector<Diagnostic> &produced,
                              const std::string &file, DiagEngine &out);

} // namespace tgc
