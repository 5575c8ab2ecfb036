//===- DifferentialTest.cpp - simplify never changes a value ----*- C++ -*-===//
// Random integer and float ALU expressions, evaluated exactly before and after simplify at many points.
//===----------------------------------------------------------------------===//
//
// Variables are loop ranges and bound variables (define_var), so simplify knows their bounds; some take negative
// values. The evaluator is
// independent of the rewrite rules: it only calls Eval.h, the definition of each op. A point where the original
// expression is undefined (division by zero, an out-of-range shift or conversion) is skipped: simplify may remove
// undefined behaviour, never add it. The exhaustive case checks every point of small variables and runs for
// TGC_DIFFERENTIAL_SECONDS (default 5) seconds.

#include "IR/Eval.h"
#include "Passes/Pass.h"

#include <bit>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <random>
#include <unordered_map>

using namespace tgc;

namespace {

using Env = std::unordered_map<const UOp *, int64_t>;

/// Value of `u` with ranges bound by `env`; nullopt where some op is undefined.
std::optional<Arg> evaluate(const UOp *root, const Env &env) {
  std::unordered_map<const UOp *, std::optional<Arg>> val;
  for (const UOp *u : toposort(root)) {
    if (u->op() == Op::Const) {
      val[u] = u->arg();
      continue;
    }
    if (u->op() == Op::Range || u->op() == Op::DefineVar) {
      val[u] = Arg(env.at(u));
      continue;
    }
    std::vector<Arg> args;
    bool defined = true;
    for (const UOp *s : u->src()) {
      if (!val.at(s))
        defined = false;
      else
        args.push_back(*val.at(s));
    }
    if (!defined) {
      val[u] = std::nullopt;
      continue;
    }
    if (u->op() == Op::Cast)
      val[u] = evalCast(args[0], u->src(0)->dtype(), u->dtype());
    else if (u->op() == Op::Bitcast)
      val[u] = evalBitcast(args[0], u->src(0)->dtype(), u->dtype());
    else {
      DType in = u->op() == Op::Where ? u->src(1)->dtype() : u->src(0)->dtype();
      val[u] = evalAlu(u->op(), u->dtype(), in, args);
    }
  }
  return val.at(root);
}

bool sameValue(const Arg &a, const Arg &b) { return a == b; } // floats by bits; NaN is canonical

class Generator {
public:
  Generator(Context &ctx, uint32_t seed) : ctx_(ctx), rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  const UOp *intConst(DType d) {
    static const int64_t interesting[] = {0, 1, -1, 2, 3, 4, 5, 7, 8, 12, 16, -4, 100, 127, -128, 255};
    return ctx_.constInt(d, interesting[pick(16)]);
  }

  /// Three variables of at most `maxSize` values each: loop ranges, ranges shifted down (x - k), and bound
  /// variables (define_var) whose bounds may be negative.
  void makeVars(DType d, int maxSize) {
    vars_.clear();
    ranges_.clear();
    for (int i = 0; i < 3; ++i) {
      int64_t end = 1 + pick(maxSize);
      int kind = pick(3);
      if (kind == 2) {
        int64_t lo = d.isSigned() ? -pick(9) : pick(3);
        const UOp *v = ctx_.make(Op::DefineVar, d, {}, Arg::tuple({"v" + std::to_string(i), lo, lo + end - 1}));
        ranges_.push_back(v);
        vars_.push_back(v);
        continue;
      }
      const UOp *r = ctx_.make(Op::Range, d, {ctx_.constInt(d, end)}, Arg::tuple({i, "loop"}));
      ranges_.push_back(r);
      bool shift = d.isSigned() && kind == 1;
      vars_.push_back(shift ? ctx_.alu(Op::Sub, {r, ctx_.constInt(d, 1 + pick(int(end)))}) : r);
    }
  }
  void makeVars(DType d) { makeVars(d, d.bits() == 8 ? 20 : 40); }

  const UOp *intExpr(DType d, int depth) {
    if (depth == 0 || pick(5) == 0)
      return pick(3) ? vars_[size_t(pick(3))] : intConst(d);
    static const Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Idiv, Op::Mod, Op::Floordiv, Op::Floormod,
                                Op::Max, Op::And, Op::Or,  Op::Xor,  Op::Shl, Op::Shr};
    int kind = pick(11);
    if (kind == 10)
      return shapedExpr(d, depth);
    if (kind < 6) {
      Op op = binary[pick(13)];
      const UOp *a = intExpr(d, depth - 1);
      // divisors and shift amounts are mostly constants, as in index arithmetic
      bool constRhs = op == Op::Idiv || op == Op::Mod || op == Op::Floordiv || op == Op::Floormod || op == Op::Shl ||
                      op == Op::Shr || op == Op::Mul;
      const UOp *b = constRhs && pick(4) ? intConst(d) : intExpr(d, depth - 1);
      if ((op == Op::Shl || op == Op::Shr) && b->isConst())
        b = ctx_.constInt(d, pick(d.bits()));
      return ctx_.alu(op, {a, b});
    }
    if (kind == 6)
      return ctx_.alu(Op::Neg, {intExpr(d, depth - 1)});
    if (kind == 7)
      return ctx_.alu(Op::Where, {boolExpr(d, depth - 1), intExpr(d, depth - 1), intExpr(d, depth - 1)});
    if (kind == 8) {
      static const DType others[] = {dt::I8, dt::U8, dt::I16, dt::I32, dt::U32, dt::Index};
      DType o = others[pick(6)];
      return ctx_.cast(ctx_.cast(intExpr(d, depth - 1), o), d);
    }
    return ctx_.cast(boolExpr(d, depth - 1), d);
  }

