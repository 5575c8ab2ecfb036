//===- PassManager.h - Running a pipeline of passes -------------*- C++ -*-===//
// Parses `-passes=a,b,c`, runs the passes in order with verification, IR printing and timing around each.
//===----------------------------------------------------------------------===//

#pragma once

#include "Passes/Pass.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

using Pipeline = std::vector<const PassInfo *>;

/// Parse a comma-separated list of pass names (spaces allowed). Sets `error` and returns nullopt on an unknown name.
std::optional<Pipeline> parsePipeline(std::string_view text, std::string &error);
/// Canonical spelling: names joined by ','. parsePipeline(printPipeline(p)) == p.
std::string printPipeline(const Pipeline &p);

struct Instrumentation {
  /// Verify the input and the IR after every pass (tgc-opt's default; `tgc --verify-each`).
  bool verifyEach = true;
  /// Without verifyEach: verify the IR the pipeline ends with, once (tgc compile and run: the verifier after every
  /// pass was an eighth of their pass time).
  bool verifyOutput = true;
  bool printAfterAll = false;
  bool printAfterChange = false;
  std::vector<std::string> printBefore;
  std::vector<std::string> printAfter;
  bool timePasses = false;
  /// Where IR dumps go (default: stderr).
  std::function<void(const std::string &)> dump;
  /// Called after each pass that succeeded and verified; returning false stops the pipeline as failed.
  std::function<bool(const Module &, std::string_view pass)> afterPass;
  /// Called after each pass that succeeded and verified, with its wall time (--viz records the pipeline).
  std::function<void(const Module &, std::string_view pass, double seconds)> observe;
  /// Optimization actions handed to passes (PassContext::opts).
  std::string opts;
  /// The target passes lower for (PassContext::target).
  TargetDesc target = PassContext::defaultTarget();
  /// Tuned actions per kernel for optimize (PassContext::tuned); the table must outlive the pass manager's run.
  const TuningTable *tuned = nullptr;
};

struct PassTiming {
  std::string name;
  double seconds;
};

/// Run `passes` (pass and pipeline names tgc itself spells: an unknown one is an internal error) on `m` with `inst`;
/// each pass's wall time is appended to `timings` when given. False after an error was reported to `diags`.
bool runPipeline(std::string_view passes, Module &m, DiagEngine &diags, const Instrumentation &inst,
                 std::vector<PassTiming> *timings = nullptr);

/// The --time-passes report (mlir-opt's layout) of the given timings.
std::string formatTimingReport(const std::vector<PassTiming> &timings);

class PassManager {
public:
  PassManager(Pipeline passes, Instrumentation inst);

  /// Run every pass on `m`; the stage of the input is detected from its ops. Returns false after an error has been
  /// reported to `diags` (the module is then left as the last pass that succeeded made it).
  bool run(Module &m, DiagEngine &diags);

  const std::vector<PassTiming> &timings() const { return timings_; }
  const std::map<std::string, int64_t> &stats() const { return stats_; }

private:
  void dumpIR(const char *when, std::string_view pass, const Module &m);
  bool verifyStage(const Module &m, Stage stage, DiagEngine &diags, const std::string &note);

  Pipeline passes_;
  Instrumentation inst_;
  std::vector<PassTiming> timings_;
  std::map<std::string, int64_t> stats_;
};

} // namespace tgc
