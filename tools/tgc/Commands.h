//===- Commands.h - The subcommands of tgc ----------------------*- C++ -*-===//
// Each subcommand is an options struct and a function returning the exit status.
//===----------------------------------------------------------------------===//

#pragma once

#include "Model.h"

#include <string>
#include <vector>

namespace tgc {

struct RunOptions {
  std::string input;
  bool interp = false;
  DataOptions data;
  std::string outputDir;
  bool print = false;
};
int runCommand(const RunOptions &o);

struct InfoOptions {
  std::string input;
  bool json = false;
};
int infoCommand(const InfoOptions &o);

} // namespace tgc
