//===- Interpreter.cpp - The reference interpreter --------------*- C++ -*-===//
// Signatures of modules at each stage, input checking, and dispatch to the stage's evaluator.
//===----------------------------------------------------------------------===//

#include "Interp/Internal.h"

#include "IR/Infer.h"
#include "IR/SymbolicDims.h"
#include "IR/Verifier.h"
#include "Passes/ProgramQueries.h"
#include "Runtime/Random.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <new>

namespace tgc::interp {

std::string specShapeStr(const TensorSpec &s) {
  std::string t = "[";
  for (size_t a = 0; a < s.shape.size(); ++a)
    t += (a ? ", " : "") + (s.dimVars.empty() || s.dimVars[a].empty() ? std::to_string(s.shape[a]) : s.dimVars[a]);
  return t + "]";
}

std::string_view roleName(TensorSpec::Role r) {
  switch (r) {
  case TensorSpec::Role::Input: return "input";
  case TensorSpec::Role::Weight: return "weight";
  case TensorSpec::Role::Output: return "output";
  case TensorSpec::Role::InOut: return "buffer";
  case TensorSpec::Role::Variable: return "variable";
  }
  return "?";
}

namespace {

void tensorSignature(const UOp *root, std::vector<TensorSpec> &out) {
  for (const UOp *u : toposort(root)) {
    if (u->op() == Op::Input || u->op() == Op::Weight || u->op() == Op::Output) {
      auto role = u->op() == Op::Input    ? TensorSpec::Role::Input
                  : u->op() == Op::Weight ? TensorSpec::Role::Weight
                                          : TensorSpec::Role::Output;
      TensorSpec spec{u->arg().getString(), u->dtype(), u->shapeVec(), role};
      for (size_t a = 0; a < u->dimVars().size(); ++a) {
        const UOp *v = u->dimVar(a);
        spec.dimVars.push_back(v ? varName(v) : "");
        if (v)
          spec.varBounds[varName(v)] = {varMin(v), varMax(v)};
      }
      out.push_back(std::move(spec));
    }
  }
}

void programSignature(const UOp *root, std::vector<TensorSpec> &out) {
  for (const UOp *u : toposort(root)) {
    if (u->op() != Op::Buffer)
      continue;
    const auto &t = u->arg().getTuple();
    const std::string &kind = t[2].getString();
    if (kind == "temp")
      continue;
    auto role = kind == "input"    ? TensorSpec::Role::Input
                : kind == "weight" ? TensorSpec::Role::Weight
                                   : TensorSpec::Role::Output;
    if (kind == "variable") // its value comes from the inputs' shapes (variableValues)
      continue;
    TensorSpec spec{t[3].getString(), u->dtype().pointee(), bufferShape(t[4], nullptr), role};
    std::vector<std::string> vars;
    bufferShape(t[4], &vars);
    if (std::any_of(vars.begin(), vars.end(), [](const std::string &v) { return !v.empty(); }))
      spec.dimVars = vars;
    out.push_back(std::move(spec));
  }
  for (const UOp *u : toposort(root)) // the bounds of each variable, from its buffer
    if (u->op() == Op::Buffer && u->arg().getTuple()[2].getString() == "variable") {
      const auto &t = u->arg().getTuple();
      for (TensorSpec &spec : out)
        if (std::count(spec.dimVars.begin(), spec.dimVars.end(), t[3].getString()))
          spec.varBounds[t[3].getString()] = {t[4].getTuple()[0].getInt(), t[4].getTuple()[1].getInt()};
    }
}

void kernelSignature(const UOp *root, std::vector<TensorSpec> &out) {
  std::vector<const UOp *> globals;
  for (const UOp *u : toposort(root))
    if (u->op() == Op::DefineGlobal)
      globals.push_back(u);
  std::sort(globals.begin(), globals.end(),
            [](const UOp *a, const UOp *b) { return a->arg().getInt() < b->arg().getInt(); });
  for (const UOp *g : globals)
    out.push_back({"slot" + std::to_string(g->arg().getInt()), g->dtype().pointee(),
                   Shape{kernelBufferSize(root, g->arg().getInt())}, TensorSpec::Role::InOut});
  std::map<std::string, const UOp *> vars;
  for (const UOp *u : toposort(root)) {
    if (u->op() != Op::DefineVar)
      continue;
    auto [it, fresh] = vars.emplace(u->arg().getTuple()[0].getString(), u);
    if (!fresh && it->second != u)
      fail("variable '" + it->first + "' is defined twice, with different bounds or dtypes");
  }
  for (const auto &[name, v] : vars)
    out.push_back({name, dt::I64, Shape{}, TensorSpec::Role::Variable, v->vmin(), v->vmax()});
}

/// The value of a variable's rank-0 i64 array (checkInputs has checked its dtype).
int64_t variableValue(const rt::Array &a) {
  int64_t v = 0;
  std::memcpy(&v, a.data.data(), std::min<size_t>(a.data.size(), sizeof v));
  return v;
}

/// The root of a kernel graph is a sink; a bare expression is not something that can run.
bool runnableKernel(const UOp *root) { return root->op() == Op::Sink || root->op() == Op::Linear; }

void checkInputs(const std::vector<TensorSpec> &sig, const ArrayMap &inputs) {
  for (const TensorSpec &s : sig) {
    if (s.role == TensorSpec::Role::Output)
      continue;
    auto it = inputs.find(s.name);
    if (it == inputs.end())
      fail("missing " + std::string(roleName(s.role)) + " '" + s.name + "'");
    const rt::Array &a = it->second;
    if (dtypeOf(a.type) != s.dtype)
      fail(std::string(roleName(s.role)) + " '" + s.name + "' has dtype " + std::string(rt::elemName(a.type)) +
           ", expected " + s.dtype.str());
    if (s.role == TensorSpec::Role::Variable) {
      if (!a.shape.empty())
        fail("variable '" + s.name + "' needs one value (a rank-0 array), has shape " + rt::shapeString(a.shape));
      int64_t v = variableValue(a);
      if (v < s.lo || v > s.hi)
        fail("variable '" + s.name + "' = " + std::to_string(v) + " is outside its bounds [" + std::to_string(s.lo) +
             ", " + std::to_string(s.hi) + "]");
      continue;
    }
    if (!s.dimVars.empty())
      continue; // variableValues checks it
    bool bigEnough = s.role == TensorSpec::Role::InOut && a.shape.size() == 1 && a.shape[0] >= s.shape[0];
    if (a.shape != s.shape && !bigEnough)
      fail(std::string(roleName(s.role)) + " '" + s.name + "' has shape " + rt::shapeString(a.shape) + ", expected " +
           shapeStr(s.shape));
  }
}

} // namespace

bool signature(const Module &m, std::vector<TensorSpec> &out, std::string &error) {
  out.clear();
  if (!m.root) {
    error = "the module is empty";
    return false;
  }
  try {
    Stage stage = detectStage(m.root);
    if (stage == Stage::Tensor)
      tensorSignature(m.root, out);
    else if (stage == Stage::Program)
      programSignature(m.root, out);
    else if (runnableKernel(m.root))
      kernelSignature(m.root, out);
    else
      fail("the root is not a sink, so there is nothing to run");
    for (const TensorSpec &s : out)
      if (numelOf(s.shape) > kMaxInterpElements)
        fail(std::string(roleName(s.role)) + " '" + s.name + "' has " + std::to_string(numelOf(s.shape)) +
             " elements, more than the interpreter handles (" + std::to_string(kMaxInterpElements) + ")");
    for (const TensorSpec &s : out)
      if (!elemTypeOf(s.dtype))
        fail(std::string(roleName(s.role)) + " '" + s.name + "' has dtype " + s.dtype.str() +
             ", which cannot cross the program boundary");
  } catch (const InterpError &e) {
    error = e.message;
    return false;
  }
  return true;
}

std::optional<std::map<std::string, int64_t>> variableValues(const std::vector<TensorSpec> &sig, const ArrayMap &inputs,
                                                             std::string &error) {
  std::map<std::string, int64_t> values;
  for (const TensorSpec &s : sig) {
    auto it = inputs.find(s.name);
    if (s.dimVars.empty() || s.role == TensorSpec::Role::Output || it == inputs.end())
      continue;
    const Shape &shape = it->second.shape;
    bool fits = shape.size() == s.shape.size();
    for (size_t a = 0; fits && a < shape.size(); ++a)
      fits = !s.dimVars[a].empty() || shape[a] == s.shape[a];
    if (!fits) {
      error = std::string(roleName(s.role)) + " '" + s.name + "' has shape " + rt::shapeString(shape) + ", expected " +
              specShapeStr(s);
      return std::nullopt;
    }
    for (size_t a = 0; a < shape.size(); ++a) {
      const std::string &v = s.dimVars[a];
      if (v.empty())
        continue;
      auto [lo, hi] = s.varBounds.at(v);
      if (shape[a] < lo || shape[a] > hi) {
        error = std::string(roleName(s.role)) + " '" + s.name + "' has " + v + " = " + std::to_string(shape[a]) +
                " (axis " + std::to_string(a) + "), outside its bounds [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]";
        return std::nullopt;
      }
      auto [known, fresh] = values.emplace(v, shape[a]);
      if (!fresh && known->second != shape[a]) {
        error = std::string(roleName(s.role)) + " '" + s.name + "' has " + v + " = " + std::to_string(shape[a]) +
                " (axis " + std::to_string(a) + "), but another input has " + v + " = " + std::to_string(known->second);
        return std::nullopt;
      }
    }
  }
  for (const TensorSpec &s : sig)
    for (const std::string &v : s.dimVars)
      if (!v.empty() && !values.count(v)) {
        error = "variable " + v + " is not an axis of any input, so its value is not known";
        return std::nullopt;
      }
  return values;
}

/// An input whose variable axes are smaller than their bounds, in a buffer sized at the bounds (programs lay out
/// tensors at the bounds; a variable is outermost in inputs, so the data is a prefix).
rt::Array padToBound(const rt::Array &a, const TensorSpec &s) {
  rt::Array p = a;
  p.shape = s.shape;
  p.data.resize(size_t(numelOf(s.shape)) * rt::elemSize(a.type), 0);
  return p;
}

/// An output computed at the bounds, cut to the variables' values.
void cutToValues(rt::Array &a, const TensorSpec &s, const std::map<std::string, int64_t> &values) {
  for (size_t i = 0; i < s.dimVars.size(); ++i)
    if (!s.dimVars[i].empty())
      a.shape[i] = values.at(s.dimVars[i]);
  a.data.resize(size_t(numelOf(a.shape)) * rt::elemSize(a.type));
}

void runProgramWithVariables(const UOp *root, const std::vector<TensorSpec> &sig, const ArrayMap &inputs,
                             const std::map<std::string, int64_t> &values, ArrayMap &outputs) {
  ArrayMap leaves = inputs;
  for (const TensorSpec &s : sig)
    if (!s.dimVars.empty() && s.role != TensorSpec::Role::Output)
      leaves[s.name] = padToBound(inputs.at(s.name), s);
  for (const auto &[name, v] : values) {
    rt::Array a;
    a.type = rt::ElemType::I64;
    a.data.resize(sizeof v);
    std::memcpy(a.data.data(), &v, sizeof v);
    leaves[name] = std::move(a);
  }
  runProgram(root, leaves, outputs);
  for (const TensorSpec &s : sig)
    if (!s.dimVars.empty() && s.role == TensorSpec::Role::Output)
      cutToValues(outputs.at(s.name), s, values);
}

bool run(const Module &m, const ArrayMap &inputs, ArrayMap &outputs, std::string &error) {
  std::vector<TensorSpec> sig;
  if (!signature(m, sig, error))
    return false;
  try {
    checkInputs(sig, inputs);
    auto values = variableValues(sig, inputs, error);
    if (!values)
      return false;
    Stage stage = detectStage(m.root);
    if (stage == Stage::Tensor) {
      runTensorGraph(values->empty() ? m.root : bindVariables(m.root, *values), inputs, outputs);
    } else if (stage == Stage::Program) {
      runProgramWithVariables(m.root, sig, inputs, *values, outputs);
    } else {
      ArrayMap buffers = inputs;
      std::vector<Memory> bound;
      for (const TensorSpec &s : sig) {
        rt::Array &a = buffers.at(s.name);
        bound.push_back({a.data.data(), numelOf(a.shape), s.dtype, s.name});
      }
      runKernel(m.root, bound);
      for (const TensorSpec &s : sig)
        if (s.role != TensorSpec::Role::Variable)
          outputs[s.name] = buffers.at(s.name);
    }
  } catch (const InterpError &e) {
    error = e.message;
    return false;
  } catch (const std::bad_alloc &) {
    error = "the interpreter ran out of memory (the tensors are too large to interpret)";
    return false;
  }
  return true;
}

bool runKernel(const UOp *kernel, std::vector<Memory> &buffers, std::string &error) {
  try {
    runKernel(kernel, buffers);
  } catch (const InterpError &e) {
    error = e.message;
    return false;
  }
  return true;
}

rt::Array randomArray(const TensorSpec &spec, uint64_t seed) {
  rt::Array a;
  a.type = *elemTypeOf(spec.dtype);
  a.shape = spec.shape;
  for (size_t i = 0; i < spec.dimVars.size(); ++i)
    if (!spec.dimVars[i].empty())
      a.shape[i] =
          rt::generatedDimension(spec.varBounds.at(spec.dimVars[i]).first, spec.varBounds.at(spec.dimVars[i]).second);
  rt::fillRandom(a, seed, spec.name);
  if (spec.role == TensorSpec::Role::Variable) { // a value within the bounds, from the random bits
    uint64_t bits = 0;
    std::memcpy(&bits, a.data.data(), std::min<size_t>(a.data.size(), sizeof bits));
    uint64_t span = uint64_t(spec.hi) - uint64_t(spec.lo) + 1;
    int64_t v = int64_t(uint64_t(spec.lo) + (span == 0 ? bits : bits % span));
    std::memcpy(a.data.data(), &v, std::min<size_t>(a.data.size(), sizeof v));
  }
  return a;
}

} // namespace tgc::interp
