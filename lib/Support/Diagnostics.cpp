//===- Diagnostics.cpp - Located error, warning and note messages -*- C++ -*-===//
// Formatting with the quoted source line and a caret; capture for --verify-diagnostics.
//===----------------------------------------------------------------------===//

#include "Support/Diagnostics.h"

#include <cstdio>

namespace tgc {

std::string_view severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

void SourceManager::add(const std::string &file, std::string text, int firstLine) {
  Source src{std::move(text), {0}, firstLine};
  for (size_t i = 0; i < src.text.size(); ++i)
    if (src.text[i] == '\n')
      src.lineStarts.push_back(i + 1);
  files_[file] = std::move(src);
}

std::string_view SourceManager::lineText(const std::string &file, int line) const {
  auto it = files_.find(file);
  if (it == files_.end())
    return {};
  const Source &s = it->second;
  int idx = line - s.firstLine;
  if (idx < 0 || size_t(idx) >= s.lineStarts.size())
    return {};
  size_t begin = s.lineStarts[size_t(idx)];
  size_t end = s.text.find('\n', begin);
  if (end == std::string::npos)
    end = s.text.size();
  return std::string_view(s.text).substr(begin, end - begin);
}

std::string DiagEngine::format(const Diagnostic &d) const {
  std::string out;
  if (!d.loc.file.empty())
    out += d.loc.file + ":";
  if (d.loc.valid())
    out += std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ":";
  out += out.empty() ? "tgc: " : " ";
  out += std::string(severityName(d.severity)) + ": " + d.message + "\n";
  if (!sm_ || !d.loc.valid())
    return out;
  std::string_view line = sm_->lineText(d.loc.file, d.loc.line);
  if (line.empty() || line.find('\0') != std::string_view::npos) // binary: nothing worth quoting
    return out;
  if (line.size() > 240 && d.loc.col <= 240)
    line = line.substr(0, 240);
  std::string caret;
  for (int i = 1; i < d.loc.col && size_t(i - 1) < line.size(); ++i)
    caret += line[size_t(i - 1)] == '\t' ? '\t' : ' ';
  // Quote printable text only, so a corrupted file cannot put control bytes on the terminal.
  std::string quoted;
  for (char c : line)
    quoted += (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f ? '?' : c;
  return out + quoted + "\n" + caret + "^\n";
}

void DiagEngine::report(Severity s, const Loc &loc, std::string message) {
  if (s == Severity::Error)
    ++errors_;
  Diagnostic d{s, loc, std::move(message)};
  if (!capture_ && s != Severity::Note)
    suppressing_ = errorLimit_ > 0 && errors_ > errorLimit_;
  if (suppressing_) {
    if (s == Severity::Error && errors_ == errorLimit_ + 1)
      std::fprintf(stderr, "tgc: error: too many errors (%d); the rest are not shown\n", errorLimit_);
    return;
  }
  if (capture_) {
    captured_.push_back(std::move(d));
    return;
  }
  std::string text = format(d);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

} // namespace tgc
