//===- OptDriver.h - What tgc-opt does, behind its command line -*- C++ -*-===//
// Options of tgc-opt and the function that runs them.
//===----------------------------------------------------------------------===//

#pragma once

#include <string>
#include <vector>

namespace tgc {

struct OptOptions {
  std::string input = "-";
  std::string output = "-";
  std::string passes;
  bool listPasses = false;
  bool printPipeline = false;
  bool printAfterAll = false;
  std::string opts;
  std::string target = "cpu";
  std::string gpuArch;
  int vectorBits = 0;     // 0: the host's
  int l2OperandBytes = 0; // 0: the target's
  std::string fpContract; // on, off; empty: the target's (on where it has FMA instructions)
  bool printAfterChange = false;
  std::vector<std::string> printBefore;
  std::vector<std::string> printAfter;
  bool verifyEach = true;
  bool timePasses = false;
  bool stats = false;
  bool printRemarks = false;
  bool printRanges = false;
  bool splitInputFile = false;
  bool verifyDiagnostics = false;
  bool verifyRoundtrip = false;
  bool checkSemantics = false;
  uint64_t checkSeed = 0;
  std::string viz; // --viz=FILE.html|FILE.json: the viewer of the pipeline
};

/// Run tgc-opt; returns the process exit status.
int runOpt(const OptOptions &o);

} // namespace tgc
