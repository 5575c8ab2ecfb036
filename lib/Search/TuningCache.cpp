//===- TuningCache.cpp - BEAM search results kept in a JSON file -*- C++ -*-===//
// Reading and writing tuning caches with nlohmann/json; entries of other machines pass through unchanged.
//===----------------------------------------------------------------------===//

#include "Search/TuningCache.h"

#include "Passes/OptAction.h"
#include "Support/FileIO.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace tgc {

namespace {

constexpr const char *kFormat = "tgc-tuning-1";

/// Microseconds rounded to 0.1, so the file does not carry timer noise in its last digits.
double roundUs(double us) { return std::round(us * 10) / 10; }

} // namespace

TuningCache::TuningCache(const CompileTarget &t) : target_(t.name()), cpu_(t.cpu), features_(hashHex(t.features)) {}

bool TuningCache::load(const std::string &path, std::string &error) {
  if (!std::filesystem::exists(path))
    return true;
  std::string text;
  if (!readFile(path, text, error)) {
    error = "cannot read tuning cache '" + path + "': " + error;
    return false;
  }
  return parse(text, path, error);
}

bool TuningCache::parse(const std::string &text, const std::string &path, std::string &error) {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string &why) {
    error = "'" + path + "' is not a tgc tuning cache: " + why;
    return false;
  };
  if (doc.is_discarded())
    return bad("invalid JSON");
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kFormat || !doc.contains("entries") ||
      !doc["entries"].is_array())
    return bad(std::string("expected {\"format\": \"") + kFormat + "\", \"entries\": [...]}");
  for (const nlohmann::ordered_json &j : doc["entries"]) {
    if (!j.is_object())
      return bad("an entry is not an object");
    for (const char *k : {"key", "opts", "target", "cpu", "features"})
      if (!j.contains(k) || !j[k].is_string())
        return bad("an entry needs string fields key, opts, target, cpu and features");
    for (const char *k : {"kernel", "heuristic_opts"})
      if (j.contains(k) && !j[k].is_string())
        return bad(std::string("an entry's ") + k + " is not a string");
    for (const char *k : {"us", "heuristic_us", "candidates"})
      if (j.contains(k) && !j[k].is_number())
        return bad(std::string("an entry's ") + k + " is not a number");
    std::string opts = j["opts"];
    std::string err;
    if (!opts.empty() && !parseOptActions(opts, err))
      return bad("entry " + std::string(j["key"]) + ": " + err);
    if (j["target"] != target_ || j["cpu"] != cpu_ || j["features"] != features_) {
      others_.push_back(j.dump());
      continue;
    }
    TuningEntry e;
    e.key = j["key"];
    e.kernel = j.value("kernel", "");
    e.opts = opts;
    e.us = j.value("us", 0.0);
    e.heuristicOpts = j.value("heuristic_opts", "");
    e.heuristicUs = j.value("heuristic_us", 0.0);
    e.candidates = int(std::clamp(j.value("candidates", 0.0), 0.0, 1e9));
    entries_[e.key] = e;
  }
  return true;
}

bool TuningCache::save(const std::string &path, std::string &error) const {
  return writeFileAtomic(path, text(), error);
}

std::string TuningCache::text() const {
  std::vector<nlohmann::ordered_json> all;
  for (const std::string &o : others_)
    all.push_back(nlohmann::ordered_json::parse(o));
  for (const auto &[key, e] : entries_) {
    nlohmann::ordered_json j;
    j["key"] = e.key;
    j["kernel"] = e.kernel;
    j["target"] = target_;
    j["cpu"] = cpu_;
    j["features"] = features_;
    j["opts"] = e.opts;
    j["us"] = roundUs(e.us);
    j["heuristic_opts"] = e.heuristicOpts;
    j["heuristic_us"] = roundUs(e.heuristicUs);
    j["candidates"] = e.candidates;
    all.push_back(j);
  }
  auto order = [](const nlohmann::ordered_json &j) {
    return std::string(j["target"]) + "/" + std::string(j["cpu"]) + "/" + std::string(j["features"]) + "/" +
           std::string(j["key"]);
  };
  std::sort(all.begin(), all.end(), [&](const auto &a, const auto &b) { return order(a) < order(b); });
  nlohmann::ordered_json doc;
  doc["format"] = kFormat;
  doc["entries"] = all;
  return doc.dump(2) + "\n";
}

const TuningEntry *TuningCache::find(const std::string &key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

TuningTable TuningCache::table() const {
  TuningTable t;
  for (const auto &[key, e] : entries_)
    t[key] = e.opts;
  return t;
}

} // namespace tgc
