//===- SimplifyWhere.cpp - Selects and booleans ------------------*- C++ -*-===//
// Merges nested and paired selects, folds a condition inside its own branches, and simplifies boolean logic.
//===----------------------------------------------------------------------===//
//
// `!a` is written `a != true` (what the bool rules of SimplifyIdentities.cpp produce). Selecting is exact in every
// dtype, so these rules hold for floats too, except where an add would meet a -0.0 (the paired-select sums of
// floats need constants on both sides). A rule that moves an op into both branches evaluates it where the original
// did not, so it applies only to ops defined for every operand (no division, remainder or shift).

#include "IR/Rewrite.h"
#include "Passes/SimplifyRules.h"

#include <map>
#include <unordered_set>

namespace tgc::simplify {
namespace {

using P = UPat;
using i128 = __int128;

const UOp *where(const UOp *c, const UOp *t, const UOp *f) { return c->ctx().alu(Op::Where, {c, t, f}); }
const UOp *notOf(const UOp *b) { return b->ctx().alu(Op::Cmpne, {b, b->ctx().constLikeInt(b, 1)}); }

bool isNot(const UOp *u, const UOp *of) {
  return u->op() == Op::Cmpne && u->src(0) == of && u->src(1)->isConst() && u->src(0)->dtype().element().isBool() &&
         u->src(1)->constInt() == 1;
}

/// where(a, where(b, c, d), d) -> where(a & b, c, d)
const UOp *nestedSameFalse(const Match &m) { return where(m.ctx().alu(Op::And, {m["a"], m["b"]}), m["c"], m["d"]); }

/// where(a, c, where(b, c, d)) -> where(a | b, c, d)
const UOp *nestedSameTrue(const Match &m) { return where(m.ctx().alu(Op::Or, {m["a"], m["b"]}), m["c"], m["d"]); }

/// where(a != true, t, f) -> where(a, f, t)
const UOp *notCondition(const Match &m) { return where(m["a"], m["f"], m["t"]); }

/// p - q as exact integer coefficients by term (the constant under nullptr); nullopt when a side may wrap.
std::optional<std::map<const UOp *, i128>> difference(const UOp *p, const UOp *q) {
  LinearSum sp = decompose(p);
  LinearSum sq = decompose(q);
  if (!exactRange(sp) || !exactRange(sq))
    return std::nullopt;
  std::map<const UOp *, i128> d;
  d[nullptr] = i128(sp.constant) - sq.constant;
  for (const LinearSum::Term &t : sp.terms)
    d[t.base] += t.coeff;
  for (const LinearSum::Term &t : sq.terms)
    d[t.base] -= t.coeff;
  std::erase_if(d, [](const auto &e) { return e.second == 0; });
  return d;
}

/// d1 == g * d2 for some g > 0
bool positiveMultiple(const std::map<const UOp *, i128> &d1, const std::map<const UOp *, i128> &d2) {
  if (d1.size() != d2.size() || d2.empty())
    return false;
  const auto &[base, c2] = *d2.begin();
  auto it = d1.find(base);
  if (it == d1.end() || it->second % c2 != 0 || it->second / c2 <= 0)
    return false;
  i128 g = it->second / c2;
  for (const auto &[b, c] : d2) {
    auto e = d1.find(b);
    if (e == d1.end() || e->second != g * c)
      return false;
  }
  return true;
}

/// where(a < b, y, x) -> max(x, y)  when a < b says x < y: a - b is a positive multiple of x - y (the comparison
/// rules may have rewritten x < y, e.g. (i - 4 < 0) to (i < 4)). Integers only: max has no NaN or -0.0 there.
const UOp *selectMax(const Match &m) {
  const UOp *x = m["x"];
  const UOp *y = m["y"];
  if (m["a"] != x || m["b"] != y) {
    auto dxy = difference(x, y);
    auto dab = difference(m["a"], m["b"]);
    if (!dxy || !dab || !positiveMultiple(*dxy, *dab))
      return nullptr;
  }
  return m.ctx().alu(Op::Max, {x, y});
}

/// Whether `n` computes each element (each lane) from the same element of its operands, so that a value known at an
/// element stays known through it. Movement ops, tensor reduces, composites, gep and vectorize, and bitcasts (which
/// may change the lane count) read other elements; loads read memory.
bool sameElement(const UOp *n) {
  static const OpSet same = group::alu() | OpSet{Op::Cast,    Op::Const,     Op::Input,  Op::Weight,     Op::Range,
                                                 Op::Special, Op::DefineVar, Op::Reduce, Op::Contiguous, Op::Copy};
  return same.contains(n->op());
}

/// Whether `u` uses `x` through elementwise ops only, looking at no more than a few nodes: nullopt when it gives up.
std::optional<bool> smallUse(const UOp *u, const UOp *x) {
  constexpr size_t limit = 64;
  std::vector<const UOp *> stack = {u};
  std::unordered_set<const UOp *> seen = {u};
  bool found = false;
  while (!stack.empty()) {
    const UOp *n = stack.back();
    stack.pop_back();
    if (!sameElement(n) || seen.size() > limit)
      return std::nullopt; // flip(c) is c at another element; a load's address belongs to the memory passes
    found = found || n == x;
    for (const UOp *s : n->src())
      if (seen.insert(s).second)
        stack.push_back(s);
  }
  return found;
}

/// where(c, t, f): c is true wherever t is chosen and false wherever f is, so c folds inside them.
const UOp *conditionInBranches(const Match &m) {
  const UOp *c = m["c"];
  const UOp *t = m["t"];
  const UOp *f = m["f"];
  if (c->isConst())
    return nullptr;
  std::optional<bool> inT = smallUse(t, c);
  std::optional<bool> inF = smallUse(f, c);
  if (!inT || !inF || (!*inT && !*inF))
    return nullptr;
  Context &ctx = m.ctx();
  const UOp *t2 = substitute(t, {{c, ctx.constLikeInt(c, 1)}});
  const UOp *f2 = substitute(f, {{c, ctx.constLikeInt(c, 0)}});
  if (t2 == t && f2 == f)
    return nullptr;
  return where(c, t2, f2);
}

bool totalOp(Op op) {
  static const OpSet total = {Op::Add, Op::Sub, Op::Mul,   Op::Max,   Op::And,
                              Op::Or,  Op::Xor, Op::Cmplt, Op::Cmpne, Op::Cmpeq};
  return total.contains(op);
}

/// op(where(c, t, f), where(c, tt, ff)) -> where(c, op(t, tt), op(f, ff))  when a branch pair is constant
const UOp *pairedSelects(const Match &m) {
  const UOp *u = m.root();
  const UOp *a = u->src(0);
  const UOp *b = u->src(1);
  if (!totalOp(u->op()) || a->op() != Op::Where || b->op() != Op::Where || a->src(0) != b->src(0))
    return nullptr;
  if (u->op() == Op::Add && u->dtype().isInt())
    return nullptr; // integer sums pair their selects in sumSelects
  bool trueConst = a->src(1)->isConst() && b->src(1)->isConst();
  bool falseConst = a->src(2)->isConst() && b->src(2)->isConst();
  if (!trueConst && !falseConst)
    return nullptr;
  Context &ctx = m.ctx();
  return where(a->src(0), ctx.alu(u->op(), {a->src(1), b->src(1)}), ctx.alu(u->op(), {a->src(2), b->src(2)}));
}

bool isZero(const UOp *u) { return u->isConst() && u->arg().isInt() && u->constInt() == 0; }

/// Two selects of one condition in an integer sum, with equal coefficients, become one:
///   where(c, t, f)*k + where(c, tt, ff)*k -> where(c, t + tt, f + ff)*k
/// when a branch pair is constant or each branch pair has a zero (complementary selects).
bool mergeSelectPair(LinearSum &s) {
  for (size_t i = 0; i < s.terms.size(); ++i) {
    const UOp *a = s.terms[i].base;
    if (a->op() != Op::Where)
      continue;
    for (size_t j = i + 1; j < s.terms.size(); ++j) {
      const UOp *b = s.terms[j].base;
      if (b->op() != Op::Where || b->src(0) != a->src(0) || s.terms[j].coeff != s.terms[i].coeff)
        continue;
      bool trueConst = a->src(1)->isConst() && b->src(1)->isConst();
      bool falseConst = a->src(2)->isConst() && b->src(2)->isConst();
      bool complementary = (isZero(a->src(1)) || isZero(b->src(1))) && (isZero(a->src(2)) || isZero(b->src(2)));
      if (!trueConst && !falseConst && !complementary)
        continue;
      Context &ctx = a->ctx();
      s.terms[i].base =
          where(a->src(0), ctx.alu(Op::Add, {a->src(1), b->src(1)}), ctx.alu(Op::Add, {a->src(2), b->src(2)}));
      s.terms.erase(s.terms.begin() + std::ptrdiff_t(j));
      return true;
    }
  }
  return false;
}

const UOp *sumSelects(const Match &m) {
  const UOp *u = m.root();
  LinearSum s = decompose(u);
  if (!mergeSelectPair(s))
    return nullptr;
  while (mergeSelectPair(s)) {
  }
  return rebuild(s, u);
}

/// x & !x -> false ; x | !x -> true ; x ^ !x -> true
const UOp *withItsNot(const Match &m) {
  const UOp *u = m.root();
  if (!isNot(u->src(0), u->src(1)) && !isNot(u->src(1), u->src(0)))
    return nullptr;
  return m.ctx().constLikeInt(u, u->op() != Op::And);
}

/// cast(b) compared with 0 or 1: b or !b (other constants fold by value range)
const UOp *castBoolCompare(const Match &m) {
  const UOp *u = m.root();
  const UOp *b = m["b"];
  double c = m["c"]->isConst() && m["c"]->arg().isInt() ? double(m["c"]->constInt()) : m["c"]->constDouble();
  if (c != 0 && c != 1)
    return nullptr;
  bool isTrueWhenB = (u->op() == Op::Cmpeq) == (c == 1); // == 1 and != 0 are b; == 0 and != 1 are !b
  return isTrueWhenB ? b : notOf(b);
}

} // namespace

std::vector<Rule> whereRules() {
  P a = P::var("a", DClass::Bool);
  P b = P::var("b", DClass::Bool);
  P c = P::var("c");
  P d = P::var("d");
  P t = P::var("t");
  P f = P::var("f");
  P x = P::var("x", DClass::Int);
  P y = P::var("y", DClass::Int);
  P cb = P::var("c", DClass::Bool);
  P castB = P::op(Op::Cast, {b});
  P k = P::cvar("c");
  return {
      {P::op(Op::Where, {a, P::op(Op::Where, {b, c, d}), d}), nestedSameFalse,
       "where(a, where(b, c, d), d) -> where(a & b, c, d)"},
      {P::op(Op::Where, {a, c, P::op(Op::Where, {b, c, d})}), nestedSameTrue,
       "where(a, c, where(b, c, d)) -> where(a | b, c, d)"},
      {P::op(Op::Where, {P::op(Op::Cmpne, {a, P::cnst(1, DClass::Bool)}), t, f}), notCondition,
       "where(!a, t, f) -> where(a, f, t)"},
      {P::op(Op::Where, {P::var("a", DClass::Int) < P::var("b", DClass::Int), y, x}), selectMax,
       "where(x < y, y, x) -> max(x, y) ; where(i < 4, 0, i - 4) -> max(i - 4, 0)  (integers)"},
      {P::op(Op::Where, {cb, t, f}), conditionInBranches,
       "where(c, t, f): c -> true inside t, c -> false inside f  (small elementwise branches, no memory access)"},
      {P::any(group::alu()).repeatSrc(P::any({Op::Where})), pairedSelects,
       "op(where(c, 1, x), where(c, 2, y)) -> where(c, op(1, 2), op(x, y))  (a constant pair; total ops only)"},
      {P::op(Op::Add, {x, y}), sumSelects,
       "where(c, t, 0) + where(c, 0, f) -> where(c, t, f) ; paired selects of an integer sum with a constant pair"},
      {P::op(Op::And, {a, b}), withItsNot, "x & !x -> false"},
      {P::op(Op::Or, {a, b}), withItsNot, "x | !x -> true"},
      {P::op(Op::Xor, {a, b}), withItsNot, "x ^ !x -> true"},
      {P::op(Op::Cmpne, {castB, k}), castBoolCompare, "cast(b) != 0 -> b ; cast(b) != 1 -> !b"},
      {P::op(Op::Cmpeq, {castB, k}), castBoolCompare, "cast(b) == 1 -> b ; cast(b) == 0 -> !b"},
      {P::op(Op::Cmplt, {castB, P::cnst(1)}), [](const Match &m) { return notOf(m["b"]); }, "cast(b) < 1 -> !b"},
      {P::op(Op::Cmplt, {P::cnst(0), castB}), [](const Match &m) { return m["b"]; }, "0 < cast(b) -> b"},
  };
}

} // namespace tgc::simplify
