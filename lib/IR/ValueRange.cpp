//===- ValueRange.cpp - Integer value ranges of UOps ------------*- C++ -*-===//
// One interval rule per op; results that could wrap around fall back to the dtype's full range.
//===----------------------------------------------------------------------===//

#include "IR/ValueRange.h"

#include "IR/UOp.h"

#include <algorithm>
#include <optional>

namespace tgc {
namespace {

using i128 = __int128;

struct Interval {
  i128 lo;
  i128 hi;
};

bool rangedDType(DType d) {
  if (d.isPtr())
    return false;
  DType e = d.element();
  return e.isBool() || (e.isInt() && e.scalar() != Scalar::U64);
}

Interval fullRange(DType d) { return {dtypeMin(d.element()), dtypeMax(d.element())}; }

/// Interval of an operand; full dtype range when unknown.
Interval of(const UOp *u) {
  if (u->hasRange())
    return {u->vmin(), u->vmax()};
  if (rangedDType(u->dtype()))
    return fullRange(u->dtype());
  return {INT64_MIN, INT64_MAX};
}

ValueRange finish(Interval r, DType d) {
  Interval full = fullRange(d);
  if (r.lo > r.hi || r.lo < full.lo || r.hi > full.hi)
    r = full; // may wrap around: say nothing
  return {true, int64_t(r.lo), int64_t(r.hi)};
}

Interval corners(i128 a, i128 b, i128 c, i128 d) { return {std::min({a, b, c, d}), std::max({a, b, c, d})}; }

i128 truncDiv(i128 a, i128 b) { return a / b; } // C++ division truncates

std::optional<Interval> divRange(Interval a, Interval b) {
  if (b.lo <= 0 && b.hi >= 0)
    return std::nullopt; // the divisor may be zero
  return corners(truncDiv(a.lo, b.lo), truncDiv(a.lo, b.hi), truncDiv(a.hi, b.lo), truncDiv(a.hi, b.hi));
}

std::optional<Interval> modRange(Interval a, Interval b) {
  if (b.lo <= 0 && b.hi >= 0)
    return std::nullopt;
  i128 m = std::max(b.lo < 0 ? -b.lo : b.lo, b.hi < 0 ? -b.hi : b.hi) - 1; // |remainder| <= m
  if (a.lo >= 0 && a.hi <= m && b.lo > 0 && b.lo > a.hi)
    return a; // x % c == x when 0 <= x < c
  i128 lo = a.lo >= 0 ? 0 : std::max(a.lo, -m);
  i128 hi = a.hi <= 0 ? 0 : std::min(a.hi, m);
  return Interval{lo, hi};
}

i128 floorDiv(i128 a, i128 b) {
  i128 q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/// Floor division is monotonic in each operand while the divisor keeps one sign: the corners bound it.
std::optional<Interval> floorDivRange(Interval a, Interval b) {
  if (b.lo <= 0 && b.hi >= 0)
    return std::nullopt;
  return corners(floorDiv(a.lo, b.lo), floorDiv(a.lo, b.hi), floorDiv(a.hi, b.lo), floorDiv(a.hi, b.hi));
}

/// x floormod y has y's sign and |r| < |y|; with a constant y and x within one period it is x shifted.
std::optional<Interval> floorModRange(Interval a, Interval b) {
  if (b.lo <= 0 && b.hi >= 0)
    return std::nullopt;
  if (b.lo == b.hi && floorDiv(a.lo, b.lo) == floorDiv(a.hi, b.lo)) {
    i128 shift = floorDiv(a.lo, b.lo) * b.lo;
    return Interval{a.lo - shift, a.hi - shift};
  }
  if (b.lo > 0)
    return Interval{0, b.hi - 1};
  return Interval{b.lo + 1, 0};
}

i128 nextPow2Minus1(i128 v) {
  i128 p = 1;
  while (p <= v)
    p <<= 1;
  return p - 1;
}

std::optional<Interval> bitRange(Op op, Interval a, Interval b, bool isBool) {
  if (isBool) {
    if (op == Op::And)
      return Interval{a.lo & b.lo, a.hi & b.hi};
    if (op == Op::Or)
      return Interval{a.lo | b.lo, a.hi | b.hi};
    if (a.lo == a.hi && b.lo == b.hi)
      return Interval{a.lo ^ b.lo, a.lo ^ b.lo};
    return Interval{0, 1};
  }
  if (op == Op::And) {
    if (a.lo >= 0 && b.lo >= 0)
      return Interval{0, std::min(a.hi, b.hi)};
    if (a.lo >= 0)
      return Interval{0, a.hi};
    if (b.lo >= 0)
      return Interval{0, b.hi};
    return std::nullopt;
  }
  if (a.lo < 0 || b.lo < 0)
    return std::nullopt;
  i128 hi = nextPow2Minus1(std::max(a.hi, b.hi));
  return Interval{op == Op::Or ? std::max(a.lo, b.lo) : 0, hi};
}

std::optional<Interval> shiftRange(Op op, Interval a, Interval b, int bits) {
  if (b.lo != b.hi || b.lo < 0 || b.lo >= bits)
    return std::nullopt;
  int s = int(b.lo);
  if (op == Op::Shl)
    return Interval{a.lo * (i128(1) << s), a.hi * (i128(1) << s)};
  return Interval{a.lo >> s, a.hi >> s};
}

Interval compareRange(Op op, Interval a, Interval b) {
  switch (op) {
  case Op::Cmplt:
    if (a.hi < b.lo)
      return {1, 1};
    if (a.lo >= b.hi)
      return {0, 0};
    return {0, 1};
  case Op::Cmpeq:
  case Op::Cmpne: {
    bool alwaysEq = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo;
    bool neverEq = a.hi < b.lo || b.hi < a.lo;
    i128 eq = alwaysEq ? 1 : 0;
    if (!alwaysEq && !neverEq)
      return {0, 1};
    return op == Op::Cmpeq ? Interval{eq, eq} : Interval{1 - eq, 1 - eq};
  }
  default: return {0, 1};
  }
}

Interval castRange(const UOp *x, DType to) {
  if (to.element().isBool()) {
    if (!x->hasRange())
      return {0, 1};
    if (x->vmin() == 0 && x->vmax() == 0)
      return {0, 0};
    if (x->vmin() > 0 || x->vmax() < 0)
      return {1, 1};
    return {0, 1};
  }
  if (!x->hasRange())
    return fullRange(to);
  return {x->vmin(), x->vmax()};
}

std::optional<Interval> aluRange(const UOp *u) {
  Op op = u->op();
  auto src = u->src();
  bool isBool = u->dtype().element().isBool();
  if (op == Op::Cmplt || op == Op::Cmpne || op == Op::Cmpeq) {
    if (!rangedDType(src[0]->dtype()))
      return Interval{0, 1};
    return compareRange(op, of(src[0]), of(src[1]));
  }
  if (op == Op::Where) {
    Interval c = of(src[0]);
    Interval a = of(src[1]);
    Interval b = of(src[2]);
    if (c.lo == 1)
      return a;
    if (c.hi == 0)
      return b;
    return Interval{std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  if (opGroup(op) == OpGroup::Unary) {
    if (op != Op::Neg)
      return std::nullopt;
    Interval a = of(src[0]);
    return Interval{-a.hi, -a.lo};
  }
  if (opGroup(op) != OpGroup::Binary && op != Op::Mulacc)
    return std::nullopt;
  Interval a = of(src[0]);
  Interval b = of(src[1]);
  switch (op) {
  case Op::Add: return Interval{a.lo + b.lo, a.hi + b.hi};
  case Op::Sub: return Interval{a.lo - b.hi, a.hi - b.lo};
  case Op::Mul: return corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
  case Op::Mulacc: {
    Interval p = corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
    Interval c = of(src[2]);
    return Interval{p.lo + c.lo, p.hi + c.hi};
  }
  case Op::Idiv: return divRange(a, b);
  case Op::Mod: return modRange(a, b);
  case Op::Floordiv: return floorDivRange(a, b);
  case Op::Floormod: return floorModRange(a, b);
  case Op::Max: return Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  case Op::And:
  case Op::Or:
  case Op::Xor: return bitRange(op, a, b, isBool);
  case Op::Shl:
  case Op::Shr: return shiftRange(op, a, b, u->dtype().bits());
  default: return std::nullopt;
  }
}

std::optional<Interval> rangeOf(const UOp *u) {
  Op op = u->op();
  if (opArity(op) >= 0 ? u->numSrc() != size_t(opArity(op)) : false)
    return std::nullopt; // malformed: the verifier reports it
  switch (op) {
  case Op::Const:
    if (u->arg().isBool())
      return Interval{u->arg().getBool(), u->arg().getBool()};
    if (u->arg().isInt())
      return Interval{u->arg().getInt(), u->arg().getInt()};
    return std::nullopt;
  case Op::DefineVar: {
    const Arg &a = u->arg();
    if (!a.isTuple() || a.getTuple().size() != 3 || !a.getTuple()[1].isInt() || !a.getTuple()[2].isInt())
      return std::nullopt; // malformed: the verifier reports it
    return Interval{a.getTuple()[1].getInt(), a.getTuple()[2].getInt()};
  }
  case Op::Range:
  case Op::Special: {
    Interval end = of(u->src(0));
    return Interval{0, std::max<i128>(end.hi - 1, 0)};
  }
  case Op::Cast:
  case Op::Bitcast:
    if (op == Op::Bitcast)
      return std::nullopt;
    return castRange(u->src(0), u->dtype());
  case Op::Reshape:
  case Op::Permute:
  case Op::Expand:
  case Op::Shrink:
  case Op::Flip:
  case Op::Contiguous:
  case Op::Copy:
  case Op::Output:
  case Op::Gep: return of(u->src(0));
  case Op::Pad: {
    Interval a = of(u->src(0));
    return Interval{std::min<i128>(a.lo, 0), std::max<i128>(a.hi, 0)};
  }
  case Op::Vectorize: {
    if (u->numSrc() == 0)
      return std::nullopt;
    Interval r = of(u->src(0));
    for (const UOp *s : u->src())
      r = {std::min(r.lo, of(s).lo), std::max(r.hi, of(s).hi)};
    return r;
  }
  default:
    if (group::alu().contains(op) && u->numSrc() == size_t(opArity(op)))
      return aluRange(u);
    return std::nullopt;
  }
}

} // namespace

ValueRange computeRange(const UOp *u) {
  if (!rangedDType(u->dtype()))
    return {};
  std::optional<Interval> r = rangeOf(u);
  if (!r)
    return finish(fullRange(u->dtype()), u->dtype());
  return finish(*r, u->dtype());
}

} // namespace tgc
