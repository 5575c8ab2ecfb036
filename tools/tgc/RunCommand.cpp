//===- RunCommand.cpp - tgc run ---------------------------------*- C++ -*-===//
// Runs a model, compiled in memory (LLVM's JIT) or with the reference interpreter, and writes or prints outputs.
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "IR/Eval.h"
#include "IR/Verifier.h"
#include "Runtime/Peak.h"
#include "Target/JitProgram.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

namespace tgc {

namespace {

double element(const rt::Array &a, int64_t i) { return elementValue(a.data.data(), i, interp::dtypeOf(a.type)); }

/// The largest absolute and relative differences between two runs' outputs.
std::string compareText(const interp::ArrayMap &reference, const interp::ArrayMap &outputs) {
  std::string text;
  char buf[256];
  for (const auto &[name, ref] : reference) {
    const rt::Array &got = outputs.at(name);
    double maxAbs = 0, maxRel = 0;
    for (int64_t i = 0; i < ref.numel(); ++i) {
      double a = element(got, i), b = element(ref, i);
      if (std::isnan(a) && std::isnan(b))
        continue;
      double d = std::fabs(a - b);
      if (std::isnan(d))
        d = INFINITY;
      maxAbs = std::max(maxAbs, d);
      maxRel = std::max(maxRel, d / std::max(std::fabs(b), 1e-30));
    }
    std::snprintf(buf, sizeof(buf), "compare %s: max abs error %.3g, max rel error %.3g\n", name.c_str(), maxAbs,
                  maxRel);
    text += buf;
  }
  return text;
}

/// The runtime's model of a compiled program, destroyed with it.
using ModelPtr = std::unique_ptr<tgc_model, decltype(&tgc_model_destroy)>;

/// The pointers of one run: each input's data, and each output's array, shaped for the variables' values.
void bindBuffers(const tgc_program_info *p, const interp::ArrayMap &inputs,
                 const std::map<std::string, int64_t> &variables, interp::ArrayMap &outputs,
                 std::vector<const void *> &in, std::vector<void *> &out) {
  for (int i = 0; i < p->num_buffers; ++i) {
    const tgc_buffer_info &b = p->buffers[i];
    if (b.kind == TGC_INPUT) {
      in.push_back(inputs.at(b.name).data.data());
    } else if (b.kind == TGC_OUTPUT) {
      rt::Array &a = outputs[b.name];
      a.type = rt::ElemType(b.dtype);
      a.shape.assign(b.shape, b.shape + b.rank);
      for (int d = 0; b.dim_vars && d < b.rank; ++d) // a variable axis holds the variable's value
        if (b.dim_vars[d] >= 0)
          a.shape[size_t(d)] = variables.at(p->buffers[b.dim_vars[d]].name);
      a.data.assign(a.byteSize(), 0);
      out.push_back(a.data.data());
    }
  }
}

/// The model ready to run: weights from their file, or (without one) the generated arrays in `inputs`, as the
/// interpreter has them; the variables set. Null with `err` set on failure.
ModelPtr prepareModel(const tgc_program_info *p, const std::string &weights, int threads,
                      const interp::ArrayMap &inputs, const std::map<std::string, int64_t> &variables,
                      std::string &err) {
  char msg[512];
  ModelPtr model(tgc_model_create(p, weights.empty() ? nullptr : weights.c_str(), threads, msg, sizeof(msg)),
                 tgc_model_destroy);
  if (!model) {
    err = msg;
    return model;
  }
  for (int i = 0; i < p->num_buffers; ++i)
    if (p->buffers[i].kind == TGC_WEIGHT && weights.empty())
      tgc_model_bind_weight(model.get(), p->buffers[i].name, inputs.at(p->buffers[i].name).data.data());
  for (const auto &[name, value] : variables)
    if (tgc_model_set_variable(model.get(), name.c_str(), value) != 0) {
      err = tgc_model_error(model.get());
      return ModelPtr(nullptr, tgc_model_destroy);
    }
  return model;
}

/// The viewer's per-call times (of the last run) and, on the CPU, the peaks they are read against.
void recordTimes(viz::Trace &trace, const tgc_program_info *p, tgc_model *model) {
  if (!p->device) {
    const rt::MachinePeak &peak = rt::machinePeak();
    trace.cpu = peak.cpu;
    trace.peakGflops = peak.gflops;
    trace.peakGbps = peak.gbps;
  }
  trace.callSeconds.assign(tgc_model_call_seconds(model), tgc_model_call_seconds(model) + p->num_calls);
}

/// Compile in memory and run through the runtime, like a compiled executable would.
bool runCompiled(Module &m, const RunOptions &o, const interp::ArrayMap &inputs,
                 const std::vector<interp::TensorSpec> &sig, const std::map<std::string, int64_t> &variables,
                 interp::ArrayMap &outputs, std::string &err, DiagEngine &diags) {
  std::string weights = weightsFilePath(m);
  auto target = targetFor(o.target, "", "", err);
  if (!target)
    return false;
  setFpContract(*target, o.fpContract);
  std::optional<viz::Trace> trace;
  if (!o.viz.empty())
    trace.emplace(m);
  LowerOptions lo{o.opts, o.tuning, o.verifyEach, trace ? &*trace : nullptr, nullptr};
  bool lowered = lowerTensors(m, diags, target->desc, lo);
  if (lowered && !o.perturbKernel.empty() && !(m.root = perturbKernel(m.root, o.perturbKernel, err)))
    return false;
  lowered = lowered && lowerKernels(m, diags, *target, lo);
  if (!lowered) {
    err = "the model could not be lowered";
    return false;
  }
  reportKernels(m);
  JitProgram jit;
  if (!jit.build(m.root, "model", *target, err))
    return false;
  const tgc_program_info *p = jit.program();
  std::vector<const void *> in;
  std::vector<void *> out;
  bindBuffers(p, inputs, variables, outputs, in, out);
  ModelPtr model = prepareModel(p, weights, o.threads, inputs, variables, err);
  if (!model)
    return false;
  auto runOnce = [&] {
    if (tgc_model_run(model.get(), in.data(), out.data()) == 0)
      return true;
    err = tgc_model_error(model.get());
    return false;
  };
  if (trace)
    tgc_model_set_timing(model.get(), 1);
  if (!runOnce() || (trace && !runOnce())) // with the viewer, a warm run for its times
    return false;
  if (trace) {
    recordTimes(*trace, p, model.get());
    if (!writeVizFile(o.viz, *trace, m, *target)) {
      err = "";
      return false;
    }
  }
  if (o.bench <= 0)
    return true;
  while (!tgc_model_settled(model.get())) // the runs that choose each call's threads are warm-ups
    if (!runOnce())
      return false;
  std::vector<double> t;
  for (int i = 0; i < o.bench; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!runOnce())
      return false;
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("bench: %d runs, min %.3f ms, median %.3f ms\n", o.bench, t.front() * 1e3, t[t.size() / 2] * 1e3);
  return true;
}

} // namespace

int runCommand(const RunOptions &o) {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::vector<std::string> dims = o.dims;
  std::string dimsError;
  if (isOnnxPath(o.input) && !dimsFromInputs(o.input, o.data.inputs, dims, dimsError))
    return oneLineError(dimsError);
  std::optional<Module> m = loadModel(ctx, o.input, sm, diags, LoadOptions{dims, o.binds});
  if (!m)
    return 1;
  std::vector<interp::TensorSpec> sig;
  interp::ArrayMap inputs, outputs;
  std::string err;
  if (!interp::signature(*m, sig, err) || !gatherData(*m, sig, o.data, inputs, err))
    return oneLineError(err);
  // check the inputs against the model once, with the interpreter's messages
  for (const interp::TensorSpec &s : sig) {
    if (s.role == interp::TensorSpec::Role::Output)
      continue;
    const rt::Array &a = inputs.at(s.name);
    if (interp::dtypeOf(a.type) != s.dtype)
      return oneLineError(std::string(interp::roleName(s.role)) + " '" + s.name + "' has dtype " +
                          std::string(rt::elemName(a.type)) + ", expected " + s.dtype.str());
    if (a.shape != s.shape && s.dimVars.empty())
      return oneLineError(std::string(interp::roleName(s.role)) + " '" + s.name + "' has shape " +
                          rt::shapeString(a.shape) + ", expected " + rt::shapeString(s.shape));
  }
  auto variables = interp::variableValues(sig, inputs, err); // symbolic dimensions, from the inputs' shapes
  if (!variables)
    return oneLineError(err);
  bool compiled = !o.interp && detectStage(m->root) == Stage::Tensor;
  if (!o.viz.empty() && (!compiled || o.bisect || !o.dumpDir.empty()))
    return oneLineError("--viz needs a compiled run (not --interp, --bisect or --dump-buffers)");
  if ((o.bisect || !o.dumpDir.empty()) && (!o.outputDir.empty() || o.print || o.compare || o.bench > 0))
    return oneLineError("--bisect and --dump-buffers write no outputs (not with --output-dir, --print, --compare or "
                        "--bench)");
  if (!o.against.empty() && !o.bisect)
    return oneLineError("--against is an option of --bisect");
  if (!compiled && (o.bisect || !o.dumpDir.empty()))
    return oneLineError("--bisect and --dump-buffers need a compiled run (not --interp)");
  if (compiled && (o.bisect || !o.dumpDir.empty()))
    return bisectCommand(*m, o, inputs, *variables, diags);
  if (!o.interp && !compiled)
    return oneLineError("only tensor-level models can be compiled; use --interp to run this " +
                        std::string(stageName(detectStage(m->root))) + " graph");
  interp::ArrayMap reference;
  if ((o.interp || o.compare) && !interp::run(*m, inputs, reference, err))
    return oneLineError(err);
  if (compiled && !runCompiled(*m, o, inputs, sig, *variables, outputs, err, diags))
    return err.empty() ? 1 : oneLineError(err);
  if (!compiled)
    outputs = reference;
  if (!o.outputDir.empty() && !writeOutputs(o.outputDir, outputs, err))
    return oneLineError(err);
  std::string text;
  for (const interp::TensorSpec &spec : sig) { // in the program's order
    if (!outputs.count(spec.name) ||
        (spec.role != interp::TensorSpec::Role::Output && spec.role != interp::TensorSpec::Role::InOut))
      continue;
    const std::string &name = spec.name;
    const rt::Array &a = outputs.at(name);
    if (o.print)
      text += formatArray(name, a);
    else
      text += name + ": " + std::string(rt::elemName(a.type)) + rt::shapeString(a.shape) +
              (o.outputDir.empty() ? "" : " -> " + o.outputDir + "/" + name + ".npy") + "\n";
  }
  if (o.compare && compiled)
    text += compareText(reference, outputs);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (!o.print && o.outputDir.empty() && !o.compare && o.bench == 0)
    std::fprintf(stderr, "tgc: --print shows the values, --output-dir DIR writes them as .npy files\n");
  return 0;
}

} // namespace tgc
