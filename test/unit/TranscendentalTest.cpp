//===- TranscendentalTest.cpp - Accuracy of the exp2/log2/sin polynomials -*- C++ -*-===//
// Evaluates decompose-transcendentals' float32 formulas exactly (Eval.h) and measures the error in ULPs against the
// C library computed in double precision.
//===----------------------------------------------------------------------===//

#include "IR/Eval.h"
#include "Passes/Pass.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <unordered_map>

using namespace tgc;

namespace {

struct Formula {
  Context ctx;
  const UOp *leaf;
  const UOp *result;
  std::vector<const UOp *> order;

  explicit Formula(Op op) {
    const UOp *buf = ctx.make(Op::DefineGlobal, dt::F32.ptr(), {}, Arg(0));
    leaf = ctx.make(Op::Load, dt::F32, {ctx.make(Op::Index, dt::F32.ptr(), {buf, ctx.constInt(dt::Index, 0)})});
    const UOp *root = ctx.make(op, dt::F32, {leaf});
    Module m;
    DiagEngine diags;
    std::map<std::string, int64_t> stats;
    PassContext pc{m, diags, stats};
    result = findPass("decompose-transcendentals")->run(root, pc);
    order = toposort(result);
  }

  float eval(float x) {
    std::unordered_map<const UOp *, Arg> v;
    for (const UOp *u : order) {
      if (u == leaf) {
        v[u] = Arg(double(x));
        continue;
      }
      if (u->op() == Op::Const) {
        v[u] = u->arg();
        continue;
      }
      if (u->op() == Op::Load || u->op() == Op::Index || u->op() == Op::DefineGlobal)
        continue;
      std::vector<Arg> args;
      for (const UOp *s : u->src())
        args.push_back(v.at(s));
      std::optional<Arg> r;
      if (u->op() == Op::Cast)
        r = evalCast(args[0], u->src(0)->dtype(), u->dtype());
      else if (u->op() == Op::Bitcast)
        r = evalBitcast(args[0], u->src(0)->dtype(), u->dtype());
      else
        r = evalAlu(u->op(), u->dtype(), u->op() == Op::Where ? u->src(1)->dtype() : u->src(0)->dtype(), args);
      REQUIRE(r.has_value());
      v[u] = *r;
    }
    return float(v.at(result).getFloat());
  }
};

/// Distance in units in the last place between two floats (0 when both are NaN).
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto key = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t(INT32_MIN) - i : int64_t(i);
  };
  return std::llabs(key(a) - key(b));
}

template <typename Gen, typename Ref> int64_t maxUlps(Formula &f, Gen gen, Ref ref, int n) {
  int64_t worst = 0;
  for (int i = 0; i < n; ++i) {
    float x = gen(i);
    int64_t e = ulps(f.eval(x), float(ref(double(x))));
    if (e > worst) {
      worst = e;
      INFO("x = " << x);
    }
  }
  return worst;
}

} // namespace

TEST_CASE("exp2 polynomial is within 2 ulp of the C library", "[transcendental]") {
  Formula f(Op::Exp2);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-149.0f, 127.9f);
  REQUIRE(maxUlps(f, [&](int) { return d(rng); }, [](double x) { return std::exp2(x); }, 20000) <= 2);
  REQUIRE(f.eval(0.0f) == 1.0f);
  REQUIRE(f.eval(10.0f) == 1024.0f);
  REQUIRE(std::isinf(f.eval(200.0f)));
  REQUIRE(f.eval(-200.0f) == 0.0f);
  REQUIRE(std::isnan(f.eval(NAN)));
}

TEST_CASE("log2 polynomial is within 2 ulp of the C library", "[transcendental]") {
  Formula f(Op::Log2);
  std::mt19937 rng(2);
  std::uniform_int_distribution<uint32_t> bits(1, 0x7f7fffff); // every positive finite float, denormals too
  REQUIRE(maxUlps(f, [&](int) { return std::bit_cast<float>(bits(rng)); }, [](double x) { return std::log2(x); },
                  20000) <= 2);
  REQUIRE(f.eval(1.0f) == 0.0f);
  REQUIRE(f.eval(8.0f) == 3.0f);
  REQUIRE(f.eval(0.0f) == -INFINITY);
  REQUIRE(std::isnan(f.eval(-1.0f)));
  REQUIRE(f.eval(INFINITY) == INFINITY);
}

TEST_CASE("sin polynomial is within 2 ulp of the C library for |x| <= 100", "[transcendental]") {
  Formula f(Op::Sin);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-100.0f, 100.0f);
  REQUIRE(maxUlps(f, [&](int) { return d(rng); }, [](double x) { return std::sin(x); }, 20000) <= 2);
  REQUIRE(f.eval(0.0f) == 0.0f);
  REQUIRE(std::isnan(f.eval(INFINITY)));
}

TEST_CASE("sin keeps absolute error small for |x| <= 1e4", "[transcendental]") {
  Formula f(Op::Sin);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> d(-1e4f, 1e4f);
  double worst = 0;
  for (int i = 0; i < 20000; ++i) {
    float x = d(rng);
    worst = std::max(worst, std::fabs(double(f.eval(x)) - std::sin(double(x))));
  }
  REQUIRE(worst < 2e-6);
}
