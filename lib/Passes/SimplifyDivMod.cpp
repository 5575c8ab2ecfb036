//===- SimplifyDivMod.cpp - Folding integer division and remainder -*- C++ -*-===//
// Index arithmetic like (x*4+3)//4 -> x, using value ranges to prove where C (truncating) division is floor.
//===----------------------------------------------------------------------===//
//
// idiv/mod truncate toward zero. Every rule below that uses floor algebra first proves that the numerator is
// non-negative and the divisor positive; there the two divisions agree. The numerator is decomposed into an exact
// integer sum (SimplifySum.cpp), x = sum(f_i * t_i) + k, and folded in the first way that applies:
//   congruence: choose r_i = f_i mod c (or r_i - c) so that R = sum(r_i t_i) + (k mod c) stays in one period
//               [p*c, (p+1)*c): then x//c = sum((f_i - r_i)/c * t_i) + k//c + p and x%c = R - p*c
//   gcd:        g = gcd(f_i, c) > 1: x//c = (sum(f_i/g t_i) + k//g) // (c/g), and x%c likewise times g
//   remainder:  R = sum((f_i mod c) t_i) + k mod c >= 0: x//c = sum(f_i//c t_i) + k//c + R//c, x%c = R%c

#include "Passes/SimplifyRules.h"

#include <numeric>

namespace tgc::simplify {
namespace {

using i128 = __int128;

struct DivMod {
  const UOp *node; // the idiv or mod
  const UOp *x;    // numerator
  int64_t c;       // constant divisor
  bool isDiv;
};

std::optional<DivMod> readDivMod(const Match &m) {
  const UOp *u = m.root();
  const UOp *d = u->src(1);
  if (!d->isConst() || !d->arg().isInt())
    return std::nullopt;
  return DivMod{u, u->src(0), d->constInt(), u->op() == Op::Idiv};
}

bool constInt(const UOp *u, int64_t &v) {
  if (!u->isConst() || !u->arg().isInt())
    return false;
  v = u->constInt();
  return true;
}

bool fits(i128 v, DType d) { return v >= dtypeMin(d) && v <= dtypeMax(d); }

const UOp *idiv(const UOp *x, int64_t c) { return x->ctx().alu(Op::Idiv, {x, scalarConst(x, c)}); }
const UOp *mod(const UOp *x, int64_t c) { return x->ctx().alu(Op::Mod, {x, scalarConst(x, c)}); }
const UOp *add(const UOp *a, const UOp *b) { return a->ctx().alu(Op::Add, {a, b}); }
const UOp *mul(const UOp *a, int64_t c) { return a->ctx().alu(Op::Mul, {a, scalarConst(a, c)}); }

/// (x//a)//c -> x//(a*c) ; (x%a)%c -> x%c when c | a ; (x%a)//c -> (x//c)%(a/c) when c | a, x >= 0
const UOp *nested(const DivMod &d) {
  const UOp *x = d.x;
  int64_t a = 0;
  if (d.c <= 0 || (x->op() != Op::Idiv && x->op() != Op::Mod) || !constInt(x->src(1), a) || a <= 0)
    return nullptr;
  const UOp *inner = x->src(0);
  if (d.isDiv && x->op() == Op::Idiv && fits(i128(a) * d.c, x->dtype()))
    return idiv(inner, a * d.c);
  if (!d.isDiv && x->op() == Op::Mod && a % d.c == 0)
    return mod(inner, d.c);
  if (d.isDiv && x->op() == Op::Mod && a % d.c == 0 && inner->hasRange() && inner->vmin() >= 0)
    return mod(idiv(inner, d.c), a / d.c);
  return nullptr;
}

/// x%c -> x - q*c when x//c is the constant q over x's whole range (x >= 0)
const UOp *constantQuotient(const DivMod &d) {
  if (d.isDiv || d.x->vmin() < 0)
    return nullptr;
  int64_t q = d.x->vmin() / d.c;
  if (q != d.x->vmax() / d.c)
    return nullptr;
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
    return idiv(inner, d.c / g);
  const UOp *scaled = mul(mod(inner, d.c / g), g);
  int64_t rest = floorMod(s.constant, g);
  return rest ? add(scaled, scalarConst(d.x, rest)) : scaled;
}

const UOp *remainderFold(const DivMod &d, const LinearSum &s) {
  LinearSum q{{}, floorDiv(s.constant, d.c), s.dtype};
  LinearSum r{{}, floorMod(s.constant, d.c), s.dtype};
  for (const LinearSum::Term &t : s.terms) {
    if (int64_t a = floorDiv(t.coeff, d.c))
      q.terms.push_back({t.base, a});
    if (int64_t b = floorMod(t.coeff, d.c))
      r.terms.push_back({t.base, b});
  }
  if (q.terms.empty() && q.constant == 0)
    return nullptr;
  auto rr = exactRange(r);
  if (!rr || rr->first < 0 || !exactRange(q))
    return nullptr;
  const UOp *rem = rebuild(r, d.x);
  if (!d.isDiv)
    return mod(rem, d.c);
  return add(rebuild(q, d.x), idiv(rem, d.c));
}

const UOp *foldDivMod(const Match &m) {
  auto d = readDivMod(m);
  if (!d || !d->x->hasRange())
    return nullptr;
  if (d->c == -1)
    return d->isDiv ? mul(d->x, -1) : m.ctx().constLikeInt(d->node, 0);
  if (d->c <= 0)
    return nullptr;
  auto changed = [&](const UOp *r) { return r && r != d->node; };
  if (const UOp *r = nested(*d); changed(r))
    return r;
  if (d->x->vmin() < 0)
    return nullptr;
  if (const UOp *r = constantQuotient(*d); changed(r))
    return r;
  LinearSum s = decompose(d->x);
  if (!exactRange(s))
    return nullptr;
  if (const UOp *r = congruence(*d, s); changed(r))
    return r;
  if (const UOp *r = gcdFold(*d, s); changed(r))
    return r;
  return remainderFold(*d, s);
}

} // namespace

std::vector<Rule> divModRules() {
  UPat x = UPat::var("x", DClass::Int);
  UPat c = UPat::cvar("c", DClass::Int);
  return {
      {x / c, foldDivMod, "(x*4+3)//4 -> x ; (x//a)//b -> x//(a*b) ; x//-1 -> -x  (see SimplifyDivMod.cpp)"},
      {x % c, foldDivMod, "x%4 -> x when 0 <= x < 4 ; (x*4+3)%4 -> 3 ; (x%a)%b -> x%b when b | a"},
  };
}

} // namespace tgc::simplify
