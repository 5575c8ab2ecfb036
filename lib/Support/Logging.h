//===- Logging.h - Debug levels through spdlog ------------------*- C++ -*-===//
// One knob for every tool: --debug=N or TGC_DEBUG=N, 0 (quiet) to 4 (everything), logged to stderr.
//===----------------------------------------------------------------------===//

#pragma once

namespace tgc {

/// Set the log level from `level` (or from TGC_DEBUG when level < 0).
void setupLogging(int level);
/// The current level (0 when logging was never set up).
int debugLevel();

} // namespace tgc
