//===- CommandLine.cpp - LLVM-style single-dash long options ----*- C++ -*-===//
// A small argv rewrite done before CLI11 parses.
//===----------------------------------------------------------------------===//

#include "Support/CommandLine.h"

#include <cctype>

namespace tgc {

std::vector<std::string> normalizeArgs(int argc, const char *const *argv) {
  std::vector<std::string> out;
  bool afterDashDash = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--")
      afterDashDash = true;
    bool singleDashWord = !afterDashDash && i > 0 && a.size() > 2 && a[0] == '-' && a[1] != '-' &&
                          std::isalpha(static_cast<unsigned char>(a[1])) &&
                          std::isalpha(static_cast<unsigned char>(a[2]));
    out.push_back(singleDashWord ? "-" + a : a);
  }
  return out;
}

} // namespace tgc
