//===- Commands.h - The subcommands of tgc ----------------------*- C++ -*-===//
// Each subcommand is an options struct and a function returning the exit status.
//===----------------------------------------------------------------------===//

#pragma once

#include "ModelIO.h"

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
  bool bisect = false;             // --bisect: run kernel by kernel next to the interpreter
  std::string dumpDir;             // --dump-buffers: write every buffer a call writes here
  std::string against;             // --against: with --bisect, an executable\'s --dump-buffers directory
  std::string perturbKernel;       // --test-perturb-kernel: add 1 to what this kernel stores (tests of --bisect)
  std::string viz;                 // --viz=FILE.html|.json
  bool perturbActionsOnly = false; // --test-perturb-actions-only: not in --bisect's --opts=none build
  bool verifyEach = false;         // --verify-each
};
int runCommand(const RunOptions &o);

/// tgc run --bisect / --dump-buffers on a tensor-level model (Bisect.cpp): `data` holds every input and weight,
/// `vars` the dimension variables' values. Exit status 1 when a kernel diverges.
int bisectCommand(Module &m, const RunOptions &o, const interp::ArrayMap &data,
                  const std::map<std::string, int64_t> &vars, DiagEngine &diags);

/// Test only (--test-perturb-kernel): `program` (after lower-tensors) with 1 added to every number the kernels
/// named `name` store, so that --bisect has a wrong kernel to find; nullptr with `error` when none stores one.
const UOp *perturbKernel(const UOp *program, const std::string &name, std::string &error);

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
  bool timePasses = false;                // --time-passes
  std::string viz;                        // --viz=FILE.html|.json
  TuningOptions tuning;
  bool verifyEach = false; // --verify-each
};
int compileCommand(const CompileOptions &o);

struct TuneOptions {
  std::string input;
  std::vector<std::string> dims;
  std::vector<std::string> binds;
  std::string cpu;
  std::string features;
  FpContract fpContract = FpContract::On;
  TuningOptions tuning;    // beam width 4 unless --beam says otherwise (main.cpp)
  bool verifyEach = false; // --verify-each
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

struct TargetsOptions {
  bool markdown = false; // docs/targets.md's table
};

int targetsCommand(const TargetsOptions &o);

} // namespace tgc
