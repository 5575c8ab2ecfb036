//===- WeightsCommand.cpp - tgc weights -------------------------*- C++ -*-===//
// Writes deterministic weights for a model's `weight` nodes into a safetensors file, for examples and tests.
//===----------------------------------------------------------------------===//
//
// Each weight gets values uniform in [-s, s) with s = 1/sqrt(fan_in) (the product of all axes but the first), from
// the input generator (lib/Runtime/Random.cpp) seeded with --seed and the tensor's name: the same bytes everywhere.
// A weight used as a batchnorm variance gets |v| + 0.5 instead, so the model's outputs stay finite.

#include "Commands.h"

#include "Runtime/Half.h"
#include "Runtime/Random.h"
#include "Runtime/Safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

namespace tgc {

namespace fs = std::filesystem;

/// Names of weights that must be positive: those read as a batchnorm's variance.
static std::set<std::string> positiveWeights(const Module &m) {
  std::set<std::string> names;
  for (const UOp *u : toposort(m.root))
    if (u->op() == Op::Batchnorm && u->src(4)->op() == Op::Weight)
      names.insert(u->src(4)->arg().getString());
  return names;
}

/// Maps each floating-point element v of `a` to f(v), rounding to the element type.
template <typename F> static void mapFloats(rt::Array &a, F f) {
  int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) {
    uint8_t *p = a.data.data() + i * rt::elemSize(a.type);
    if (a.type == rt::ElemType::F32) {
      float v;
      std::memcpy(&v, p, 4);
      float g = float(f(double(v)));
      std::memcpy(p, &g, 4);
    } else if (a.type == rt::ElemType::F64) {
      double d;
      std::memcpy(&d, p, 8);
      d = f(d);
      std::memcpy(p, &d, 8);
    } else if (a.type == rt::ElemType::F16 || a.type == rt::ElemType::BF16) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      bool half = a.type == rt::ElemType::F16;
      float g = float(f(double(half ? rt::halfToFloat(h) : rt::bf16ToFloat(h))));
      h = half ? rt::floatToHalf(g) : rt::floatToBF16(g);
      std::memcpy(p, &h, 2);
    }
  }
}

int weightsCommand(const WeightsOptions &o) {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::optional<Module> m = loadModel(ctx, o.input, sm, diags);
  if (!m)
    return 1;
  std::string out = o.output.empty() ? weightsFilePath(*m) : o.output;
  if (out.empty()) {
    return oneLineError(o.input + " names no weights file; pass -o FILE");
  }
  std::vector<interp::TensorSpec> sig;
  std::string err;
  if (!interp::signature(*m, sig, err))
    return oneLineError(err);
  std::set<std::string> positive = positiveWeights(*m);
  std::vector<std::pair<std::string, rt::Array>> tensors;
  for (const interp::TensorSpec &s : sig) {
    if (s.role != interp::TensorSpec::Role::Weight)
      continue;
    rt::Array a = interp::randomArray(s, o.seed);
    int64_t fanIn = 1;
    for (size_t i = 1; i < s.shape.size(); ++i)
      fanIn *= s.shape[i];
    if (s.shape.size() <= 1)
      fanIn = s.shape.empty() ? 1 : s.shape[0];
    double bound = 1.0 / std::sqrt(double(std::max<int64_t>(fanIn, 1)));
    if (positive.count(s.name))
      mapFloats(a, [](double v) { return std::fabs(v) + 0.5; });
    else
      mapFloats(a, [bound](double v) { return v * bound; });
    tensors.emplace_back(s.name, std::move(a));
  }
  std::sort(tensors.begin(), tensors.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  if (!rt::writeSafetensors(out, tensors, err))
    return oneLineError(err);
  std::printf("wrote %zu tensors to %s\n", tensors.size(), out.c_str());
  return 0;
}

} // namespace tgc
