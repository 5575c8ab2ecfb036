//===- TuneCommand.cpp - tgc tune -------------------------------*- C++ -*-===//
// BEAM search of every kernel of a model on this machine, saved to a tuning cache that tgc compile --tuning reads.
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "IR/Verifier.h"

#include <cstdio>

namespace tgc {

int tuneCommand(const TuneOptions &o) {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::optional<Module> m = loadModel(ctx, o.input, sm, diags, LoadOptions{o.dims, o.binds});
  if (!m)
    return 1;
  if (detectStage(m->root) != Stage::Tensor)
    return oneLineError("tgc tune needs a tensor-level model (inputs, outputs and tensor ops)");
  std::string err;
  auto target = targetFor("cpu", o.cpu, o.features, err);
  if (!target)
    return oneLineError(err);
  setFpContract(*target, o.fpContract);
  TuningCache cache(*target);
  if (!lowerTensors(*m, diags, target->desc, LowerOptions{"", {}, o.verifyEach}) ||
      !fillTuningCache(*m, diags, *target, o.tuning, cache))
    return 1;
  std::fprintf(stderr, "tgc: %s: %zu kernels tuned for %s\n", o.tuning.file.c_str(), cache.size(), target->cpu.c_str());
  return 0;
}

} // namespace tgc
