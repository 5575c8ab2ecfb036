//===- CommandLine.h - LLVM-style single-dash long options ------*- C++ -*-===//
// Lets every tool accept `-passes=x` (LLVM/MLIR style) as well as `--passes=x` (CLI11 style).
//===----------------------------------------------------------------------===//

#pragma once

#include <string>
#include <vector>

namespace tgc {

/// argv with every `-word...` (a single dash and two or more letters) rewritten to `--word...`.
std::vector<std::string> normalizeArgs(int argc, const char *const *argv);

} // namespace tgc
