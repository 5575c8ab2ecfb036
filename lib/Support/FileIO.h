//===- FileIO.h - Reading inputs and writing outputs safely -----*- C++ -*-===//
// Whole-file reads ("-" is stdin) and atomic writes (a temporary file renamed into place, "-" is stdout).
//===----------------------------------------------------------------------===//

#pragma once

#include <string>
#include <string_view>

namespace tgc {

/// Read a whole file; on failure returns false and sets `error` to a short reason.
bool readFile(const std::string &path, std::string &out, std::string &error);

/// Write `data` to `path` so that readers never see a partial file: write a temporary beside it, then rename.
bool writeFileAtomic(const std::string &path, std::string_view data, std::string &error);

} // namespace tgc
