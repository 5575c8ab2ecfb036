//===- TuningFuzzer.cpp - libFuzzer target for tuning cache files -*- C++ -*-===//
// Any bytes must parse or fail with a message; what parses must print and parse back to the same text.
//===----------------------------------------------------------------------===//

#include "Search/TuningCache.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tgc::CompileTarget t;
  t.cpu = "fuzzcpu";
  tgc::TuningCache cache(t);
  std::string error;
  if (!cache.parse(std::string(reinterpret_cast<const char *>(data), size), "fuzz", error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  std::string text = cache.text();
  tgc::TuningCache again(t);
  if (!again.parse(text, "again", error) || again.text() != text)
    std::abort();
  return 0;
}
