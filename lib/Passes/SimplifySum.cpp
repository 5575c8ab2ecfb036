//===- SimplifySum.cpp - Normal form of integer sums ------------*- C++ -*-===//
// Integer +, -, neg and *constant become one canonical sum of terms; quotient/remainder pairs recombine.
//===----------------------------------------------------------------------===//
//
// Wrapping integer arithmetic is a ring, so regrouping and merging like terms is exact in every integer dtype:
// `a*2 + b + a*3 - b` is `a*5`. The normal form is a left-leaning chain `((t1 + t2) + t3) + c` with terms in
// leftOf order and the constant last; normalizing a normal form gives the same node, so the rule terminates.

#include "Passes/SimplifyRules.h"

#include <algorithm>
#include <unordered_map>

namespace tgc::simplify {

using i128 = __int128;

int64_t signedRep(i128 v, DType d) {
  int bits = d.bits();
  if (bits >= 64)
    return int64_t(uint64_t(v));
  i128 mod = i128(1) << bits;
  i128 r = v % mod;
  if (r < 0)
    r += mod;
  if (r >= mod / 2)
    r -= mod;
  return int64_t(r);
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

bool leftOf(const UOp *a, const UOp *b) {
  if (a->isConst() != b->isConst())
    return b->isConst();
  return UOp::structuralLess(a, b);
}

static bool isSumOp(const UOp *u, DType d) {
  if (u->dtype() != d)
    return false;
  switch (u->op()) {
  case Op::Add:
  case Op::Sub:
  case Op::Neg:
  case Op::Const: return true;
  case Op::Mul: return u->src(1)->isConst() || u->src(0)->isConst();
  default: return false;
  }
}

namespace {

/// The term of `base` in a sum being built: a linear search while the sum is short (most are), a hash map after.
class TermIndex {
public:
  explicit TermIndex(LinearSum &s) : s_(s) {}
  LinearSum::Term *find(const UOp *base) {
    if (s_.terms.size() <= kLinear) {
      for (LinearSum::Term &t : s_.terms)
        if (t.base == base)
          return &t;
      return nullptr;
    }
    if (index_.empty())
      for (size_t i = 0; i < s_.terms.size(); ++i)
        index_.emplace(s_.terms[i].base, i);
    auto it = index_.find(base);
    return it == index_.end() ? nullptr : &s_.terms[it->second];
  }
  void add(const UOp *base, int64_t coeff) {
    s_.terms.push_back({base, coeff});
    if (!index_.empty())
      index_.emplace(base, s_.terms.size() - 1);
  }

private:
  static constexpr size_t kLinear = 16;
  LinearSum &s_;
  std::unordered_map<const UOp *, size_t> index_;
};

} // namespace

LinearSum decompose(const UOp *x) {
  LinearSum s;
  s.dtype = x->dtype();
  DType d = x->dtype();
  TermIndex index(s);
  std::vector<std::pair<const UOp *, int64_t>> stack = {{x, 1}};
  while (!stack.empty()) {
    auto [u, m] = stack.back();
    stack.pop_back();
    if (!isSumOp(u, d) || (u->op() == Op::Const && !u->arg().isInt())) {
      if (LinearSum::Term *t = index.find(u))
        t->coeff = signedRep(i128(t->coeff) + m, d);
      else
        index.add(u, m);
      continue;
    }
    switch (u->op()) {
    case Op::Const: s.constant = signedRep(i128(s.constant) + i128(m) * u->constInt(), d); break;
    case Op::Add:
      stack.emplace_back(u->src(1), m);
      stack.emplace_back(u->src(0), m);
      break;
    case Op::Sub:
      stack.emplace_back(u->src(1), signedRep(-i128(m), d));
      stack.emplace_back(u->src(0), m);
      break;
    case Op::Neg: stack.emplace_back(u->src(0), signedRep(-i128(m), d)); break;
    default: { // mul by a constant
      bool c1 = u->src(1)->isConst();
      const UOp *c = u->src(c1 ? 1 : 0);
      stack.emplace_back(u->src(c1 ? 0 : 1), signedRep(i128(m) * c->constInt(), d));
      break;
    }
    }
  }
  std::erase_if(s.terms, [](const LinearSum::Term &t) { return t.coeff == 0; });
  std::sort(s.terms.begin(), s.terms.end(),
            [](const LinearSum::Term &a, const LinearSum::Term &b) { return leftOf(a.base, b.base); });
  return s;
}

const UOp *scalarConst(const UOp *like, int64_t v) {
  // Tensor-level operands broadcast rank-0 constants, so a constant inside an expression needs no full shape.
  std::optional<Shape> shape;
  if (like->hasShape())
    shape = Shape{};
  return like->ctx().constInt(like->dtype(), v, shape);
}

const UOp *rebuild(const LinearSum &s, const UOp *like) {
  Context &ctx = like->ctx();
  const UOp *acc = nullptr;
  for (const LinearSum::Term &t : s.terms) {
    const UOp *term = t.coeff == 1 ? t.base : ctx.alu(Op::Mul, {t.base, scalarConst(t.base, t.coeff)});
    acc = acc ? ctx.alu(Op::Add, {acc, term}) : term;
  }
  if (!acc)
    return ctx.constLikeInt(like, s.constant);
  if (s.constant != 0)
    acc = ctx.alu(Op::Add, {acc, scalarConst(like, s.constant)});
  return acc;
}

std::optional<std::pair<i128, i128>> exactRange(const LinearSum &s) {
  i128 lo = s.constant;
  i128 hi = s.constant;
  for (const LinearSum::Term &t : s.terms) {
    if (!t.base->hasRange())
      return std::nullopt;
    i128 a = i128(t.coeff) * t.base->vmin();
    i128 b = i128(t.coeff) * t.base->vmax();
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  if (lo < dtypeMin(s.dtype) || hi > dtypeMax(s.dtype))
    return std::nullopt;
  return std::make_pair(lo, hi);
}

namespace {

const UOp *constOf(const UOp *u, int64_t &value) {
  if (!u->isConst() || !u->arg().isInt())
    return nullptr;
  value = u->constInt();
  return u;
}

/// x // c as it would be written after nested divisions merge: (z // a) // c is z // (a*c). `div` is idiv or
/// floordiv; both merge this way for positive divisors.
const UOp *canonicalDiv(Op div, const UOp *x, int64_t c, const UOp *like) {
  Context &ctx = like->ctx();
  int64_t a = 0;
  if (x->op() == div && constOf(x->src(1), a) && a > 0 && c > 0 && i128(a) * c <= dtypeMax(x->dtype()))
    return ctx.alu(div, {x->src(0), scalarConst(x, a * c)});
  return ctx.alu(div, {x, scalarConst(x, c)});
}

/// One recombination of a remainder term with its quotient term (mod with idiv, floormod with floordiv):
///   x%c*m + (x//c)*(c*m)          -> x*m                 (division identity, any x, c != 0)
///   x%a*m + ((x//a)%b)*(a*m)      -> (x%(a*b))*m          (a > 0, b > 0; x >= 0 for C division)
bool recombineOnce(LinearSum &s, const UOp *like) {
  auto isRemainder = [](const LinearSum::Term &t) { return t.base->op() == Op::Mod || t.base->op() == Op::Floormod; };
  if (std::none_of(s.terms.begin(), s.terms.end(), isRemainder))
    return false;
  std::unordered_map<const UOp *, size_t> at;
  for (size_t i = 0; i < s.terms.size(); ++i)
    at.emplace(s.terms[i].base, i);
  Context &ctx = like->ctx();
  for (size_t i = 0; i < s.terms.size(); ++i) {
    const UOp *r = s.terms[i].base;
    int64_t c = 0;
    if ((r->op() != Op::Mod && r->op() != Op::Floormod) || !constOf(r->src(1), c) || c == 0)
      continue;
    bool floor = r->op() == Op::Floormod;
    Op div = floor ? Op::Floordiv : Op::Idiv;
    const UOp *x = r->src(0);
    i128 want = i128(s.terms[i].coeff) * c;
    // full: x//c with coefficient coeff*c
    auto full = at.find(c > 0 ? canonicalDiv(div, x, c, like) : ctx.alu(div, {x, r->src(1)}));
    if (full != at.end() && i128(s.terms[full->second].coeff) == want) {
      s.terms[i].base = x;
      s.terms[full->second].coeff = 0;
      return true;
    }
    // partial: (x//c)%b with coefficient coeff*c
    if (c <= 0 || (!floor && (!x->hasRange() || x->vmin() < 0)))
      continue;
    for (size_t j = 0; j < s.terms.size(); ++j) {
      const UOp *q = s.terms[j].base;
      int64_t b = 0;
      if (j == i || q->op() != r->op() || !constOf(q->src(1), b) || b <= 0 || i128(s.terms[j].coeff) != want)
        continue;
      if (q->src(0) != canonicalDiv(div, x, c, like) || i128(c) * b > dtypeMax(x->dtype()))
        continue;
      s.terms[i].base = ctx.alu(r->op(), {x, scalarConst(x, c * b)});
      s.terms[j].coeff = 0;
      return true;
    }
  }
  return false;
}

/// Normalize an integer sum; the identity of the rule is "sum terms merge into the canonical sum".
const UOp *normalizeSum(const Match &m) {
  const UOp *u = m.root();
  if (!isSumOp(u, u->dtype())) // a product of two non-constants is a term, not a sum
    return nullptr;
  LinearSum s = decompose(u);
  bool changed = false;
  while (recombineOnce(s, u)) {
    changed = true;
    std::erase_if(s.terms, [](const LinearSum::Term &t) { return t.coeff == 0; });
  }
  if (changed) // recombined bases may now merge with other terms
    s = decompose(rebuild(s, u));
  return rebuild(s, u);
}

} // namespace

std::vector<Rule> sumRules() {
  OpSet sumOps = {Op::Add, Op::Sub, Op::Neg, Op::Mul};
  return {
      {UPat::any(sumOps).dclass(DClass::Int), normalizeSum,
       "a*2 + b + a*3 - b -> a*5  (integer sums to canonical form; x//c*c + x%c -> x)"},
  };
}

} // namespace tgc::simplify
