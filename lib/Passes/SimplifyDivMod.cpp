//===- SimplifyDivMod.cpp - Folding integer division and remainder -*- C++ -*-===//
// Index arithmetic like (x*4+3)//4 -> x, using value ranges; floor division (floordiv/floormod) and C division
// (idiv/mod, where the numerator is proven non-negative) share one floor algebra.
//===----------------------------------------------------------------------===//
//
// idiv/mod truncate toward zero, floordiv/floormod round toward -inf; for a non-negative numerator and a positive
// divisor they agree, and the floor ops become the C ones (cheaper on every target). Every rule below is floor
// algebra: for idiv/mod it first proves the numerator non-negative. The numerator is decomposed into an exact
// integer sum (SimplifySum.cpp), x = sum(f_i * t_i) + k, and folded in the first way that applies:
//   congruence: choose r_i = f_i mod c (or r_i - c) so that R = sum(r_i t_i) + (k mod c) stays in one period
//               [p*c, (p+1)*c): then x//c = sum((f_i - r_i)/c * t_i) + k//c + p and x%c = R - p*c
//   gcd:        g = gcd(f_i, c) > 1: x//c = (sum(f_i/g t_i) + k//g) // (c/g), and x%c likewise times g
//   nested sum: (y//a + k)//c = (y + k*a)//(a*c)
//   by factor:  f | c with f a term's coefficient and x//f folding: x//c = (x//f)//(c/f), and
//               x%c = ((x//f)%(c/f))*f + b where b = sum((f_i mod f) t_i) + k mod f lies in [0, f)
//   remainder:  f_i = q_i*c + r_i, R = sum(r_i t_i) + k mod c: x//c = sum(q_i t_i) + k//c + R//c, x%c = R%c
//               (C division: r_i = f_i mod c and R >= 0; floor division: q_i = f_i / c truncated, so only
//               whole multiples of c move out)
// A divisor y that is not a constant (y > 0) factors out of the terms that are multiples of it:
//   (y*q + r)//y = q + r//y and (y*q + r)%y = r%y ; x//y = 0 and x%y = x when 0 <= x < y.

#include "Passes/SimplifyRules.h"

#include <numeric>

