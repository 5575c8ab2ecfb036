//===- UOpTest.cpp - Hash-consing, identity and graph walking ---*- C++ -*-===//
// Structurally equal nodes are one pointer; replacing nothing returns the node itself.
//===----------------------------------------------------------------------===//

#include "IR/UOp.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace tgc;

TEST_CASE("equal nodes are the same pointer", "[uop]") {
  Context ctx;
  const UOp *a = ctx.constInt(dt::I32, 3);
  const UOp *b = ctx.constInt(dt::I32, 3);
  REQUIRE(a == b);
  const UOp *x = ctx.alu(Op::Add, {a, b});
  const UOp *y = ctx.alu(Op::Add, {a, b});
  REQUIRE(x == y);
  REQUIRE(ctx.numNodes() == 2);
}

TEST_CASE("each field is part of the identity", "[uop]") {
  Context ctx;
  const UOp *i32 = ctx.constInt(dt::I32, 3);
  REQUIRE(ctx.constInt(dt::I64, 3) != i32);               // dtype
  REQUIRE(ctx.constInt(dt::I32, 4) != i32);               // arg
  REQUIRE(ctx.constInt(dt::I32, 3, Shape{}) != i32);      // shape (rank 0 vs unshaped)
  REQUIRE(ctx.constInt(dt::I32, 3, Shape{2}) != ctx.constInt(dt::I32, 3, Shape{3}));
  REQUIRE(ctx.withTag(i32, Arg(1)) != i32);               // tag
  REQUIRE(ctx.alu(Op::Sub, {i32, ctx.constInt(dt::I32, 4)}) != ctx.alu(Op::Sub, {ctx.constInt(dt::I32, 4), i32}));
}

TEST_CASE("float constants keep -0.0 and NaN distinct", "[uop]") {
  Context ctx;
  REQUIRE(ctx.constant(dt::F32, 0.0) != ctx.constant(dt::F32, -0.0));
  double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(ctx.constant(dt::F32, nan) == ctx.constant(dt::F32, -nan));
  REQUIRE(ctx.constant(dt::F32, nan) != ctx.constant(dt::F32, 0.0));
}

TEST_CASE("constants are converted to their dtype", "[uop]") {
  Context ctx;
  REQUIRE(ctx.constInt(dt::I8, 200)->constInt() == -56);
  REQUIRE(ctx.constInt(dt::U8, -1)->constInt() == 255);
  REQUIRE(ctx.constant(dt::F32, 0.1)->constDouble() == double(0.1f));
  REQUIRE(ctx.constant(dt::F16, 65520.0)->constDouble() == std::numeric_limits<double>::infinity());
  REQUIRE(ctx.constant(dt::BF16, 1.00390625)->constDouble() == 1.0); // ties to even
  REQUIRE(ctx.constant(dt::Bool, 2.0)->arg().getBool());
}

TEST_CASE("with* returns the node itself when nothing changes", "[uop]") {
  Context ctx;
  const UOp *a = ctx.constInt(dt::I32, 1);
  const UOp *b = ctx.constInt(dt::I32, 2);
  const UOp *s = ctx.alu(Op::Add, {a, b});
  const UOp *same[] = {a, b};
  REQUIRE(ctx.withSrc(s, same) == s);
  REQUIRE(ctx.withArg(s, Arg()) == s);
  REQUIRE(ctx.withDType(s, dt::I32) == s);
  const UOp *swapped[] = {b, a};
  REQUIRE(ctx.withSrc(s, swapped) != s);
}

TEST_CASE("structural hashes do not depend on the context or pointers", "[uop]") {
  auto build = [](Context &ctx) {
    const UOp *x = ctx.make(Op::Input, dt::F32, {}, Arg("x"), Shape{4});
    return ctx.alu(Op::Mul, {x, ctx.constant(dt::F32, 2.0, Shape{})});
  };
  Context c1;
  Context c2;
  c2.constInt(dt::I64, 99); // shift creation order and addresses
  REQUIRE(build(c1)->hash() == build(c2)->hash());
}

TEST_CASE("toposort puts operands first and handles deep graphs", "[uop]") {
  Context ctx;
  const UOp *x = ctx.constInt(dt::I32, 1);
  const UOp *acc = x;
  for (int i = 0; i < 200000; ++i)
    acc = ctx.make(Op::Neg, dt::I32, {acc});
  std::vector<const UOp *> order = toposort(acc);
  REQUIRE(order.size() == 200001);
  REQUIRE(order.front() == x);
  REQUIRE(order.back() == acc);
}

TEST_CASE("toposort visits shared nodes once", "[uop]") {
  Context ctx;
  const UOp *x = ctx.constInt(dt::I32, 1);
  const UOp *y = ctx.alu(Op::Add, {x, x});
  const UOp *z = ctx.alu(Op::Mul, {y, y});
  auto order = toposort(z);
  REQUIRE(order == std::vector<const UOp *>{x, y, z});
}

TEST_CASE("value ranges follow interval arithmetic", "[uop][range]") {
  Context ctx;
  const UOp *r = ctx.make(Op::Range, dt::Index, {ctx.constInt(dt::Index, 10)}, Arg::tuple({0, "loop"}));
  REQUIRE(r->vmin() == 0);
  REQUIRE(r->vmax() == 9);
  const UOp *e = ctx.alu(Op::Add, {ctx.alu(Op::Mul, {r, ctx.constInt(dt::Index, 4)}), ctx.constInt(dt::Index, 3)});
  REQUIRE(e->vmin() == 3);
  REQUIRE(e->vmax() == 39);
  const UOp *d = ctx.alu(Op::Idiv, {e, ctx.constInt(dt::Index, 4)});
  REQUIRE(d->vmin() == 0);
  REQUIRE(d->vmax() == 9);
  const UOp *m = ctx.alu(Op::Mod, {r, ctx.constInt(dt::Index, 4)});
  REQUIRE(m->vmin() == 0);
  REQUIRE(m->vmax() == 3);
  const UOp *lt = ctx.alu(Op::Cmplt, {r, ctx.constInt(dt::Index, 10)});
  REQUIRE((lt->vmin() == 1 && lt->vmax() == 1));
}

TEST_CASE("ranges that could wrap fall back to the dtype range", "[uop][range]") {
  Context ctx;
  const UOp *r = ctx.make(Op::Range, dt::I8, {ctx.constInt(dt::I8, 100)}, Arg::tuple({0, "loop"}));
  const UOp *big = ctx.alu(Op::Mul, {r, ctx.constInt(dt::I8, 2)});
  REQUIRE(big->vmin() == -128);
  REQUIRE(big->vmax() == 127);
  const UOp *u = ctx.make(Op::Range, dt::U64, {ctx.constInt(dt::U64, 100)}, Arg::tuple({0, "loop"}));
  REQUIRE_FALSE(u->hasRange());
}