  /// The shapes the where, boolean and division rules look for, with random parts.
  const UOp *shapedExpr(DType d, int depth) {
    const UOp *a = intExpr(d, depth - 1);
    const UOp *b = intExpr(d, depth - 1);
    const UOp *c = boolExpr(d, depth - 1);
    const UOp *zero = ctx_.constInt(d, 0);
    switch (pick(6)) {
    case 0: return ctx_.alu(Op::Where, {ctx_.alu(Op::Cmplt, {a, b}), b, a});
    case 1: return ctx_.alu(Op::Where, {c, ctx_.alu(Op::Where, {boolExpr(d, depth - 1), a, b}), b});
    case 2: return ctx_.alu(Op::Add, {ctx_.alu(Op::Where, {c, a, zero}), ctx_.alu(Op::Where, {c, zero, b})});
    case 3: {
      Op div = pick(2) ? Op::Idiv : Op::Floordiv;
      const UOp *inner = ctx_.alu(Op::Add, {ctx_.alu(div, {a, intConst(d)}), intConst(d)});
      return ctx_.alu(div, {inner, intConst(d)});
    }
    case 4: { // (y*q + r) op y
      static const Op ops[] = {Op::Idiv, Op::Mod, Op::Floordiv, Op::Floormod};
      Op op = ops[pick(4)];
      const UOp *sum = ctx_.alu(Op::Add, {ctx_.alu(Op::Mul, {b, a}), intExpr(d, depth - 1)});
      return ctx_.alu(op, {sum, b});
    }
    default: return ctx_.alu(Op::Where, {c, ctx_.cast(c, d), a});
    }
  }

  const UOp *boolExpr(DType d, int depth) {
    static const Op cmp[] = {Op::Cmplt, Op::Cmpne, Op::Cmpeq};
    int kind = pick(6);
    if (kind == 0 && depth > 0)
      return ctx_.alu(pick(2) ? Op::And : Op::Or, {boolExpr(d, depth - 1), boolExpr(d, depth - 1)});
    if (kind == 4 && depth > 0) { // x & !x, x | !x
      const UOp *x = boolExpr(d, depth - 1);
      const UOp *notX = ctx_.alu(Op::Cmpne, {x, ctx_.constInt(dt::Bool, 1)});
      return ctx_.alu(pick(2) ? Op::And : Op::Or, {x, notX});
    }
    if (kind == 5 && depth > 0) // cast(b) compared with a constant
      return ctx_.alu(cmp[pick(3)], {ctx_.cast(boolExpr(d, depth - 1), d), intConst(d)});
    const UOp *a = intExpr(d, depth > 0 ? depth - 1 : 0);
    const UOp *b = pick(2) ? intConst(d) : intExpr(d, depth > 0 ? depth - 1 : 0);
    return ctx_.alu(cmp[pick(3)], {a, b});
  }

  const UOp *floatExpr(DType d, int depth) {
    if (depth == 0 || pick(5) == 0) {
      if (pick(3) == 0) {
        static const double consts[] = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 1e30, -2.5};
        return ctx_.constant(d, consts[pick(8)]);
      }
      return ctx_.cast(vars_[size_t(pick(3))], d);
    }
    static const Op binary[] = {Op::Add, Op::Sub, Op::Mul, Op::Fdiv, Op::Max};
    static const Op unary[] = {Op::Neg, Op::Sqrt, Op::Recip, Op::Exp2, Op::Log2, Op::Trunc};
    int kind = pick(8);
    if (kind < 5)
      return ctx_.alu(binary[pick(5)], {floatExpr(d, depth - 1), floatExpr(d, depth - 1)});
    if (kind < 7)
      return ctx_.alu(unary[pick(6)], {floatExpr(d, depth - 1)});
    const UOp *c = ctx_.alu(Op::Cmplt, {floatExpr(d, depth - 1), floatExpr(d, depth - 1)});
    return ctx_.alu(Op::Where, {c, floatExpr(d, depth - 1), floatExpr(d, depth - 1)});
  }

  /// Every point of the ranges, in order; false after the last.
  bool nextPoint(Env &env) {
    for (const UOp *r : ranges_) {
      if (++env[r] <= r->vmax())
        return true;
      env[r] = r->vmin();
    }
    return false;
  }
  Env firstPoint() const {
    Env env;
    for (const UOp *r : ranges_)
      env[r] = r->vmin();
    return env;
  }

  Env randomPoint() {
    Env env;
    for (const UOp *v : ranges_) {
      int64_t lo = v->vmin();
      int64_t hi = v->vmax();
      int r = pick(4);
      env[v] = r == 0 ? lo : r == 1 ? hi : std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
    }
    return env;
  }

