//===- Compiler.h - From a lowered program to an executable or library -*- C++ -*-===//
// The back half of `tgc compile`: kernels are compiled, then linked with the runtime (JitProgram.h: in memory).
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"
#include "Passes/PassManager.h"
#include "Runtime/tgc_runtime.h"
#include "Target/CompileTarget.h"

#include <memory>
#include <string>

namespace tgc {

struct CompileRequest {
  CompileTarget target;
  std::string outDir;
  std::string name;     // the model's name: executable or library name, symbol prefix
  std::string source;   // the .uop file, for comments
  bool library = false; // lib<name>.a + <name>.h instead of an executable
  bool embedWeights = false;
  std::string weightsFile; // the safetensors file (absolute), "" when the model has no weights
  bool sanitize = false;   // AddressSanitizer in kernels, tables and the link
  /// External weights: copy weightsFile into the output as <name>.safetensors and read it from there (an imported
  /// model's weights live in a temporary file).
  bool bundleWeights = false;
  std::string finalDir; // set by compileProgram: where the staging directory outDir will be moved
  /// Where the wall time of each step (kernels, weights, program tables, link) is appended (tgc compile
  /// --time-passes); nullptr: not measured.
  std::vector<PassTiming> *timings = nullptr;
  /// With timings: each LLVM kernel's thread time per step, as a report (formatKernelTimings).
  std::string *kernelReport = nullptr;
};

/// Compile a linear program whose kernels are linearized into r.outDir: the product, the executable <name> or
/// lib<name>.a with <name>.h and tgc_runtime.h (and <name>.safetensors when an imported model's weights are read at
/// run time), and the intermediates under build/: kernels/<kernel>.{c,ll,o}, <name>_model.{c,o}, weights.o.
/// All or nothing: the files are built in a staging directory beside r.outDir, which then replaces r.outDir whole
/// (so no stale file survives). An existing r.outDir is replaced only when it is empty or was written by tgc
/// compile (it holds .tgc-output).
bool compileProgram(const UOp *root, const CompileRequest &r, std::string &error);

} // namespace tgc
