//===- Parser.h - Reading .uop text into UOps -------------------*- C++ -*-===//
// The grammar is in docs/uop-format.md and above each parse function in Parser.cpp.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Module.h"
#include "Support/Diagnostics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// Parse a whole .uop text. Every problem is reported to `diags` (as many as can be found); the result is nullopt
/// when there was any error. `firstLine` numbers the first line (for chunks of a split file).
std::optional<Module> parseModule(Context &ctx, std::string_view text, const std::string &fileName, DiagEngine &diags,
                                  int firstLine = 1);

/// A piece of a file split at lines that are exactly `// -----`.
struct Chunk {
  std::string text;
  int firstLine;
};
std::vector<Chunk> splitInputFile(std::string_view text);

/// Parse a dtype spelling (f32, f32x4, ptr<f32, local>); nullopt if it is not one.
std::optional<DType> parseDTypeName(std::string_view text);

} // namespace tgc
