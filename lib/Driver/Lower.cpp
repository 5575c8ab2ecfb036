//===- Lower.cpp - The pipeline driver: a model to kernels ready to render -*- C++ -*-===//
// lower-tensors, the tuning cache and BEAM search, and codegen, with verification, the viewer's trace and timings.
//===----------------------------------------------------------------------===//

#include "Driver/Lower.h"

#include "Support/Logging.h"
#include "Search/Beam.h"

#include <chrono>
#include <filesystem>

namespace tgc {

namespace {

bool run(const char *passes, Module &m, DiagEngine &diags, const TargetDesc &target, const std::string &opts,
         const TuningTable *tuned, const LowerOptions &lo) {
  Instrumentation inst;
  inst.verifyEach = lo.verifyEach;
  inst.opts = opts;
  inst.target = target;
  inst.tuned = tuned;
  inst.printAfterAll = debugLevel() >= 8;
  if (viz::Trace *trace = lo.trace)
    inst.observe = [trace](const Module &mod, std::string_view pass, double s) { trace->recordPass(mod, pass, s); };
  return runPipeline(passes, m, diags, inst, lo.timings);
}

} // namespace

bool lowerTensors(Module &m, DiagEngine &diags, const TargetDesc &target, const LowerOptions &lo) {
  return run("lower-tensors", m, diags, target, "", nullptr, lo);
}

bool fillTuningCache(const Module &m, DiagEngine &diags, const CompileTarget &target, const TuningOptions &tuning,
                     TuningCache &cache) {
  std::string err;
  if (!tuning.file.empty() && !cache.load(tuning.file, err)) {
    diags.error(Loc{}, err);
    return false;
  }
  if (tuning.beam <= 0)
    return true;
  // a cache that cannot be written is found before the search spends its budget, not after
  std::filesystem::path dir = std::filesystem::path(tuning.file).parent_path();
  if (!tuning.file.empty() && !dir.empty() && !std::filesystem::is_directory(dir)) {
    diags.error(Loc{}, "cannot write tuning cache '" + tuning.file + "': no directory '" + dir.string() + "'");
    return false;
  }
  BeamOptions bo{tuning.beam, tuning.budgetSeconds, tuning.retune};
  if (!beamSearch(m, target, bo, cache, err)) {
    diags.error(Loc{}, err);
    return false;
  }
  if (!tuning.file.empty() && !cache.save(tuning.file, err)) {
    diags.error(Loc{}, "cannot write tuning cache '" + tuning.file + "': " + err);
    return false;
  }
  return true;
}

bool lowerKernels(Module &m, DiagEngine &diags, const CompileTarget &target, const LowerOptions &lo) {
  const TuningOptions &tuning = lo.tuning;
  if (tuning.beam <= 0 && tuning.file.empty()) // codegen's optimize takes `opts`
    return run("codegen", m, diags, target.desc, lo.opts, nullptr, lo);
  if (!lo.opts.empty()) {
    diags.error(Loc{}, "--opts cannot be combined with --beam or --tuning");
    return false;
  }
  auto start = std::chrono::steady_clock::now();
  TuningCache cache(target);
  if (!fillTuningCache(m, diags, target, tuning, cache))
    return false;
  if (lo.timings)
    lo.timings->push_back({tuning.beam > 0 ? "beam search and tuning cache" : "tuning cache",
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  TuningTable table = cache.table();
  return run("codegen", m, diags, target.desc, "", &table, lo);
}

bool lowerForCodegen(Module &m, DiagEngine &diags, const CompileTarget &target, const LowerOptions &lo) {
  return lowerTensors(m, diags, target.desc, lo) && lowerKernels(m, diags, target, lo);
}

} // namespace tgc
