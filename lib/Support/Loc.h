//===- Loc.h - A position in a source file ----------------------*- C++ -*-===//
// File, line and column of something the user wrote, for diagnostics.
//===----------------------------------------------------------------------===//

#pragma once

#include <string>

namespace tgc {

struct Loc {
  std::string file;
  int line = 0;
  int col = 0;
  bool valid() const { return line > 0; }
};

} // namespace tgc