namespace tgc::simplify {
namespace {

using i128 = __int128;

struct DivMod {
  const UOp *node; // the idiv, mod, floordiv or floormod
  const UOp *x;    // numerator
  int64_t c;       // constant divisor
  bool isDiv;
  bool floor; // floordiv/floormod (else C's idiv/mod)
};

bool isFloorOp(Op op) { return op == Op::Floordiv || op == Op::Floormod; }
bool isDivOp(Op op) { return op == Op::Idiv || op == Op::Floordiv; }

bool constInt(const UOp *u, int64_t &v) {
  if (!u->isConst() || !u->arg().isInt())
    return false;
  v = u->constInt();
  return true;
}

std::optional<DivMod> readDivMod(const UOp *u) {
  int64_t c = 0;
  if (!constInt(u->src(1), c))
    return std::nullopt;
  return DivMod{u, u->src(0), c, isDivOp(u->op()), isFloorOp(u->op())};
}

bool fits(i128 v, DType d) { return v >= dtypeMin(d) && v <= dtypeMax(d); }
bool nonNegative(const UOp *u) { return u->hasRange() && u->vmin() >= 0; }

/// Floor algebra holds for d: floor ops, or C ops of a non-negative numerator (the divisor is positive).
bool floorAlgebra(const DivMod &d) { return d.c > 0 && (d.floor || nonNegative(d.x)); }

/// The division or remainder of d's family (floor or C).
const UOp *divide(const DivMod &d, bool isDiv, const UOp *x, int64_t c) {
  Op op = d.floor ? (isDiv ? Op::Floordiv : Op::Floormod) : (isDiv ? Op::Idiv : Op::Mod);
  return x->ctx().alu(op, {x, scalarConst(x, c)});
}
const UOp *add(const UOp *a, const UOp *b) { return a->ctx().alu(Op::Add, {a, b}); }
const UOp *mul(const UOp *a, int64_t c) { return a->ctx().alu(Op::Mul, {a, scalarConst(a, c)}); }

/// u divides by a positive constant with floor semantics: a floor op, or a C op of a non-negative numerator.
bool floorLike(const UOp *u, Op floorOp, Op cOp, int64_t &a) {
  if (u->op() != floorOp && u->op() != cOp)
    return false;
  if (!constInt(u->src(1), a) || a <= 0)
    return false;
  return u->op() == floorOp || nonNegative(u->src(0));
}

/// (x//a)//c -> x//(a*c) ; (x%a)%c -> x%c when c | a  (both ops of one family: exact for every sign)
/// (x%a)//c -> (x//c)%(a/c) when c | a  (floor algebra)
const UOp *nested(const DivMod &d) {
  const UOp *x = d.x;
  int64_t a = 0;
  if (d.c <= 0 || x->numSrc() != 2 || !constInt(x->src(1), a) || a <= 0)
    return nullptr;
  Op divOp = d.floor ? Op::Floordiv : Op::Idiv;
  Op modOp = d.floor ? Op::Floormod : Op::Mod;
  const UOp *inner = x->src(0);
  if (d.isDiv && x->op() == divOp && fits(i128(a) * d.c, x->dtype()))
    return divide(d, true, inner, a * d.c);
  if (x->op() != modOp || a % d.c != 0)
    return nullptr;
  if (!d.isDiv)
    return divide(d, false, inner, d.c);
  if (d.floor || nonNegative(inner))
    return divide(d, false, divide(d, true, inner, d.c), a / d.c);
  return nullptr;
}

/// x%c -> x - q*c (and x//c -> q) when x//c is the constant q over x's whole range
const UOp *constantQuotient(const DivMod &d) {
  if (!floorAlgebra(d) || !d.x->hasRange())
    return nullptr;
  int64_t q = floorDiv(d.x->vmin(), d.c);
  if (q != floorDiv(d.x->vmax(), d.c))
    return nullptr;
  if (d.isDiv)
    return d.node->ctx().constLikeInt(d.node, q);
  LinearSum s = decompose(d.x);
  s.constant = signedRep(i128(s.constant) - i128(q) * d.c, s.dtype);
  return rebuild(s, d.node);
}

int64_t rangeLo(const LinearSum::Term &t, int64_t r) { return r >= 0 ? t.base->vmin() : t.base->vmax(); }
int64_t rangeHi(const LinearSum::Term &t, int64_t r) { return r >= 0 ? t.base->vmax() : t.base->vmin(); }

/// The congruence fold for one choice of residues r.
const UOp *tryResidues(const DivMod &d, const LinearSum &s, const std::vector<int64_t> &r) {
  int64_t c = d.c;
  int64_t kmod = floorMod(s.constant, c);
  i128 lo = kmod;
  i128 hi = kmod;
  for (size_t i = 0; i < s.terms.size(); ++i) {
    lo += i128(r[i]) * rangeLo(s.terms[i], r[i]);
    hi += i128(r[i]) * rangeHi(s.terms[i], r[i]);
  }
  if (lo < INT64_MIN || hi > INT64_MAX)
    return nullptr;
  int64_t p = floorDiv(int64_t(lo), c);
  if (p != floorDiv(int64_t(hi), c))
    return nullptr;
  LinearSum out{{}, 0, s.dtype};
  for (size_t i = 0; i < s.terms.size(); ++i) {
    int64_t coeff = d.isDiv ? (s.terms[i].coeff - r[i]) / c : r[i];
    if (coeff != 0)
      out.terms.push_back({s.terms[i].base, coeff});
  }
  out.constant = d.isDiv ? floorDiv(s.constant, c) + p : kmod - p * c;
  if (!exactRange(out))
    return nullptr;
  return rebuild(out, d.node);
}

const UOp *congruence(const DivMod &d, const LinearSum &s) {
  // per term: the residue of smaller magnitude; both when tied or when there is a single term
  std::vector<std::vector<int64_t>> choices;
  size_t combos = 1;
  for (const LinearSum::Term &t : s.terms) {
    int64_t r = floorMod(t.coeff, d.c);
    int64_t neg = r - d.c;
    std::vector<int64_t> opts;
    if (r == 0)
      opts = {0};
    else if (s.terms.size() == 1 || 2 * r == d.c)
      opts = {r, neg};
    else
      opts = {r <= -neg ? r : neg};
    combos *= opts.size();
    choices.push_back(opts);
  }
  if (combos > 64)
    return nullptr;
  std::vector<int64_t> pick(s.terms.size());
  for (size_t k = 0; k < combos; ++k) {
    size_t rest = k;
    for (size_t i = 0; i < choices.size(); ++i) {
      pick[i] = choices[i][rest % choices[i].size()];
      rest /= choices[i].size();
    }
    if (const UOp *r = tryResidues(d, s, pick))
      return r;
  }
  return nullptr;
}

const UOp *gcdFold(const DivMod &d, const LinearSum &s) {
  int64_t g = d.c;
  for (const LinearSum::Term &t : s.terms)
    g = std::gcd(g, t.coeff < 0 ? -t.coeff : t.coeff);
  if (g <= 1 || s.terms.empty())
    return nullptr;
  LinearSum q{{}, floorDiv(s.constant, g), s.dtype};
  for (const LinearSum::Term &t : s.terms)
    q.terms.push_back({t.base, t.coeff / g});
  if (!exactRange(q))
    return nullptr;
  const UOp *inner = rebuild(q, d.x);
  if (d.isDiv)
    return divide(d, true, inner, d.c / g);
  const UOp *scaled = mul(divide(d, false, inner, d.c / g), g);
  int64_t rest = floorMod(s.constant, g);
  return rest ? add(scaled, scalarConst(d.x, rest)) : scaled;
}

/// (y//a + k)//c -> (y + k*a)//(a*c)
const UOp *nestedSum(const DivMod &d, const LinearSum &s) {
  int64_t a = 0;
  if (!d.isDiv || s.terms.size() != 1 || s.terms[0].coeff != 1 || s.constant == 0)
    return nullptr;
  const UOp *q = s.terms[0].base;
  if (!floorLike(q, Op::Floordiv, Op::Idiv, a) || !fits(i128(a) * d.c, d.x->dtype()))
    return nullptr;
  LinearSum inner = decompose(q->src(0));
  if (!exactRange(inner)) // y's value must be its sum, not just congruent to it
    return nullptr;
  inner.constant = int64_t(i128(inner.constant) + i128(s.constant) * a);
  if (!fits(inner.constant, inner.dtype) || !exactRange(inner))
    return nullptr;
  return divide(d, true, rebuild(inner, q), a * d.c);
}

const UOp *foldConstDivisor(const DivMod &d);

size_t divisions(const UOp *u) {
  size_t n = 0;
  for (const UOp *v : toposort(u))
    n += v->op() == Op::Idiv || v->op() == Op::Mod || isFloorOp(v->op());
  return n;
}

/// x//c -> (x//f)//(c/f) and x%c -> ((x//f)%(c/f))*f + b, for a coefficient f of x with f | c where x//f folds to
/// fewer divisions (its own one gone); the smallest result wins.
const UOp *byFactor(const DivMod &d, const LinearSum &s) {
  const UOp *best = nullptr;
  size_t bestSize = SIZE_MAX;
  for (const LinearSum::Term &t : s.terms) {
    int64_t f = t.coeff < 0 ? -t.coeff : t.coeff;
    if (f <= 1 || f >= d.c || d.c % f != 0)
      continue;
    const UOp *inner = divide(d, true, d.x, f);
    const UOp *folded = foldConstDivisor(DivMod{inner, d.x, f, true, d.floor});
    if (!folded || folded == inner || divisions(folded) >= divisions(inner))
      continue;
    const UOp *r = nullptr;
    if (d.isDiv) {
      r = divide(d, true, folded, d.c / f);
    } else {
      LinearSum b{{}, floorMod(s.constant, f), s.dtype};
      for (const LinearSum::Term &u : s.terms)
        if (int64_t m = floorMod(u.coeff, f))
          b.terms.push_back({u.base, m});
      auto br = exactRange(b);
      if (!br || br->first < 0 || br->second >= f)
        continue;
      r = add(mul(divide(d, false, folded, d.c / f), f), rebuild(b, d.x));
    }
    size_t size = toposort(r).size();
    if (size < bestSize) {
      best = r;
      bestSize = size;
    }
  }
  return best;
}

const UOp *remainderFold(const DivMod &d, const LinearSum &s) {
  LinearSum q{{}, floorDiv(s.constant, d.c), s.dtype};
  LinearSum r{{}, floorMod(s.constant, d.c), s.dtype};
  for (const LinearSum::Term &t : s.terms) {
    // C division needs R >= 0, so residues are taken in [0, c); floor division moves only whole multiples of c
    // (|f| >= c), so a coefficient like -1 is not turned into 15 - 16
    int64_t a = d.floor ? t.coeff / d.c : floorDiv(t.coeff, d.c);
    if (a)
      q.terms.push_back({t.base, a});
    if (int64_t b = t.coeff - a * d.c)
      r.terms.push_back({t.base, b});
  }
  if (q.terms.empty() && q.constant == 0)
    return nullptr;
  auto rr = exactRange(r);
  if (!rr || (!d.floor && rr->first < 0) || !exactRange(q))
    return nullptr;
  const UOp *rem = rebuild(r, d.x);
  if (!d.isDiv)
    return divide(d, false, rem, d.c);
  return add(rebuild(q, d.x), divide(d, true, rem, d.c));
}

/// Every fold of a division by a constant, in order; nullptr when none applies.
const UOp *foldConstDivisor(const DivMod &d) {
  if (!d.x->hasRange())
    return nullptr;
  if (d.c == -1)
    return d.isDiv ? mul(d.x, -1) : d.node->ctx().constLikeInt(d.node, 0);
  if (d.c <= 0)
    return nullptr;
  auto changed = [&](const UOp *r) { return r && r != d.node; };
  if (const UOp *r = nested(d); changed(r))
    return r;
  if (!floorAlgebra(d))
    return nullptr;
  if (const UOp *r = constantQuotient(d); changed(r))
    return r;
  LinearSum s = decompose(d.x);
  if (!exactRange(s))
    return nullptr;
  for (auto fold : {congruence, gcdFold, nestedSum, byFactor})
    if (const UOp *r = fold(d, s); changed(r))
      return r;
  return remainderFold(d, s);
}

/// floordiv/floormod -> idiv/mod when the numerator is non-negative and the divisor positive (or unsigned).
const UOp *floorToC(const UOp *u) {
  const UOp *x = u->src(0);
  const UOp *y = u->src(1);
  bool agree = x->dtype().isUnsigned() || (nonNegative(x) && y->hasRange() && y->vmin() > 0);
  if (!agree)
    return nullptr;
  return u->ctx().alu(u->op() == Op::Floordiv ? Op::Idiv : Op::Mod, {x, y});
}

/// The product of a and b cannot wrap around in their dtype.
bool exactProduct(const UOp *a, const UOp *b) {
  if (!a->hasRange() || !b->hasRange())
    return false;
  for (i128 p : {i128(a->vmin()) * b->vmin(), i128(a->vmin()) * b->vmax(), i128(a->vmax()) * b->vmin(),
                 i128(a->vmax()) * b->vmax()})
    if (!fits(p, a->dtype()))
      return false;
  return true;
}

/// The term's multiple of y: t = y*m (base y, or y*m or m*y without wraparound) -> m; nullptr otherwise.
const UOp *multipleOf(const UOp *t, const UOp *y) {
  if (t == y)
    return t->ctx().constLikeInt(t, 1);
  if (t->op() != Op::Mul || (t->src(0) != y && t->src(1) != y))
    return nullptr;
  const UOp *m = t->src(0) == y ? t->src(1) : t->src(0);
  return exactProduct(y, m) ? m : nullptr;
}

/// Division by a positive non-constant y: x//y -> 0 and x%y -> x when 0 <= x < y;
/// (y*q + r)//y -> q + r//y and (y*q + r)%y -> r%y.
const UOp *foldVariableDivisor(const UOp *u) {
  const UOp *x = u->src(0);
  const UOp *y = u->src(1);
  bool isDiv = isDivOp(u->op());
  bool floor = isFloorOp(u->op());
  if (!x->hasRange() || !y->hasRange() || y->vmin() <= 0)
    return nullptr;
  if (x->vmin() >= 0 && x->vmax() < y->vmin())
    return isDiv ? u->ctx().constLikeInt(u, 0) : x;
  LinearSum s = decompose(x);
  std::vector<const UOp *> quotient;
  LinearSum rest{{}, s.constant, s.dtype};
  for (const LinearSum::Term &t : s.terms) {
    if (const UOp *m = multipleOf(t.base, y))
      quotient.push_back(t.coeff == 1 ? m : mul(m, t.coeff));
    else
      rest.terms.push_back(t);
  }
  auto rr = exactRange(rest);
  if (quotient.empty() || !exactRange(s) || !rr || (!floor && (x->vmin() < 0 || rr->first < 0)))
    return nullptr;
  const UOp *r = u->ctx().alu(u->op(), {rebuild(rest, x), y});
  if (!isDiv)
    return r;
  for (const UOp *q : quotient)
    r = add(r, q);
  return r;
}

const UOp *foldDivMod(const Match &m) {
  const UOp *u = m.root();
  if (isFloorOp(u->op()))
    if (const UOp *r = floorToC(u))
      return r;
  if (auto d = readDivMod(u))
    return foldConstDivisor(*d);
  return foldVariableDivisor(u);
}

} // namespace

std::vector<Rule> divModRules() {
  UPat x = UPat::var("x", DClass::Int);
  UPat y = UPat::var("y", DClass::Int);
  return {
      {x / y, foldDivMod, "(x*4+3)//4 -> x ; (x//a)//b -> x//(a*b) ; (y*q + r)//y -> q + r//y  (SimplifyDivMod.cpp)"},
      {x % y, foldDivMod, "x%4 -> x when 0 <= x < 4 ; (x*4+3)%4 -> 3 ; (x%a)%b -> x%b when b | a"},
      {UPat::op(Op::Floordiv, {x, y}), foldDivMod,
       "x floordiv y -> x idiv y when x >= 0, y > 0 ; ((x - 20) floordiv 4) -> x floordiv 4 - 5"},
      {UPat::op(Op::Floormod, {x, y}), foldDivMod, "x floormod y -> x mod y when x >= 0, y > 0 ; (x - 6) floormod 4"},
  };
}

} // namespace tgc::simplify
