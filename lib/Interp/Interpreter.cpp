//===- Interpreter.cpp - The reference interpreter --------------*- C++ -*-===//
// Signatures of modules at each stage, input checking, and dispatch to the stage's evaluator.
//===----------------------------------------------------------------------===//

#include "Interp/Internal.h"

#include "IR/Infer.h"
#include "IR/Verifier.h"
#include "Runtime/Random.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <new>

namespace tgc::interp {

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
      out.push_back({u->arg().getString(), u->dtype(), u->shapeVec(), role});
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
    out.push_back({t[3].getString(), u->dtype().pointee(), t[4].intTuple(), role});
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

bool run(const Module &m, const ArrayMap &inputs, ArrayMap &outputs, std::string &error) {
  std::vector<TensorSpec> sig;
  if (!signature(m, sig, error))
    return false;
  try {
    checkInputs(sig, inputs);
    Stage stage = detectStage(m.root);
    if (stage == Stage::Tensor) {
      runTensorGraph(m.root, inputs, outputs);
    } else if (stage == Stage::Program) {
      runProgram(m.root, inputs, outputs);
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

rt::Array randomArray(const TensorSpec &spec, uint64_t seed) {
  rt::Array a;
  a.type = *elemTypeOf(spec.dtype);
  a.shape = spec.shape;
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
