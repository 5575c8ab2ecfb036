//===- SemanticsCheck.cpp - --check-semantics for tgc-opt -------*- C++ -*-===//
// Deterministic random inputs, interpreter runs, and a comparison with per-dtype tolerances.
//===----------------------------------------------------------------------===//
//
// Tolerances: |a - b| <= atol * max(1, M) + rtol * |b|, with M the largest finite |value| of the expected output
// (so rounding that happened at the scale of the tensor is allowed where values cancel to small numbers), and
// (rtol, atol) = f64 (1e-9, 1e-12), f32 (1e-4, 1e-5), f16 (1e-2, 1e-3), bf16 (2e-2, 1e-2); integers and bools must
// be equal; NaN matches NaN, inf matches itself. A float output takes the tolerance of the least precise float
// dtype of the tensor graph that computes it (an f16 matmul cast to f32 is compared as f16).

#include "SemanticsCheck.h"

#include "IR/Eval.h"

#include <cmath>
#include <cstring>

namespace tgc {

namespace {

struct Tolerance {
  double rtol, atol;
};

Tolerance toleranceOf(rt::ElemType t) {
  switch (t) {
  case rt::ElemType::F64: return {1e-9, 1e-12};
  case rt::ElemType::F32: return {1e-4, 1e-5};
  case rt::ElemType::F16: return {1e-2, 1e-3};
  case rt::ElemType::BF16: return {2e-2, 1e-2};
  default: return {0, 0};
  }
}

Arg element(const rt::Array &a, int64_t i) {
  uint64_t bits = 0;
  int64_t size = rt::elemSize(a.type);
  std::memcpy(&bits, a.data.data() + i * size, size_t(size));
  return valueFromBits(bits, interp::dtypeOf(a.type));
}

bool close(const Arg &x, const Arg &y, Tolerance tol, double scale) {
  if (!x.isFloat())
    return x == y;
  double a = x.getFloat(), b = y.getFloat();
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= tol.atol * std::max(1.0, scale) + tol.rtol * std::fabs(b);
}

} // namespace

/// Float dtypes from the most to the least precise.
int precisionRank(rt::ElemType t) {
  switch (t) {
  case rt::ElemType::F64: return 0;
  case rt::ElemType::F32: return 1;
  case rt::ElemType::F16: return 2;
  case rt::ElemType::BF16: return 3;
  default: return -1;
  }
}

std::optional<std::string> compareArrays(const rt::Array &expected, const rt::Array &actual,
                                         std::optional<rt::ElemType> precision) {
  if (expected.type != actual.type)
    return "has dtype " + std::string(rt::elemName(actual.type)) + ", expected " +
           std::string(rt::elemName(expected.type));
  if (expected.numel() != actual.numel())
    return "has shape " + rt::shapeString(actual.shape) + ", expected " + rt::shapeString(expected.shape);
  Tolerance tol = toleranceOf(precision && precisionRank(expected.type) >= 0 ? *precision : expected.type);
  double scale = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    Arg e = element(expected, i);
    if (e.isFloat() && std::isfinite(e.getFloat()))
      scale = std::max(scale, std::fabs(e.getFloat()));
  }
  for (int64_t i = 0; i < expected.numel(); ++i) {
    Arg e = element(expected, i), a = element(actual, i);
    if (!close(a, e, tol, scale))
      return "differs first at element " + std::to_string(i) + ": " + a.str() + " instead of " + e.str();
  }
  return std::nullopt;
}

bool SemanticsCheck::start(const Module &m) {
  std::vector<interp::TensorSpec> sig;
  std::string err;
  if (!interp::signature(m, sig, err))
    return false; // nothing that can run: nothing to check
  for (const interp::TensorSpec &s : sig)
    if (s.role != interp::TensorSpec::Role::Output)
      inputs_[s.name] = interp::randomArray(s, seed_);
  for (const UOp *o : m.root->src()) {
    if (o->op() != Op::Output)
      continue;
    for (const UOp *u : toposort(o)) {
      std::optional<rt::ElemType> t = interp::elemTypeOf(u->dtype());
      if (!u->hasShape() || !t || precisionRank(*t) < 0)
        continue;
      auto [it, fresh] = precision_.emplace(o->arg().getString(), *t);
      if (!fresh && precisionRank(*t) > precisionRank(it->second))
        it->second = *t;
    }
  }
  if (!interp::run(m, inputs_, reference_, err)) {
    diags_.error(Loc{m.fileName, 0, 0}, "--check-semantics: the input does not run: " + err);
    return false;
  }
  active_ = true;
  return true;
}

bool SemanticsCheck::check(const Module &m, std::string_view pass) {
  if (!active_)
    return true;
  interp::ArrayMap outputs;
  std::string err;
  std::string prefix = "--check-semantics: after pass '" + std::string(pass) + "', ";
  if (!interp::run(m, inputs_, outputs, err)) {
    diags_.error(Loc{m.fileName, 0, 0}, prefix + "the program does not run: " + err);
    return false;
  }
  for (const auto &[name, expected] : reference_) {
    auto it = outputs.find(name);
    if (it == outputs.end()) {
      // a kernel's buffer that it only read may disappear (its loads folded away); one it wrote may not
      auto in = inputs_.find(name);
      if (in != inputs_.end() && in->second.data == expected.data)
        continue;
      diags_.error(Loc{m.fileName, 0, 0}, prefix + "output '" + name + "' is missing");
      return false;
    }
    auto p = precision_.find(name);
    auto precision = p == precision_.end() ? std::nullopt : std::optional<rt::ElemType>(p->second);
    if (auto diff = compareArrays(expected, it->second, precision)) {
      diags_.error(Loc{m.fileName, 0, 0}, prefix + "output '" + name + "' " + *diff);
      return false;
    }
  }
  return true;
}

} // namespace tgc
