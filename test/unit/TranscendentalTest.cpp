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
  const UOp *leaves[2];
  const UOp *result;
  std::vector<const UOp *> order;

  /// `op` of one (or, for pow, two) loaded float32 values, decomposed for `target` (default: the cpu)
  explicit Formula(Op op, const char *target = nullptr) {
    for (int i = 0; i < 2; ++i) {
      const UOp *buf = ctx.make(Op::DefineGlobal, dt::F32.ptr(), {}, Arg(int64_t(i)));
      leaves[i] = ctx.make(Op::Load, dt::F32, {ctx.make(Op::Index, dt::F32.ptr(), {buf, ctx.constInt(dt::Index, 0)})});
    }
    const UOp *root =
        op == Op::Pow ? ctx.make(op, dt::F32, {leaves[0], leaves[1]}) : ctx.make(op, dt::F32, {leaves[0]});
    Module m;
    DiagEngine diags;
    std::map<std::string, int64_t> stats;
    std::string error;
    TargetDesc desc = target ? *targetDescFor(target, "", error) : PassContext::defaultTarget();
    PassContext pc{m, diags, stats, "", desc};
    result = findPass("decompose-transcendentals")->run(root, pc);
    order = toposort(result);
  }

  float eval(float x, float y = 0) {
    std::unordered_map<const UOp *, Arg> v;
    for (const UOp *u : order) {
      if (u == leaves[0] || u == leaves[1]) {
        v[u] = Arg(double(u == leaves[0] ? x : y));
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
  REQUIRE(maxUlps(
              f, [&](int) { return d(rng); }, [](double x) { return std::exp2(x); }, 20000) <= 2);
  REQUIRE(f.eval(0.0f) == 1.0f);
  REQUIRE(f.eval(10.0f) == 1024.0f);
  REQUIRE(std::isinf(f.eval(200.0f)));
  REQUIRE(f.eval(-200.0f) == 0.0f);
  REQUIRE(std::isnan(f.eval(NAN)));
  REQUIRE(std::isnan(f.eval(-NAN)));
  REQUIRE(std::isinf(f.eval(INFINITY)));
  REQUIRE(f.eval(-INFINITY) == 0.0f);
  REQUIRE(std::isinf(f.eval(128.0f)));
  REQUIRE(std::isfinite(f.eval(127.99f)));
  REQUIRE(f.eval(-150.5f) == 0.0f);
  REQUIRE(f.eval(-151.5f) == 0.0f);
  REQUIRE(f.eval(-1e30f) == 0.0f);
  for (int k = -149; k <= 127; ++k) // integers, denormals included, are exact
    REQUIRE(f.eval(float(k)) == std::ldexp(1.0f, k));
  REQUIRE(f.eval(2.5f) == float(std::exp2(2.5))); // a tie of the rounding to an integer
}

TEST_CASE("log2 polynomial is within 2 ulp of the C library", "[transcendental]") {
  Formula f(Op::Log2);
  std::mt19937 rng(2);
  std::uniform_int_distribution<uint32_t> bits(1, 0x7f7fffff); // every positive finite float, denormals too
  REQUIRE(maxUlps(
              f, [&](int) { return std::bit_cast<float>(bits(rng)); }, [](double x) { return std::log2(x); }, 20000) <=
          2);
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
  REQUIRE(maxUlps(
              f, [&](int) { return d(rng); }, [](double x) { return std::sin(x); }, 20000) <= 2);
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

// exp2(y * log2 x) in float32 loses about one ulp of the result per unit of |y * log2 x| (here up to 100): the
// rounding error of the product is scaled by ln 2 * 2^(y log2 x)
TEST_CASE("cuda's pow is within 96 ulp of the C library for |y log2 x| <= 100 and keeps C's special cases",
          "[transcendental]") {
  Formula f(Op::Pow, "cuda");
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> base(0.0f, 100.0f);
  std::uniform_real_distribution<float> exponent(-15.0f, 15.0f);
  int64_t worst = 0;
  for (int i = 0; i < 20000; ++i) {
    float x = base(rng);
    float y = exponent(rng);
    float want = float(std::pow(double(x), double(y)));
    if (std::isfinite(want) && std::fabs(want) > 1e-37f)
      worst = std::max(worst, ulps(f.eval(x, y), want));
  }
  REQUIRE(worst <= 96);
  // a negative base: odd integer powers keep the sign, even ones drop it, others are NaN
  REQUIRE(std::fabs(f.eval(-2.0f, 3.0f) + 8.0f) < 1e-5f);
  REQUIRE(std::fabs(f.eval(-2.0f, 2.0f) - 4.0f) < 1e-5f);
  REQUIRE(std::isnan(f.eval(-2.0f, 0.5f)));
  REQUIRE(f.eval(-2.0f, 1e30f) == INFINITY); // large floats are even integers
  struct Case {
    float x, y, want;
  };
  for (Case c :
       {Case{NAN, 0.0f, 1.0f}, Case{1.0f, NAN, 1.0f}, Case{-1.0f, INFINITY, 1.0f}, Case{-1.0f, -INFINITY, 1.0f},
        Case{0.0f, 2.0f, 0.0f}, Case{0.0f, -1.0f, INFINITY}, Case{-0.0f, -1.0f, -INFINITY}, Case{-0.0f, 0.5f, 0.0f},
        Case{-INFINITY, 0.5f, INFINITY}, Case{-INFINITY, 3.0f, -INFINITY}, Case{-INFINITY, -3.0f, -0.0f},
        Case{0.5f, INFINITY, 0.0f}, Case{2.0f, -INFINITY, 0.0f}}) {
    INFO("pow(" << c.x << ", " << c.y << ")");
    float got = f.eval(c.x, c.y);
    REQUIRE(std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(c.want));
    REQUIRE(std::bit_cast<uint32_t>(float(std::pow(double(c.x), double(c.y)))) == std::bit_cast<uint32_t>(c.want));
  }
  REQUIRE(std::isnan(f.eval(NAN, 1.0f)));
  REQUIRE(std::isnan(f.eval(2.0f, NAN)));
}

TEST_CASE("pow stays an op where the target has one", "[transcendental]") {
  Formula cpu(Op::Pow);
  REQUIRE(cpu.result->op() == Op::Pow);
  Formula amd(Op::Pow, "amd"); // decomposed, but to exp2 and log2 ops amd lowers natively
  bool usesExp2 = false;
  for (const UOp *u : amd.order)
    usesExp2 |= u->op() == Op::Exp2;
  REQUIRE(usesExp2);
}
