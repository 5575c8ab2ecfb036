//===- SimplifyReduce.cpp - Reduces that pick one value ---------*- C++ -*-===//
// A sum over a range of a value selected where the range equals an index (a one-hot sum) is that one value.
//===----------------------------------------------------------------------===//
//
// gather and embedding decompose into `sum_r where(i == r, x[r], -0.0)` over the r of an arange, tinygrad's
// formulation: one pass over the whole axis for every value looked up. At most one r matches (the cast of r to
// i's dtype is one-to-one on the range), and the other terms are the sum's start, -0.0 (0 for integers), which
// adds exactly. So the sum is x[i] where 0 <= i < n and -0.0 elsewhere, and the loop disappears: an embedding
// reads one row per token instead of the whole table. The index is clamped into the range before it addresses
// anything, so no load leaves its buffer whatever the index holds.

#include "IR/Eval.h"
#include "IR/Rewrite.h"
#include "Passes/SimplifyRules.h"

namespace tgc::simplify {
namespace {

/// Whether `x` is range r of n trips as an integer of x's dtype, one-to-one (r itself, or a cast that holds n-1).
bool isRangeValue(const UOp *x, const UOp *r, int64_t n) {
  if (x == r)
    return true;
  return x->op() == Op::Cast && x->src(0) == r && x->dtype().isInt() && n - 1 <= dtypeMax(x->dtype());
}

/// sum_r where(i == r, y, z) -> where(0 <= i < n, y[r := i], z)  (r: the sum's only range, of n trips; z: the sum's
/// start; i: an integer computed without r)
const UOp *oneHotSum(const Match &m) {
  const UOp *u = m.root();
  if (u->arg().getOp() != Op::Add || u->numSrc() != 2 || u->dtype().isVector())
    return nullptr;
  const UOp *r = u->src(1);
  const UOp *w = u->src(0);
  if (r->op() != Op::Range || !r->src(0)->isConst() || w->op() != Op::Where || w->src(0)->op() != Op::Cmpeq)
    return nullptr;
  const UOp *z = w->src(2);
  if (!z->isConst() || z->arg() != reduceIdentity(Op::Add, u->dtype()))
    return nullptr;
  int64_t n = r->src(0)->constInt();
  if (n <= 0) // the empty-reduce rule's case
    return nullptr;
  const UOp *eq = w->src(0);
  const UOp *i = isRangeValue(eq->src(1), r, n) ? eq->src(0) : isRangeValue(eq->src(0), r, n) ? eq->src(1) : nullptr;
  if (!i || i == r || !i->dtype().isInt() || i->dtype().isVector() || dependsOn(i, r))
    return nullptr;
  Context &ctx = u->ctx();
  // i < n, unless every value of i's dtype is (n = 256 for u8: the constant 256 would wrap to 0)
  const UOp *inside =
      n <= dtypeMax(i->dtype()) ? ctx.alu(Op::Cmplt, {i, ctx.constLikeInt(i, n)}) : ctx.constInt(dt::Bool, 1);
  if (i->dtype().isSigned())
    inside = ctx.alu(Op::And, {ctx.alu(Op::Cmplt, {ctx.constLikeInt(i, -1), i}), inside});
  const UOp *at = ctx.alu(Op::Where, {inside, ctx.cast(i, dt::Index), ctx.constInt(dt::Index, 0)});
  const UOp *picked = substitute(w->src(1), {{r, at}});
  return ctx.alu(Op::Where, {inside, picked, z});
}

} // namespace

std::vector<Rule> reduceRules() {
  return {
      {UPat::any({Op::Reduce}), oneHotSum, "sum_r where(i == r, y, z) -> where(0 <= i < n, y[r := i], z)"},
  };
}

} // namespace tgc::simplify
