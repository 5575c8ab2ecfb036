//===- Logging.h - Debug levels through spdlog ------------------*- C++ -*-===//
// One knob for every tool: --debug=N or TGC_DEBUG=N, 0 (quiet) to 4 (everything), logged to stderr.
//===----------------------------------------------------------------------===//

#pragma once

namespace tgc {

/// Set the log level from `level` (or from TGC_DEBUG when level < 0). Pass and rewrite logging (1 passes, 2 rewrites,
/// 3 every rule tried) starts `passLevelOffset` levels higher: tgc keeps 1-4 for its own reports.
void setupLogging(int level, int passLevelOffset = 0);
/// The current level (0 when logging was never set up).
int debugLevel();

} // namespace tgc
