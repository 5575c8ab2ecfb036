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

/// The suffix that marks a file or directory as this process's work in progress: "<stem>-<pid>".
std::string ownedName(const std::string &stem);

/// Remove the entries of `dir` named "<stem>-<pid>..." whose process no longer runs: what an interrupted tgc (Ctrl-C,
/// SIGTERM, a crash) left behind.
void removeAbandoned(const std::string &dir, const std::string &stem);

/// A new directory "<system temporary directory>/<stem>-<pid>-XXXXXX" (after removing abandoned ones of `stem`);
/// "" when it cannot be made.
std::string makeScratchDir(const std::string &stem);

} // namespace tgc
