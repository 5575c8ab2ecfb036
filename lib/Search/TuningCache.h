//===- TuningCache.h - BEAM search results kept in a JSON file --*- C++ -*-===//
// Per kernel and machine: the optimization actions BEAM search chose, so later compiles reuse them without searching.
//===----------------------------------------------------------------------===//
//
// The file (docs/tuning.md) is a JSON object {"format": "tgc-tuning-1", "entries": [...]}, each entry
//   {"key": kernelTuningKey, "kernel": name, "target": "cpu", "cpu": "sapphirerapids", "features": hash,
//    "opts": "upcast:0:4,upcast:1:16", "us": median microseconds, "heuristic_opts": ..., "heuristic_us": ...,
//    "candidates": how many were timed}.
// Entries of other targets or CPUs are kept untouched when the file is written back; entries are sorted, so the
// same results give the same bytes.

#pragma once

#include "Passes/Pass.h"
#include "Target/CompileTarget.h"

#include <map>
#include <string>
#include <vector>

namespace tgc {

struct TuningEntry {
  std::string key;
  std::string kernel;
  std::string opts; // "" = no actions
  double us = 0;
  std::string heuristicOpts;
  double heuristicUs = 0;
  int candidates = 0;
};

class TuningCache {
public:
  /// The cache of `t`'s machine: its target name, CPU and a hash of its feature string.
  explicit TuningCache(const CompileTarget &t);

  /// Read `path`; a missing file is an empty cache. False with a one-line `error` for a file that is not a tuning
  /// cache (bad JSON, wrong format, an entry without key or opts, actions that do not parse).
  bool load(const std::string &path, std::string &error);
  /// load's work on the file's text; `name` is the file's name for the message.
  bool parse(const std::string &text, const std::string &name, std::string &error);
  /// Write every entry (this machine's and the others read by load) atomically.
  bool save(const std::string &path, std::string &error) const;
  /// The file's text: deterministic, sorted by machine and key (save writes it).
  std::string text() const;

  const TuningEntry *find(const std::string &key) const;
  void put(const TuningEntry &e) { entries_[e.key] = e; }
  /// This machine's entries as optimize takes them (PassContext::tuned).
  TuningTable table() const;
  size_t size() const { return entries_.size(); }

private:
  std::string target_, cpu_, features_;
  std::map<std::string, TuningEntry> entries_; // this machine's, by key
  std::vector<std::string> others_;            // other machines' entries, as JSON text
};

} // namespace tgc
