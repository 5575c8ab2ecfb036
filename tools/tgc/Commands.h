//===- Commands.h - The subcommands of tgc ----------------------*- C++ -*-===//
// Each subcommand is an options struct and a function returning the exit status.
//===----------------------------------------------------------------------===//

#pragma once

#include "Model.h"

#include <string>
#include <vector>

namespace tgc {

struct RunOptions {
  std::string input;
  std::vector<std::string> dims;  // ONNX dynamic dimensions, NAME=SIZE
  std::vector<std::string> binds; // ONNX inputs fixed to data, NAME=FILE
  std::string opts;               // apply-opts actions, e.g. "upcast:1:4"
  bool interp = false;
  DataOptions data;
  std::string outputDir;
  bool print = false;
  bool compare = false;
  std::string target = "cpu";
  FpContract fpContract = FpContract::On; // --fp-contract
  int threads = 0;
  int bench = 0;
  TuningOptions tuning;
};
int runCommand(const RunOptions &o);

struct CompileOptions {
  std::string input;
  std::vector<std::string> dims;
  std::vector<std::string> binds;
  std::string opts; // apply-opts actions
  std::string outDir;
  std::string target = "cpu";
  std::string gpuArch;
  std::string cpu;
  std::string features;
  std::string emit = "exe";
  std::string weights = "embed";
  std::string name;
  std::string weightsFile; // overrides the model's weights directive
  bool sanitize = false;
  FpContract fpContract = FpContract::On; // --fp-contract
  bool timePasses = false; // --time-passes
  TuningOptions tuning;
};
int compileCommand(const CompileOptions &o);

struct TuneOptions {
  std::string input;
  std::vector<std::string> dims;
  std::vector<std::string> binds;
  std::string cpu;
  std::string features;
  FpContract fpContract = FpContract::On;
  TuningOptions tuning; // beam width 4 unless --beam says otherwise (main.cpp)
};
int tuneCommand(const TuneOptions &o);

struct WeightsOptions {
  std::string input;
  std::string output; // default: the file the model's weights directive names
  uint64_t seed = 0;
};
int weightsCommand(const WeightsOptions &o);

struct InfoOptions {
  std::string input;
  std::vector<std::string> dims;
  std::vector<std::string> binds;
  bool json = false;
};
int infoCommand(const InfoOptions &o);

struct ImportOptions {
  std::string input;
  std::string output;      // the .uop file ("-": stdout)
  std::string weightsFile; // default: beside the output, named after it
  std::vector<std::string> dims;
  std::vector<std::string> binds;
  bool listOps = false;
};
int importCommand(const ImportOptions &o);

} // namespace tgc
