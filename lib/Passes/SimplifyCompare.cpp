//===- SimplifyCompare.cpp - Integer comparisons by value ranges -*- C++ -*-===//
// Moves constants across a comparison, divides out common factors, and drops terms too small to matter.
//===----------------------------------------------------------------------===//
//
// For an exact integer sum S (SimplifySum.cpp) with no wraparound:
//   S + k < c      ->  S < c - k                      S + k == c  ->  S == c - k
//   g*S < c        ->  S < ceil(c / g)   (g > 0)       g*S == c    ->  S == c/g, or false when g does not divide c
//   c < g*S        ->  floor(c / g) < S
//   g*N + P < c    ->  N < c/g  when g divides c and 0 <= P < g   (P cannot carry into a multiple of g)
//   x//d < c       ->  x < c*d  (d > 0; x >= 0 for idiv)   c < x//d  ->  (c+1)*d - 1 < x
//   -S < c         ->  -c < S      -A < -B  ->  B < A      (every coefficient negative)
//   a1*x1 + a2*x2 < 1  ->  x1 + x2 < 1   (a_i > 0, x_i >= 0: both say every x_i is 0)
// Comparisons whose outcome the ranges already decide are folded by the single-value rule in Simplify.cpp.

#include "Passes/SimplifyRules.h"

#include <numeric>

