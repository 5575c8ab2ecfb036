//===- Diagnostics.h - Located error, warning and note messages -*- C++ -*-===//
// All user-facing diagnostics go through a DiagEngine: `file:line:col: error: message`, the source line, a caret.
//===----------------------------------------------------------------------===//
//
// Message style (LLVM's): start lowercase, no final period, name the op in quotes ('add'). User errors (bad input)
// go here and end in exit status 1; bugs in tgc go to internalError() instead.

#pragma once

#include "Support/Loc.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tgc {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  Loc loc;
  std::string message;
};

/// The text of every source file read, so diagnostics can quote the offending line.
class SourceManager {
public:
  void add(const std::string &file, std::string text, int firstLine = 1);
  /// The text of line `line` of `file`, or empty when unknown.
  std::string_view lineText(const std::string &file, int line) const;

private:
  struct Source {
    std::string text;
    std::vector<size_t> lineStarts;
    int firstLine;
  };
  std::unordered_map<std::string, Source> files_;
};

class DiagEngine {
public:
  explicit DiagEngine(const SourceManager *sm = nullptr) : sm_(sm) {}

  void report(Severity s, const Loc &loc, std::string message);
  void error(const Loc &loc, std::string message) { report(Severity::Error, loc, std::move(message)); }
  void warning(const Loc &loc, std::string message) { report(Severity::Warning, loc, std::move(message)); }
  void note(const Loc &loc, std::string message) { report(Severity::Note, loc, std::move(message)); }

  int errorCount() const { return errors_; }
  /// Errors printed before the rest are suppressed (and their notes with them); 0 for no limit. Default 20, as
  /// clang's -ferror-limit.
  void setErrorLimit(int limit) { errorLimit_ = limit; }
  bool hasErrors() const { return errors_ > 0; }

  /// Keep diagnostics instead of printing them (for --verify-diagnostics).
  void setCapture(bool capture) { capture_ = capture; }
  const std::vector<Diagnostic> &captured() const { return captured_; }
  void clearCaptured() { captured_.clear(); }

  std::string format(const Diagnostic &d) const;

private:
  const SourceManager *sm_;
  bool capture_ = false;
  int errors_ = 0;
  int errorLimit_ = 20;
  bool suppressing_ = false; // over the limit: only counting
  std::vector<Diagnostic> captured_;
};

std::string_view severityName(Severity s);

} // namespace tgc
