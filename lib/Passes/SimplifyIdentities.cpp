//===- SimplifyIdentities.cpp - Algebraic identities and canonical order -*- C++ -*-===//
// Rules that hold for every value of the dtype they name, with IEEE floats treated exactly (-0.0, NaN, inf).
//===----------------------------------------------------------------------===//
//
// Float rules are only those exact in IEEE arithmetic: x*1 -> x holds, x+0 -> x does not (-0.0 + 0.0 is +0.0, so
// only x + -0.0 -> x), x*0 -> 0 does not (NaN, inf, and the sign of zero), x-x -> 0 does not (inf - inf is NaN).

#include "Passes/SimplifyRules.h"

#include <cmath>

namespace tgc::simplify {
namespace {

using P = UPat;
const P x = P::var("x");
const P y = P::var("y");
const P c = P::cvar("c");

P ints(P p) { return p.dclass(DClass::Int); }
P floats(P p) { return p.dclass(DClass::Float); }
P bools(P p) { return p.dclass(DClass::Bool); }

const UOp *takeX(const Match &m) { return m["x"]; }
const UOp *zero(const Match &m) { return m.ctx().constLikeInt(m.root(), 0); }
const UOp *one(const Match &m) { return m.ctx().constLikeInt(m.root(), 1); }
/// x / ±0 -> x * ±inf: equal for every x (±inf, or NaN for a zero or NaN x). Besides, LLVM 19's SelectionDAG
/// treats a lane 0.0 / 0.0 of a vector division by a constant zero as undefined and drops a select mask that guards
/// it (a padded division by zero came out NaN where the pad is 0); a multiply does not trip it.
const UOp *divideByZero(const Match &m) {
  const UOp *c = m["c"];
  double inf = std::signbit(c->constDouble()) ? -INFINITY : INFINITY;
  return m.ctx().alu(Op::Mul, {m["x"], m.ctx().constLike(c, inf)});
}

const UOp *falseConst(const Match &m) { return m.ctx().constLikeInt(m.root(), 0); }
const UOp *trueConst(const Match &m) { return m.ctx().constLikeInt(m.root(), 1); }

/// Swap the operands of a commutative op into canonical order (integer add is ordered by the sum normal form).
const UOp *canonicalOrder(const Match &m) {
  const UOp *u = m.root();
  if (u->numSrc() != 2 || (u->op() == Op::Add && u->dtype().isInt()))
    return nullptr;
  if (!leftOf(u->src(1), u->src(0)))
    return nullptr;
  const UOp *swapped[] = {u->src(1), u->src(0)};
  return u->ctx().withSrc(u, swapped);
}

const UOp *notX(const Match &m) {
  const UOp *b = m["x"];
  return m.ctx().alu(Op::Cmpne, {b, m.ctx().constLikeInt(b, 1)});
}

/// where(c, a, b) with a constant condition
const UOp *whereConst(const Match &m) {
  const UOp *u = m.root();
  return u->src(0)->constInt() ? u->src(1) : u->src(2);
}

/// max(x, y) -> x when x >= y everywhere (and symmetrically)
const UOp *maxByRange(const Match &m) {
  const UOp *a = m["x"];
  const UOp *b = m["y"];
  if (!a->hasRange() || !b->hasRange())
    return nullptr;
  if (a->vmin() >= b->vmax())
    return a;
  if (b->vmin() >= a->vmax())
    return b;
  return nullptr;
}

/// (x op c1) op c2 -> x op (c1 op c2)  for max, and, or, xor (integer add and mul merge in sums)
const UOp *twoConstants(const Match &m) {
  const UOp *u = m.root();
  const UOp *inner = u->src(0);
  if (inner->op() != u->op())
    return nullptr;
  Context &ctx = m.ctx();
  return ctx.alu(u->op(), {inner->src(0), ctx.alu(u->op(), {inner->src(1), u->src(1)})});
}

/// cast(x) to x's own dtype, bitcast to its own dtype
const UOp *castToSelf(const Match &m) {
  const UOp *u = m.root();
  return u->src(0)->dtype() == u->dtype() ? u->src(0) : nullptr;
}

/// Every value of `from` is exactly a value of `to`.
bool losslessCast(DType from, DType to) {
  if (from.isBool())
    return to.isInt() || to.isFloat();
  if (from.isInt() && to.isInt()) {
    if (from.isIndex() || to.isIndex())
      return to.isIndex() && from.bits() <= 64;
    if (from.isUnsigned() == to.isUnsigned())
      return to.bits() >= from.bits();
    return !to.isUnsigned() && to.bits() > from.bits();
  }
  if (from.isFloat() && to.isFloat()) {
    if (from.scalar() == Scalar::BF16)
      return to.scalar() == Scalar::F32 || to.scalar() == Scalar::F64;
    if (from.scalar() == Scalar::F16)
      return to.scalar() == Scalar::F32 || to.scalar() == Scalar::F64;
    return to.bits() >= from.bits();
  }
  if (from.isInt() && to.isFloat()) {
    int mantissa = to.scalar() == Scalar::F64   ? 53
                   : to.scalar() == Scalar::F32 ? 24
                   : to.scalar() == Scalar::F16 ? 11
                                                : 8;
    return from.bits() + (from.isSigned() ? 0 : 1) <= mantissa + 1 && !from.isIndex();
  }
  return false;
}

/// cast_b(cast_a(x)) -> x  when x has dtype b and a holds every value of b
const UOp *castRoundTrip(const Match &m) {
  const UOp *outer = m.root();
  const UOp *inner = outer->src(0);
  const UOp *v = inner->src(0);
  if (v->dtype() != outer->dtype() || !losslessCast(v->dtype(), inner->dtype()))
    return nullptr;
  return v;
}

/// bitcast(bitcast(x)) -> bitcast(x), or x when it returns to x's dtype
const UOp *bitcastTwice(const Match &m) {
  const UOp *outer = m.root();
  const UOp *v = outer->src(0)->src(0);
  if (v->dtype() == outer->dtype())
    return v;
  return outer->ctx().make(Op::Bitcast, outer->dtype(), {v}, Arg(),
                           outer->hasShape() ? std::optional<Shape>(outer->shapeVec()) : std::nullopt);
}

const UOp *allOnesAnd(const Match &m) {
  const UOp *k = m["c"];
  return k->constInt() == -1 || (k->dtype().isUnsigned() && wrapInt(-1, k->dtype()) == k->constInt()) ? m["x"]
                                                                                                      : nullptr;
}

const UOp *dropTrueValid(const Match &m) {
  const UOp *u = m.root();
  const UOp *src[] = {m["b"], m["i"]};
  return u->ctx().make(Op::Index, u->dtype(), src, u->arg());
}

} // namespace

std::vector<Rule> identityRules() {
  OpSet commutative = OpSet::withFlag(opflag::Comm);
  OpSet idempotent = OpSet::withFlag(opflag::Idem);
  OpSet chained = {Op::Max, Op::And, Op::Or, Op::Xor};
  P t = P::cnst(1, DClass::Bool);
  P f = P::cnst(0, DClass::Bool);
  return {
      // canonical order first, so every later rule sees constants on the right
      {P::any(commutative), canonicalOrder, "c + x -> x + c  (commutative operands in canonical order)"},
      // integers
      {ints(x * 0), zero, "x*0 -> 0  (integers)"},
      {ints(x - x), zero, "x-x -> 0  (integers)"},
      {ints(x % 1), zero, "x%1 -> 0"},
      {ints(x / 1), takeX, "x//1 -> x"},
      {ints(x % x), zero, "x%x -> 0  (x != 0 is required for the original to be defined)"},
      {ints(x / x), one, "x//x -> 1  (likewise)"},
      {ints(P::binary(Op::Floormod, x, x)), zero, "x floormod x -> 0"},
      {ints(P::binary(Op::Floordiv, x, x)), one, "x floordiv x -> 1"},
      {ints(x ^ x), zero, "x^x -> 0"},
      {ints(x & 0), zero, "x&0 -> 0"},
      {ints(x | 0), takeX, "x|0 -> x"},
      {ints(x ^ 0), takeX, "x^0 -> x"},
      {ints(x & c), allOnesAnd, "x&-1 -> x"},
      {ints(P::binary(Op::Shl, x, P::cnst(0))), takeX, "x<<0 -> x"},
      {ints(P::binary(Op::Shr, x, P::cnst(0))), takeX, "x>>0 -> x"},
      // every dtype
      {x * 1, takeX, "x*1 -> x"},
      {P(idempotent, {x, x}), takeX, "max(x, x) -> x ; x&x -> x ; x|x -> x"},
      {P::op(Op::Neg, {P::op(Op::Neg, {x})}), takeX, "-(-x) -> x"},
      {P::op(Op::Where, {P::var("s"), x, x}), takeX, "where(s, x, x) -> x"},
      {P::op(Op::Where, {P::any({Op::Const}), x, y}), whereConst, "where(true, x, y) -> x ; where(false, x, y) -> y"},
      {P::binary(Op::Max, x, y), maxByRange, "max(x, y) -> x  when vmin(x) >= vmax(y)"},
      {P(chained, {P(chained, {x, P::cvar("c1")}), c}), twoConstants,
       "max(max(x, 3), 5) -> max(x, 5) ; (x & 12) & 5 -> x & 4  (also or, xor)"},
      {P::op(Op::Cmplt, {x, x}), falseConst, "x<x -> false"},
      {P(OpSet{Op::Cmpne}, {P::var("x", DClass::IntOrBool), P::var("x", DClass::IntOrBool)}), falseConst,
       "x!=x -> false  (integers and bools; NaN != NaN)"},
      {P(OpSet{Op::Cmpeq}, {P::var("x", DClass::IntOrBool), P::var("x", DClass::IntOrBool)}), trueConst,
       "x==x -> true  (integers and bools)"},
      // floats: only exact identities
      {floats(x + P::cnstExact(-0.0)), takeX, "x + -0.0 -> x"},
      {floats(x - P::cnstExact(0.0)), takeX, "x - 0.0 -> x"},
      {floats(P::binary(Op::Fdiv, x, P::cnst(1))), takeX, "x / 1.0 -> x"},
      {floats(P::binary(Op::Fdiv, x, P::cnst(0).named("c"))), divideByZero, "x / ±0.0 -> x * ±inf"},
      // bools
      {bools(x & t), takeX, "x & true -> x"},
      {bools(x & f), falseConst, "x & false -> false"},
      {bools(x | f), takeX, "x | false -> x"},
      {bools(x | t), trueConst, "x | true -> true"},
      {bools(x ^ f), takeX, "x ^ false -> x"},
      {bools(x ^ x), falseConst, "x ^ x -> false"},
      {P(OpSet{Op::Cmpne}, {P::var("x", DClass::Bool), f}), takeX, "x != false -> x"},
      {P(OpSet{Op::Cmpeq}, {P::var("x", DClass::Bool), t}), takeX, "x == true -> x"},
      {P(OpSet{Op::Cmpne}, {P(OpSet{Op::Cmpne}, {P::var("x", DClass::Bool), t}), t}), takeX,
       "(x != true) != true -> x  (double not)"},
      {P::op(Op::Where, {P::var("x", DClass::Bool), t, f}), takeX, "where(x, true, false) -> x"},
      {P::op(Op::Where, {P::var("x", DClass::Bool), f, t}), notX, "where(x, false, true) -> x != true"},
      // memory
      {P::op(Op::Index, {P::var("b"), P::var("i"), t}), dropTrueValid, "index(b, i, true) -> index(b, i)"},
      // casts
      {P(OpSet{Op::Cast, Op::Bitcast}, {x}), castToSelf, "cast(x) -> x  (to its own dtype)"},
      {P::op(Op::Cast, {P::op(Op::Cast, {x})}), castRoundTrip, "cast_b(cast_a(x)) -> x  (x: b, a holds all of b)"},
      {P::op(Op::Bitcast, {P::op(Op::Bitcast, {x})}), bitcastTwice, "bitcast(bitcast(x)) -> bitcast(x)"},
  };
}

} // namespace tgc::simplify
