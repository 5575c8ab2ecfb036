//===- RewriteTest.cpp - Patterns and graph_rewrite semantics ---*- C++ -*-===//
// Matching (commutativity, repeated names, dclass), dispatch, fixed points, both orders, memoization, limits.
//===----------------------------------------------------------------------===//

#include "IR/Rewrite.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace tgc;

namespace {

const UOp *takeX(const Match &m) { return m["x"]; }

struct Ints {
  Context ctx;
  const UOp *c(int64_t v) { return ctx.constInt(dt::I32, v); }
  const UOp *var(int64_t end, int id) { return ctx.make(Op::Range, dt::I32, {c(end)}, Arg::tuple({id, "loop"})); }
};

} // namespace

TEST_CASE_METHOD(Ints, "commutative patterns match either operand order", "[pattern]") {
  UPat p = UPat::var("x") + 0;
  const UOp *r = var(4, 0);
  Match m;
  m.reset(nullptr, nullptr);
  REQUIRE(matchPattern(p, ctx.alu(Op::Add, {r, c(0)}), m));
  REQUIRE(m["x"] == r);
  m.reset(nullptr, nullptr);
  REQUIRE(matchPattern(p, ctx.alu(Op::Add, {c(0), r}), m));
  REQUIRE(m["x"] == r);
  m.reset(nullptr, nullptr);
  REQUIRE_FALSE(matchPattern(UPat::var("x") - 0, ctx.alu(Op::Sub, {c(0), r}), m)); // sub is not commutative
}

TEST_CASE_METHOD(Ints, "a name used twice must bind the same node", "[pattern]") {
  UPat p = UPat::var("x") - UPat::var("x");
  const UOp *a = var(4, 0);
  const UOp *b = var(4, 1);
  Match m;
  m.reset(nullptr, nullptr);
  REQUIRE(matchPattern(p, ctx.alu(Op::Sub, {a, a}), m));
  m.reset(nullptr, nullptr);
  REQUIRE_FALSE(matchPattern(p, ctx.alu(Op::Sub, {a, b}), m));
}

TEST_CASE_METHOD(Ints, "dtype classes and constant values restrict matches", "[pattern]") {
  Match m;
  m.reset(nullptr, nullptr);
  REQUIRE_FALSE(matchPattern(UPat::var("x", DClass::Float), c(1), m));
  m.reset(nullptr, nullptr);
  REQUIRE(matchPattern(UPat::cnst(1), ctx.constant(dt::F32, 1.0), m));
  m.reset(nullptr, nullptr);
  REQUIRE(matchPattern(UPat::cnst(0), ctx.constant(dt::F32, -0.0), m));
  m.reset(nullptr, nullptr);
  REQUIRE_FALSE(matchPattern(UPat::cnstExact(0.0), ctx.constant(dt::F32, -0.0), m));
}

TEST_CASE_METHOD(Ints, "graph_rewrite reaches a fixed point through chains of rules", "[rewrite]") {
  // neg(neg(x)) -> x, applied to neg^6(x), leaves x; neg^5(x) leaves neg(x)
  PatternMatcher pm("test", {{UPat::op(Op::Neg, {UPat::op(Op::Neg, {UPat::var("x")})}), takeX, "-(-x) -> x"}});
  const UOp *x = var(4, 0);
  const UOp *n = x;
  for (int i = 0; i < 6; ++i)
    n = ctx.make(Op::Neg, dt::I32, {n});
  REQUIRE(graphRewrite(n, pm) == x);
  REQUIRE(graphRewrite(ctx.make(Op::Neg, dt::I32, {n}), pm) == ctx.make(Op::Neg, dt::I32, {x}));
}

TEST_CASE_METHOD(Ints, "results are rewritten again: x+0 inside a new node", "[rewrite]") {
  // rule 1: mul(x, 2) -> add(x, x) ; rule 2: add(x, 0) -> x
  PatternMatcher pm("test", {
                                {UPat::var("x") * 2,
                                 [](const Match &m) { return m.ctx().alu(Op::Add, {m["x"], m["x"]}); }, "x*2 -> x+x"},
                                {UPat::var("x") + 0, takeX, "x+0 -> x"},
                            });
  const UOp *x = var(4, 0);
  const UOp *e = ctx.alu(Op::Mul, {ctx.alu(Op::Add, {x, c(0)}), c(2)});
  REQUIRE(graphRewrite(e, pm) == ctx.alu(Op::Add, {x, x}));
}

TEST_CASE_METHOD(Ints, "operands-first and node-first orders differ", "[rewrite]") {
  // neg(x) -> x, except when x is itself a neg: node-first sees the outer neg before its operand is rewritten.
  PatternMatcher pm("test", {{UPat::op(Op::Neg, {UPat::var("x")}),
                              [](const Match &m) -> const UOp * { return m["x"]->op() == Op::Neg ? nullptr : m["x"]; },
                              "neg(x) -> x unless x is a neg"}});
  const UOp *x = var(4, 0);
  const UOp *nn = ctx.make(Op::Neg, dt::I32, {ctx.make(Op::Neg, dt::I32, {x})});
  // operands first: inner neg(x) -> x, then outer neg(x) -> x
  REQUIRE(graphRewrite(nn, pm) == x);
  // node first: the outer neg sees a neg operand and declines; then the inner one rewrites to x
  RewriteOptions pre;
  pre.order = RewriteOrder::NodeFirst;
  REQUIRE(graphRewrite(nn, pm, pre) == ctx.make(Op::Neg, dt::I32, {x}));
}

