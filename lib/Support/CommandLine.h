//===- CommandLine.h - LLVM-style single-dash long options ------*- C++ -*-===//
// Lets every tool accept `-passes=x` (LLVM/MLIR style) as well as `--passes=x` (CLI11 style).
//===----------------------------------------------------------------------===//

#pragma once

#include <string>
#include <vector>

namespace tgc {

/// The one-line message for a command-line error of a tool with subcommands (`args` as given to the parser): an
/// unknown command or option is named as such; other messages are CLI11's, lowercased.
std::string describeParseError(const std::vector<std::string> &subcommands, const std::vector<std::string> &args,
                               const std::string &what);

/// argv with every `-word...` (a single dash and two or more letters) rewritten to `--word...`.
std::vector<std::string> normalizeArgs(int argc, const char *const *argv);

} // namespace tgc
