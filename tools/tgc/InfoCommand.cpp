//===- InfoCommand.cpp - tgc info -------------------------------*- C++ -*-===//
// Inputs, outputs and weights of a model with their dtypes and shapes, its stage, and its op counts.
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "IR/Infer.h"
#include "IR/Verifier.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

namespace tgc {

/// The variables that size dimensions, with their bounds.
static std::map<std::string, std::pair<int64_t, int64_t>>
dimensionVariables(const std::vector<interp::TensorSpec> &sig) {
  std::map<std::string, std::pair<int64_t, int64_t>> vars;
  for (const auto &s : sig)
    vars.insert(s.varBounds.begin(), s.varBounds.end());
  return vars;
}

int infoCommand(const InfoOptions &o) {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::optional<Module> m = loadModel(ctx, o.input, sm, diags, LoadOptions{o.dims, o.binds});
  if (!m)
    return 1;
  std::vector<interp::TensorSpec> sig;
  std::string err;
  if (!interp::signature(*m, sig, err))
    return oneLineError(err);
  std::map<std::string, int> ops;
  int kernels = 0;
  for (const UOp *u : toposort(m->root)) {
    ++ops[std::string(opName(u->op()))];
    kernels += u->op() == Op::Call;
  }
  Stage stage = detectStage(m->root);
  if (o.json) {
    nlohmann::ordered_json j;
    j["file"] = m->fileName;
    j["stage"] = std::string(stageName(stage));
    j["weights_files"] = nlohmann::ordered_json::array();
    for (const std::string &w : m->weightFiles)
      if (!isScratchFile(w)) // an ONNX model's weights: a file that is gone when tgc exits
        j["weights_files"].push_back(w);
    for (const char *role : {"input", "weight", "output", "buffer", "variable"})
      j[std::string(role) + "s"] = nlohmann::ordered_json::array();
    for (const auto &s : sig) {
      nlohmann::ordered_json e = {{"name", s.name}, {"dtype", s.dtype.str()}, {"shape", s.shape}};
      if (s.role == interp::TensorSpec::Role::Variable)
        e["bounds"] = {s.lo, s.hi};
      if (!s.dimVars.empty()) { // "shape" has the bounds of these axes
        e["dim_vars"] = nlohmann::ordered_json::array();
        for (const std::string &v : s.dimVars)
          e["dim_vars"].push_back(v.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(v));
      }
      j[std::string(interp::roleName(s.role)) + "s"].push_back(e);
    }
    for (const auto &[name, bounds] : dimensionVariables(sig))
      j["variables"].push_back(
          {{"name", name}, {"dtype", "index"}, {"bounds", {bounds.first, bounds.second}}, {"dimension", true}});
    j["kernels"] = kernels;
    j["ops"] = ops;
    std::string text = j.dump(2) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::string text = m->fileName + ": " + std::string(stageName(stage)) + " graph\n";
  for (const auto &s : sig) {
    text += "  " + std::string(interp::roleName(s.role)) + " " + s.name + ": ";
    if (s.role == interp::TensorSpec::Role::Variable)
      text += "integer in [" + std::to_string(s.lo) + ", " + std::to_string(s.hi) + "]\n";
    else
      text += s.dtype.str() + interp::specShapeStr(s) + "\n";
  }
  for (const auto &[name, bounds] : dimensionVariables(sig))
    text += "  variable " + name + ": dimension in [" + std::to_string(bounds.first) + ", " +
            std::to_string(bounds.second) + "]\n";
  for (const std::string &w : m->weightFiles)
    text += isScratchFile(w) ? "  weights: the model file's own\n" : "  weights file: " + w + "\n";
  if (stage == Stage::Program)
    text += "  kernels: " + std::to_string(kernels) + "\n";
  text += "  ops:";
  for (const auto &[name, n] : ops)
    text += " " + name + "=" + std::to_string(n);
  text += "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

} // namespace tgc