private:
  Context &ctx_;
  std::mt19937 rng_;
  std::vector<const UOp *> vars_;
  std::vector<const UOp *> ranges_;
};

const UOp *simplify(const UOp *root) {
  Module m;
  m.root = root;
  DiagEngine diags;
  std::map<std::string, int64_t> stats;
  PassContext pc{m, diags, stats};
  return findPass("simplify")->run(root, pc);
}

struct Outcome {
  int expressions = 0;
  int changed = 0;
  int compared = 0;
};

void checkPoint(const UOp *e, const UOp *s, const Env &env, Outcome &out) {
  std::optional<Arg> before = evaluate(e, env);
  if (!before)
    return;
  std::optional<Arg> after = evaluate(s, env);
  INFO("dtype " << e->dtype().str() << " expression:\n" << printGraph(e) << "simplified:\n" << printGraph(s));
  std::string point;
  for (const auto &[r, v] : env)
    point += " " + r->arg().str() + "=" + std::to_string(v);
  INFO("at" << point);
  REQUIRE(after.has_value());
  REQUIRE(sameValue(*before, *after));
  ++out.compared;
}

void checkExhaustively(Generator &g, const UOp *e, Outcome &out) {
  const UOp *s = simplify(e);
  ++out.expressions;
  out.changed += s != e;
  Env env = g.firstPoint();
  do
    checkPoint(e, s, env, out);
  while (g.nextPoint(env));
}

void checkExpression(Generator &g, const UOp *e, Outcome &out) {
  const UOp *s = simplify(e);
  ++out.expressions;
  out.changed += s != e;
  for (int k = 0; k < 40; ++k) {
    Env env = g.randomPoint();
    std::optional<Arg> before = evaluate(e, env);
    if (!before)
      continue;
    std::optional<Arg> after = evaluate(s, env);
    INFO("dtype " << e->dtype().str() << " expression has " << toposort(e).size() << " nodes; simplified "
                  << toposort(s).size());
    REQUIRE(after.has_value());
    REQUIRE(sameValue(*before, *after));
    ++out.compared;
  }
}

} // namespace

TEST_CASE("simplify preserves integer expressions exactly", "[simplify][differential]") {
  static const DType dtypes[] = {dt::Index, dt::I32, dt::I8, dt::U8, dt::U32, dt::I64};
  Outcome out;
  for (uint32_t seed = 0; seed < 3000; ++seed) {
    Context ctx;
    Generator g(ctx, seed);
    DType d = dtypes[seed % 6];
    g.makeVars(d);
    checkExpression(g, g.intExpr(d, 4), out);
  }
  REQUIRE(out.changed > out.expressions / 4); // the test exercises the rules
  REQUIRE(out.compared > out.expressions * 20);
}

TEST_CASE("simplify preserves float expressions bit for bit", "[simplify][differential]") {
  static const DType dtypes[] = {dt::F32, dt::F16, dt::BF16, dt::F64};
  Outcome out;
  for (uint32_t seed = 0; seed < 1500; ++seed) {
    Context ctx;
    Generator g(ctx, seed);
    g.makeVars(dt::I32);
    checkExpression(g, g.floatExpr(dtypes[seed % 4], 4), out);
  }
  REQUIRE(out.changed > 0);
  REQUIRE(out.compared > out.expressions * 20);
}

TEST_CASE("simplify preserves integer expressions at every point of small variables", "[simplify][differential]") {
  static const DType dtypes[] = {dt::Index, dt::I32, dt::I8, dt::U8, dt::I64};
  const char *env = std::getenv("TGC_DIFFERENTIAL_SECONDS");
  double seconds = env ? std::atof(env) : 5.0;
  auto stop = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  Outcome out;
  for (uint32_t seed = 0; std::chrono::steady_clock::now() < stop; ++seed) {
    Context ctx;
    Generator g(ctx, 1000003u * seed + 17);
    DType d = dtypes[seed % 5];
    g.makeVars(d, 9);
    checkExhaustively(g, g.intExpr(d, 4), out);
  }
  WARN(out.expressions << " expressions, " << out.changed << " simplified, " << out.compared << " points compared");
  REQUIRE(out.changed > out.expressions / 4);
}
