//===- CompileCommand.cpp - tgc compile -------------------------*- C++ -*-===//
// Lower a model, render and compile its kernels, and link an executable or a static library with a C header.
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "IR/Verifier.h"
#include "Support/Logging.h"
#include "Target/Compiler.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace tgc {

namespace fs = std::filesystem;

int compileCommand(const CompileOptions &o) {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  auto start = std::chrono::steady_clock::now();
  std::optional<Module> m = loadModel(ctx, o.input, sm, diags, LoadOptions{o.dims, o.binds});
  if (!m)
    return 1;
  std::vector<PassTiming> timings;
  timings.push_back(
      {"parse and verify the model", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  if (detectStage(m->root) != Stage::Tensor)
    return oneLineError("tgc compile needs a tensor-level model (inputs, outputs and tensor ops)");
  std::string err;
  auto target = targetFor(o.target, o.cpu, o.features, err, o.gpuArch);
  if (!target)
    return oneLineError(err);
  setFpContract(*target, o.fpContract);
  if (o.sanitize) // every temporary in memory of its own (writeArtifacts), so none may share bytes with another
    target->desc.arenaViews = false;
  if (o.emit != "exe" && o.emit != "lib")
    return oneLineError("--emit must be exe or lib, not '" + o.emit + "'");
  if (o.weights != "embed" && o.weights != "external")
    return oneLineError("--weights must be embed or external, not '" + o.weights + "'");
  CompileRequest r;
  r.target = *target;
  r.outDir = o.outDir;
  r.name = o.name.empty() ? fs::path(o.input).stem().string() : o.name;
  r.source = fs::path(o.input).filename().string();
  r.library = o.emit == "lib";
  r.embedWeights = o.weights == "embed";
  r.weightsFile = o.weightsFile.empty() ? weightsFilePath(*m) : fs::absolute(o.weightsFile).string();
  if (!o.weightsFile.empty())
    m->weightFiles = {r.weightsFile};
  r.sanitize = o.sanitize;
  // an imported model's weights are in a temporary file: read at run time, they go into the output
  r.bundleWeights = isOnnxPath(o.input) && o.weightsFile.empty();
  if (r.embedWeights && r.weightsFile.empty())
    r.embedWeights = false; // nothing to embed
  std::optional<viz::Trace> trace;
  if (!o.viz.empty())
    trace.emplace(*m);
  LowerOptions lo{o.opts, o.tuning, o.verifyEach, trace ? &*trace : nullptr, &timings};
  if (!lowerForCodegen(*m, diags, *target, lo))
    return 1;
  reportKernels(*m);
  r.timings = &timings;
  std::string kernelReport;
  r.kernelReport = &kernelReport;
  if (!compileProgram(m->root, r, err))
    return oneLineError(err);
  if (trace && !writeVizFile(o.viz, *trace, *m, *target))
    return 1;
  if (o.timePasses)
    std::fputs((formatTimingReport(timings) + kernelReport).c_str(), stderr);
  return 0;
}

} // namespace tgc
