//===- Trace.cpp - Recording passes for the viewer --------------*- C++ -*-===//
// Rule hits of a pass are the difference of every pattern matcher's counters before and after it.
//===----------------------------------------------------------------------===//

#include "Viz/Trace.h"

#include "IR/Pattern.h"

#include <algorithm>

namespace tgc::viz {

Trace::Trace(const Module &input) : input_(input.root), source_(input.fileName), lastHits_(hitCounts()) {}

std::vector<std::vector<uint64_t>> Trace::hitCounts() const {
  std::vector<std::vector<uint64_t>> counts;
  for (const PatternMatcher *pm : PatternMatcher::all()) {
    counts.emplace_back();
    for (const RuleStats &s : pm->stats())
      counts.back().push_back(s.hits);
  }
  return counts;
}

void Trace::recordPass(const Module &m, std::string_view pass, double seconds) {
  PassRecord r{std::string(pass), seconds, passes_.empty() ? input_ : passes_.back().after, m.root, {}};
  std::vector<std::vector<uint64_t>> now = hitCounts();
  const auto &all = PatternMatcher::all();
  for (size_t i = 0; i < now.size() && i < all.size(); ++i) {
    for (size_t j = 0; j < now[i].size(); ++j) {
      uint64_t before = i < lastHits_.size() && j < lastHits_[i].size() ? lastHits_[i][j] : 0;
      uint64_t hits = now[i][j] >= before ? now[i][j] - before : now[i][j]; // counters may have been reset
      if (!hits)
        continue;
      const Rule &rule = all[i]->rules()[j];
      std::string id = rule.identity && *rule.identity
                           ? rule.identity
                           : std::string(rule.where.file_name()) + ":" + std::to_string(rule.where.line());
      r.rules.push_back({all[i]->name(), id, hits});
    }
  }
  std::stable_sort(r.rules.begin(), r.rules.end(), [](const RuleHit &a, const RuleHit &b) { return a.hits > b.hits; });
  lastHits_ = std::move(now);
  passes_.push_back(std::move(r));
}

} // namespace tgc::viz
