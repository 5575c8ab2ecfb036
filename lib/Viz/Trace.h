//===- Trace.h - What the viewer shows, recorded while compiling -*- C++ -*-===//
// Each pass's graph before and after, its time and rule hits; the kernels' actions and measured times.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Module.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tgc::viz {

/// How often one rewrite rule fired during a pass.
struct RuleHit {
  std::string matcher;
  std::string rule; // the rule's identity comment, or its source line
  uint64_t hits;
};

struct PassRecord {
  std::string name;
  double seconds;
  const UOp *before;
  const UOp *after;
  std::vector<RuleHit> rules; // the rules that fired, most hits first
};

/// Recorded by tgc and tgc-opt (--viz) through the pass manager's instrumentation. Graphs are immutable and
/// interned, so a record holds pointers; the Context must outlive the trace.
class Trace {
public:
  /// Start from the graph the first pipeline runs on.
  explicit Trace(const Module &input);

  /// After a pass: its name, wall time and the module it produced.
  void recordPass(const Module &m, std::string_view pass, double seconds);

  const UOp *input() const { return input_; }
  const std::vector<PassRecord> &passes() const { return passes_; }
  const std::string &source() const { return source_; }

  /// Facts known after the pipelines: optimize's remarks ("NAME: ACTIONS") and, with tgc run, each call's time.
  std::vector<std::string> remarks;
  std::vector<double> callSeconds; // per call of the final program, in order; empty when not run
  std::string cpu;                 // with callSeconds: the machine's measured peaks (Runtime/Peak.h)
  double peakGflops = 0;
  double peakGbps = 0;
  std::string target;

private:
  std::vector<std::vector<uint64_t>> hitCounts() const;

  const UOp *input_;
  std::string source_;
  std::vector<PassRecord> passes_;
  std::vector<std::vector<uint64_t>> lastHits_;
};

} // namespace tgc::viz
