//===- Beam.h - BEAM search of optimization actions per kernel --*- C++ -*-===//
// Candidates are compiled through the JIT and timed on this machine; the fastest actions go to a tuning cache.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Module.h"
#include "Target/CompileTarget.h"
#include "Search/TuningCache.h"

#include <string>

namespace tgc {

struct BeamOptions {
  int width = 4;              // candidates kept per step (tgc --beam=N)
  double budgetSeconds = 120; // for the whole model; kernels left when it is spent keep the heuristics' actions
  bool retune = false;        // search kernels already in the cache again
};

/// Search actions for every kernel of `program` (a module after lower-tensors, before codegen) that the cache does
/// not hold yet, and put the fastest in `cache`. Kernels are searched in the order of the heuristics' time, slowest
/// first, each for its share of the budget by that time (at least an equal split of up to 2 s), so a short budget
/// goes to the kernels that matter. Only for targets whose kernels run in this process
/// (cpu). Reports progress on stderr (one updating line on a terminal, one line per kernel otherwise).
bool beamSearch(const Module &program, const CompileTarget &t, const BeamOptions &o, TuningCache &cache,
                std::string &error);

} // namespace tgc