namespace tgc::simplify {
namespace {

using i128 = __int128;

int64_t absv(int64_t v) { return v < 0 ? -v : v; }

int64_t gcdOf(const LinearSum &s) {
  int64_t g = 0;
  for (const LinearSum::Term &t : s.terms)
    g = std::gcd(g, absv(t.coeff));
  return g;
}

int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

bool fits(i128 v, DType d) { return v >= dtypeMin(d) && v <= dtypeMax(d); }

const UOp *constOf(const UOp *like, i128 v) { return scalarConst(like, int64_t(v)); }

/// The sum side of a comparison, its constant moved to the other side; nullopt when it may wrap.
std::optional<LinearSum> sumSide(const UOp *side) {
  LinearSum s = decompose(side);
  if (s.terms.empty() || !exactRange(s))
    return std::nullopt;
  return s;
}

const UOp *compare(Op op, const UOp *a, const UOp *b) { return a->ctx().alu(op, {a, b}); }

/// g*N + P < c  ->  N < c/g  (P = the terms with coefficient 1, 0 <= P < g, g | c)
bool dropSmallTerms(LinearSum &s, i128 &c) {
  LinearSum big{{}, 0, s.dtype};
  LinearSum small{{}, 0, s.dtype};
  for (const LinearSum::Term &t : s.terms)
    (t.coeff == 1 ? small : big).terms.push_back(t);
  if (small.terms.empty() || big.terms.empty())
    return false;
  int64_t g = std::gcd(gcdOf(big), absv(int64_t(c)));
  auto pr = exactRange(small);
  if (g <= 1 || !pr || pr->first < 0 || pr->second >= g)
    return false;
  for (LinearSum::Term &t : big.terms)
    t.coeff /= g;
  c /= g;
  s = big;
  return true;
}

bool allNegative(const LinearSum &s) {
  for (const LinearSum::Term &t : s.terms)
    if (t.coeff >= 0)
      return false;
  return !s.terms.empty();
}

LinearSum negated(LinearSum s) {
  for (LinearSum::Term &t : s.terms)
    t.coeff = -t.coeff;
  s.constant = -s.constant;
  return s;
}

/// a1*x1 + a2*x2 + ... < 1 with every a_i > 0 and x_i >= 0 holds exactly when every x_i is 0: x1 + x2 + ... < 1.
void simplex(LinearSum &s) {
  for (const LinearSum::Term &t : s.terms)
    if (t.coeff <= 0 || !t.base->hasRange() || t.base->vmin() < 0)
      return;
  for (LinearSum::Term &t : s.terms)
    t.coeff = 1;
}

/// -A < -B  ->  B < A  (both sides exact sums whose terms all have negative coefficients)
const UOp *negatedSides(const UOp *a, const UOp *b) {
  auto sa = sumSide(a);
  auto sb = sumSide(b);
  if (!sa || !sb || !allNegative(*sa) || !allNegative(*sb))
    return nullptr;
  LinearSum na = negated(*sa);
  LinearSum nb = negated(*sb);
  if (!exactRange(na) || !exactRange(nb))
    return nullptr;
  return compare(Op::Cmplt, rebuild(nb, b), rebuild(na, a));
}

const UOp *lessThanConst(const UOp *u, const UOp *lhs, i128 c) {
  auto s = sumSide(lhs);
  if (!s)
    return nullptr;
  c -= s->constant;
  s->constant = 0;
  int64_t g = gcdOf(*s);
  if (g > 1) {
    for (LinearSum::Term &t : s->terms)
      t.coeff /= g;
    if (c > INT64_MAX || c < INT64_MIN)
      return nullptr;
    c = ceilDiv(int64_t(c), g);
  }
  dropSmallTerms(*s, c);
  if (!fits(c, lhs->dtype()))
    return nullptr;
  if (allNegative(*s) && fits(-c, lhs->dtype()) && exactRange(negated(*s))) // -S < c  ->  -c < S
    return compare(Op::Cmplt, constOf(lhs, -c), rebuild(negated(*s), lhs));
  if (c == 1)
    simplex(*s);
  if (!exactRange(*s)) // S's value must be its sum (in an unsigned dtype, -x is not)
    return nullptr;
  return compare(Op::Cmplt, rebuild(*s, lhs), constOf(lhs, c));
}

const UOp *constLessThan(const UOp *u, i128 c, const UOp *rhs) {
  auto s = sumSide(rhs);
  if (!s)
    return nullptr;
  c -= s->constant;
  s->constant = 0;
  int64_t g = gcdOf(*s);
  if (g > 1) {
    for (LinearSum::Term &t : s->terms)
      t.coeff /= g;
    if (c > INT64_MAX || c < INT64_MIN)
      return nullptr;
    c = floorDiv(int64_t(c), g);
  }
  if (!fits(c, rhs->dtype()))
    return nullptr;
  if (allNegative(*s) && fits(-c, rhs->dtype()) && exactRange(negated(*s))) // c < -S  ->  S < -c
    return compare(Op::Cmplt, rebuild(negated(*s), rhs), constOf(rhs, -c));
  if (!exactRange(*s))
    return nullptr;
  return compare(Op::Cmplt, constOf(rhs, c), rebuild(*s, rhs));
}

bool isQuotient(const UOp *u) { return u->op() == Op::Idiv || u->op() == Op::Floordiv; }

/// The constant divisor of a quotient x//d that floor algebra applies to (floordiv, or idiv of x >= 0 by d > 0).
std::optional<int64_t> floorDivisor(const UOp *q) {
  const UOp *d = q->src(1);
  const UOp *x = q->src(0);
  if (!d->isConst() || !d->arg().isInt() || d->constInt() == 0 || !x->hasRange())
    return std::nullopt;
  if (q->op() == Op::Idiv && (d->constInt() < 0 || x->vmin() < 0))
    return std::nullopt;
  return d->constInt();
}

/// x//d < c  ->  x < c*d  (d > 0) ; c*d < x  (floordiv, d < 0)
const UOp *quotientLessThan(const UOp *lhs, i128 c) {
  auto d = floorDivisor(lhs);
  const UOp *x = lhs->src(0);
  if (!d || !fits(c * *d, x->dtype()))
    return nullptr;
  const UOp *bound = constOf(x, c * *d);
  return *d > 0 ? compare(Op::Cmplt, x, bound) : compare(Op::Cmplt, bound, x);
}

/// c < x//d  ->  (c+1)*d - 1 < x  (d > 0)
const UOp *lessThanQuotient(i128 c, const UOp *rhs) {
  auto d = floorDivisor(rhs);
  const UOp *x = rhs->src(0);
  if (!d || *d < 0 || !fits((c + 1) * *d - 1, x->dtype()))
    return nullptr;
  return compare(Op::Cmplt, constOf(x, (c + 1) * *d - 1), x);
}

const UOp *foldLessThan(const Match &m) {
  const UOp *u = m.root();
  const UOp *a = u->src(0);
  const UOp *b = u->src(1);
  if (b->isConst() && isQuotient(a))
    if (const UOp *r = quotientLessThan(a, b->constInt()))
      return r;
  if (a->isConst() && isQuotient(b))
    if (const UOp *r = lessThanQuotient(a->constInt(), b))
      return r;
  if (b->isConst() && !a->isConst())
    return lessThanConst(u, a, b->constInt());
  if (a->isConst() && !b->isConst())
    return constLessThan(u, a->constInt(), b);
  if (!a->isConst() && !b->isConst())
    return negatedSides(a, b);
  return nullptr;
}

/// S + k == c  ->  S == c - k, then divided by the gcd of S's coefficients
const UOp *foldEquality(const Match &m) {
  const UOp *u = m.root();
  const UOp *lhs = u->src(0);
  auto s = sumSide(lhs);
  if (!s)
    return nullptr;
  i128 c = i128(u->src(1)->constInt()) - s->constant;
  s->constant = 0;
  int64_t g = gcdOf(*s);
  if (g > 1) {
    if (c % g != 0)
      return u->ctx().constLikeInt(u, u->op() == Op::Cmpne);
    for (LinearSum::Term &t : s->terms)
      t.coeff /= g;
    c /= g;
  }
  if (!fits(c, lhs->dtype()) || !exactRange(*s))
    return nullptr;
  return compare(u->op(), rebuild(*s, lhs), constOf(lhs, c));
}

} // namespace

std::vector<Rule> compareRules() {
  UPat x = UPat::var("x", DClass::Int);
  UPat y = UPat::var("y", DClass::Int);
  UPat c = UPat::cvar("c", DClass::Int);
  return {
      {x < y, foldLessThan, "x + 3 < 7 -> x < 4 ; x*4 < 13 -> x < 4 ; x//4 < 3 -> x < 12"},
      {UPat::op(Op::Cmpeq, {x, c}), foldEquality, "x + 3 == 7 -> x == 4 ; x*2 == 7 -> false"},
      {UPat::op(Op::Cmpne, {x, c}), foldEquality, "x + 3 != 7 -> x != 4 ; x*2 != 7 -> true"},
  };
}

} // namespace tgc::simplify
