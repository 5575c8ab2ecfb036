//===- Module.h - One parsed .uop program -----------------------*- C++ -*-===//
// A module is a root UOp plus the few facts about the program that are not nodes (its weights files).
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <string>
#include <vector>

namespace tgc {

struct Module {
  const UOp *root = nullptr;
  /// Safetensors files the program's `weight` nodes are read from, as written (relative to the .uop file).
  std::vector<std::string> weightFiles;
  /// The .uop file this came from ("-" for stdin), for resolving weightFiles and for diagnostics.
  std::string fileName;
  /// What passes decided, one line each (optimize: "r_4_16_8: upcast:0:4,upcast:1:16"); not part of the text.
  std::vector<std::string> remarks;
};

/// Canonical text of a module: directives, then one node per line in a deterministic order, the root last.
/// `ranges`: each integer or bool node with a known value range ends in a comment `// [lo, hi]`.
std::string printModule(const Module &m, bool ranges = false);
/// Canonical text of the graph under one node (no directives).
std::string printGraph(const UOp *root, bool ranges = false);

} // namespace tgc
