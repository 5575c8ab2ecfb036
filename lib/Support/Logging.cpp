//===- Logging.cpp - Debug levels through spdlog ----------------*- C++ -*-===//
// Maps tgc debug levels onto spdlog levels: 1 info, 2 debug, 3+ trace.
//===----------------------------------------------------------------------===//

#include "Support/Logging.h"

#include <cstdlib>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace tgc {

static int gLevel = 0;

void setupLogging(int level, int passLevelOffset) {
  if (level < 0) {
    const char *env = std::getenv("TGC_DEBUG");
    level = env ? std::atoi(env) : 0;
  }
  gLevel = level < 0 ? 0 : level;
  auto logger = spdlog::stderr_logger_st("tgc");
  logger->set_pattern("tgc-debug: %v");
  spdlog::set_default_logger(logger);
  int passLevel = gLevel - passLevelOffset;
  spdlog::level::level_enum l = passLevel <= 0   ? spdlog::level::warn
                                : passLevel == 1 ? spdlog::level::info
                                : passLevel == 2 ? spdlog::level::debug
                                                 : spdlog::level::trace;
  spdlog::set_level(l);
}

int debugLevel() { return gLevel; }

} // namespace tgc