TEST_CASE_METHOD(Ints, "shared nodes are rewritten once", "[rewrite]") {
  static int calls = 0;
  calls = 0;
  PatternMatcher pm("test", {{UPat::op(Op::Neg, {UPat::var("x")}),
                              [](const Match &m) -> const UOp * {
                                ++calls;
                                return m["x"];
                              },
                              "neg(x) -> x"}});
  const UOp *shared = ctx.make(Op::Neg, dt::I32, {var(4, 0)});
  const UOp *e = ctx.alu(Op::Add, {ctx.alu(Op::Mul, {shared, c(3)}), ctx.alu(Op::Mul, {shared, c(5)})});
  graphRewrite(e, pm);
  REQUIRE(calls == 1);
}

TEST_CASE_METHOD(Ints, "rule statistics count hits", "[rewrite]") {
  PatternMatcher pm("test", {{UPat::var("x") + 0, takeX, "x+0 -> x"}, {UPat::var("x") * 1, takeX, "x*1 -> x"}});
  const UOp *x = var(4, 0);
  graphRewrite(ctx.alu(Op::Add, {ctx.alu(Op::Add, {x, c(0)}), c(0)}), pm);
  REQUIRE(pm.stats()[0].hits == 2);
  REQUIRE(pm.stats()[1].hits == 0);
  REQUIRE(std::find(PatternMatcher::all().begin(), PatternMatcher::all().end(), &pm) != PatternMatcher::all().end());
}

TEST_CASE_METHOD(Ints, "preservesTypes declines rewrites that change dtype or shape", "[rewrite]") {
  PatternMatcher pm("test", {{UPat::var("x") + 0, takeX, "x+0 -> x"}}, /*preservesTypes=*/true);
  const UOp *s = ctx.constInt(dt::I32, 5, Shape{});
  const UOp *zeros = ctx.constInt(dt::I32, 0, Shape{2, 2});
  const UOp *e = ctx.make(Op::Add, dt::I32, {s, zeros}, Arg(), Shape{2, 2});
  REQUIRE(graphRewrite(e, pm) == e); // x has shape [] but the add has [2, 2]
}

TEST_CASE_METHOD(Ints, "substitute replaces nodes and rebuilds users", "[rewrite]") {
  const UOp *x = var(4, 0);
  const UOp *y = var(8, 1);
  const UOp *e = ctx.alu(Op::Mul, {ctx.alu(Op::Add, {x, c(1)}), x});
  REQUIRE(substitute(e, {{x, y}}) == ctx.alu(Op::Mul, {ctx.alu(Op::Add, {y, c(1)}), y}));
}

TEST_CASE_METHOD(Ints, "a rule that never stops hits the limit and names itself", "[rewrite]") {
  // x -> x+1 forever. Run in a child process: the rewriter reports an internal error and aborts.
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGABRT, SIG_DFL); // let the child die of the abort instead of Catch reporting it
    dup2(fds[1], 2);
    PatternMatcher pm(
        "grow",
        {{UPat::any({Op::Range}, "x"),
          [](const Match &m) { return m.ctx().alu(Op::Add, {m["x"], m.ctx().constInt(dt::I32, 1)}); }, "x -> x+1"}});
    graphRewrite(var(4, 0), pm);
    _exit(0);
  }
  close(fds[1]);
  std::string err;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0)
    err.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE_THAT(err, Catch::Contains("rewrite with 'grow' did not terminate"));
  REQUIRE_THAT(err, Catch::Contains("x -> x+1"));
}

namespace {
int gCalls = 0;
const UOp *countedTakeX(const Match &m) {
  ++gCalls;
  return m["x"];
}
} // namespace

TEST_CASE_METHOD(Ints, "a rewrite memo gives the same results without redoing shared subgraphs", "[rewrite]") {
  PatternMatcher pm("test", {{UPat::var("x") + 0, countedTakeX, "x+0 -> x"}});
  const UOp *r = var(4, 0);
  const UOp *inner = ctx.alu(Op::Add, {r, c(0)}); // r+0
  const UOp *a = ctx.alu(Op::Mul, {inner, c(3)}); // (r+0)*3
  const UOp *b = ctx.alu(Op::Sub, {inner, c(1)}); // (r+0)-1
  RewriteOptions opts;
  opts.memo = &ctx.memo(&pm);
  gCalls = 0;
  REQUIRE(graphRewrite(a, pm, opts) == graphRewrite(a, pm));
  int fresh = gCalls;
  gCalls = 0;
  REQUIRE(graphRewrite(a, pm, opts) == graphRewrite(a, pm, opts)); // both from the memo
  REQUIRE(gCalls == 0);
  REQUIRE(graphRewrite(b, pm, opts) == ctx.alu(Op::Sub, {r, c(1)}));
  REQUIRE(gCalls == 0); // r+0 was finished by the first call
  REQUIRE(fresh == 2);  // once with the memo, once without
  REQUIRE(&ctx.memo(&pm) == opts.memo);
  REQUIRE(&ctx.memo(&fresh) != opts.memo); // one memo per key
}
