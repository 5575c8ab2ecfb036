//===- Lower.h - The pipeline driver: a model to kernels ready to render -*- C++ -*-===//
// lower-tensors, the tuning cache and BEAM search, and codegen, with verification, the viewer's trace and timings.
//===----------------------------------------------------------------------===//
//
// tgc's commands call these; tgc-opt runs pass lists of its own choosing through the PassManager directly.

#pragma once

#include "IR/Module.h"
#include "Passes/PassManager.h"
#include "Passes/TargetDesc.h"
#include "Support/Diagnostics.h"
#include "Target/CompileTarget.h"
#include "Search/TuningCache.h"
#include "Viz/Trace.h"

#include <string>
#include <vector>

namespace tgc {

/// How kernels get their optimization actions beyond the heuristics: BEAM search and a tuning cache file.
struct TuningOptions {
  int beam = 0;               // --beam=N: search with beam width N (0: no search)
  double budgetSeconds = 120; // --beam-budget
  std::string file;           // --tuning=FILE: read (and after a search, write) this cache
  bool retune = false;        // search kernels the cache holds too
};

/// What the driver does around the passes.
struct LowerOptions {
  /// optimize's actions instead of its heuristics (--opts; "none": no actions). Not with tuning.
  std::string opts;
  TuningOptions tuning;
  /// Verify the IR after every pass (--verify-each); otherwise each pipeline's output, once.
  bool verifyEach = false;
  /// Record every pass into this trace (--viz).
  viz::Trace *trace = nullptr;
  /// Append each pass's wall time, and the search's, here (--time-passes).
  std::vector<PassTiming> *timings = nullptr;
};

/// The lower-tensors pipeline alone (a scheduled program with planned memory, kernels not yet optimized).
bool lowerTensors(Module &m, DiagEngine &diags, const TargetDesc &target, const LowerOptions &lo = {});

/// For a module after lower-tensors: read tuning.file into `cache` (a missing file is empty), and with a beam width
/// search the kernels it lacks and write the file back. Errors go to `diags`.
bool fillTuningCache(const Module &m, DiagEngine &diags, const CompileTarget &target, const TuningOptions &tuning,
                     TuningCache &cache);

/// For a module after lower-tensors: the codegen pipeline, with lo.opts, or with the tuning cache's actions (after
/// searching the kernels it lacks, with a beam width).
bool lowerKernels(Module &m, DiagEngine &diags, const CompileTarget &target, const LowerOptions &lo = {});

/// Lower a tensor-level model to a program whose kernels are ready for a renderer: lowerTensors, then lowerKernels.
bool lowerForCodegen(Module &m, DiagEngine &diags, const CompileTarget &target, const LowerOptions &lo = {});

} // namespace tgc
