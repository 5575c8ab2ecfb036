//===- ExpectedDiagnostics.cpp - MLIR-style expected-error checks -*- C++ -*-===//
// A line scanner for expected-* comments and a first-fit matcher of diagnostics to expectations.
//===----------------------------------------------------------------------===//

#include "Support/ExpectedDiagnostics.h"

#include <cstdlib>

namespace tgc {

static bool parseSeverity(std::string_view &rest, Severity &sev) {
  for (Severity s : {Severity::Error, Severity::Warning, Severity::Note}) {
    std::string key = "expected-" + std::string(severityName(s));
    if (rest.substr(0, key.size()) == key) {
      sev = s;
      rest.remove_prefix(key.size());
      return true;
    }
  }
  return false;
}

static void skipSpaces(std::string_view &s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
}

/// Reads an optional `@+N`, `@-N`, `@above`, `@below` or `@unknown`; returns false when malformed.
static bool parseOffset(std::string_view &rest, int thisLine, int &target) {
  target = thisLine;
  if (rest.empty() || rest.front() != '@')
    return true;
  rest.remove_prefix(1);
  for (auto [word, delta] : {std::pair<std::string_view, int>{"above", -1}, {"below", 1}, {"unknown", 0}}) {
    if (rest.substr(0, word.size()) == word) {
      rest.remove_prefix(word.size());
      target = word == "unknown" ? 0 : thisLine + delta;
      return true;
    }
  }
  if (rest.empty() || (rest.front() != '+' && rest.front() != '-'))
    return false;
  int sign = rest.front() == '-' ? -1 : 1;
  rest.remove_prefix(1);
  int n = 0;
  bool any = false;
  while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9' && n < 100000) {
    n = n * 10 + (rest.front() - '0');
    rest.remove_prefix(1);
    any = true;
  }
  target = thisLine + sign * n;
  return any;
}

std::vector<ExpectedDiagnostic> parseExpectedDiagnostics(std::string_view text, const std::string &file,
                                                         int firstLine, DiagEngine &diags) {
  std::vector<ExpectedDiagnostic> out;
  int line = firstLine;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view l = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    size_t at = l.find("// expected-");
    if (at != std::string_view::npos) {
      std::string_view rest = l.substr(at + 3);
      Severity sev;
      int target = line;
      bool ok = parseSeverity(rest, sev);
      skipSpaces(rest);
      ok = ok && parseOffset(rest, line, target);
      skipSpaces(rest);
      size_t close = rest.find("}}");
      ok = ok && rest.substr(0, 2) == "{{" && close != std::string_view::npos;
      if (ok)
        out.push_back({sev, target, std::string(rest.substr(2, close - 2)), line});
      else
        diags.error(Loc{file, line, int(at) + 1}, "malformed expected-diagnostic comment");
    }
    if (end == std::string_view::npos)
      break;
    pos = end + 1;
    ++line;
  }
  return out;
}

bool checkExpectedDiagnostics(std::vector<ExpectedDiagnostic> &expected, const std::vector<Diagnostic> &produced,
                              const std::string &file, DiagEngine &out) {
  bool ok = true;
  for (const Diagnostic &d : produced) {
    bool found = false;
    for (ExpectedDiagnostic &e : expected) {
      if (e.matched || e.severity != d.severity || e.line != d.loc.line)
        continue;
      if (d.message.find(e.substring) == std::string::npos)
        continue;
      e.matched = true;
      found = true;
      break;
    }
    if (!found) {
      ok = false;
      out.error(d.loc, "unexpected " + std::string(severityName(d.severity)) + ": " + d.message);
    }
  }
  for (const ExpectedDiagnostic &e : expected) {
    if (e.matched)
      continue;
    ok = false;
    out.error(Loc{file, e.commentLine, 1}, std::string(severityName(e.severity)) + " \"" + e.substring +
                                               "\" was expected but not produced");
  }
  return ok;
}

} // namespace tgc
