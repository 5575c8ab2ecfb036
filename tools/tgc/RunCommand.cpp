//===- RunCommand.cpp - tgc run ---------------------------------*- C++ -*-===//
// Runs a model on given or generated inputs and writes or prints its outputs.
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <cstdio>

namespace tgc {

static int oneLineError(const std::string &msg) {
  std::fprintf(stderr, "tgc: error: %s\n", msg.c_str());
  return 1;
}

int runCommand(const RunOptions &o) {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::optional<Module> m = loadModel(ctx, o.input, sm, diags);
  if (!m)
    return 1;
  if (!o.interp)
    return oneLineError("running compiled code needs the CPU backend, which is not built yet; use --interp");
  std::vector<interp::TensorSpec> sig;
  interp::ArrayMap inputs, outputs;
  std::string err;
  if (!interp::signature(*m, sig, err) || !gatherData(*m, sig, o.data, inputs, err) ||
      !interp::run(*m, inputs, outputs, err))
    return oneLineError(err);
  if (!o.outputDir.empty() && !writeOutputs(o.outputDir, outputs, err))
    return oneLineError(err);
  std::string text;
  for (const auto &[name, a] : outputs) {
    if (o.print)
      text += formatArray(name, a);
    else
      text += name + ": " + std::string(rt::elemName(a.type)) + rt::shapeString(a.shape) +
              (o.outputDir.empty() ? "" : " -> " + o.outputDir + "/" + name + ".npy") + "\n";
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

} // namespace tgc
