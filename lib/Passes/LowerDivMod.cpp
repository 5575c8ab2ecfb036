//===- LowerDivMod.cpp - Floor division to the C division targets have -*- C++ -*-===//
// floordiv/floormod become shifts and masks (power-of-two divisors), plain idiv/mod (operands of one sign), or
// idiv/mod with a sign fix-up, as tinygrad's decompositions lower FLOORDIV/FLOORMOD.
//===----------------------------------------------------------------------===//
//
// With q = x idiv y and r = x mod y (C, truncating), the floor results differ only where r != 0 and the signs of
// x and y differ:
//   x floordiv y = q - ((r != 0) & ((x < 0) != (y < 0)))
//   x floormod y = r + where((r != 0) & ((x < 0) != (y < 0)), y, 0)
// Two's complement makes the power-of-two case exact for every sign: x floordiv 2^k = x >> k (arithmetic), and
// x floormod 2^k = x & (2^k - 1).

#include "IR/Rewrite.h"
#include "Passes/Pass.h"

#include <bit>

namespace tgc {
namespace {

const UOp *c(const UOp *like, int64_t v) { return like->ctx().constLikeInt(like, v); }
const UOp *alu(Op op, const UOp *a, const UOp *b) { return a->ctx().alu(op, {a, b}); }

/// Both operands keep one sign, and the same one: C division is floor division.
bool sameSigns(const UOp *x, const UOp *y) {
  if (x->dtype().isUnsigned())
    return true;
  if (!x->hasRange() || !y->hasRange())
    return false;
  return (x->vmin() >= 0 && y->vmin() > 0) || (x->vmax() <= 0 && y->vmax() < 0);
}

/// log2 of a constant power-of-two divisor, or -1.
int powerOfTwo(const UOp *y) {
  if (!y->isConst() || y->dtype().isVector() || !y->arg().isInt())
    return -1;
  int64_t v = y->constInt();
  if (v <= 0 || !std::has_single_bit(uint64_t(v)))
    return -1;
  return std::countr_zero(uint64_t(v));
}

/// (r != 0) & ((x < 0) != (y < 0)): where the truncated and the floored results differ.
const UOp *needsFix(const UOp *x, const UOp *y, const UOp *r) {
  const UOp *signs = alu(Op::Cmpne, alu(Op::Cmplt, x, c(x, 0)), alu(Op::Cmplt, y, c(y, 0)));
  return alu(Op::And, alu(Op::Cmpne, r, c(r, 0)), signs);
}

const UOp *lowerFloorDiv(const Match &m) {
  const UOp *x = m["x"];
  const UOp *y = m["y"];
  if (sameSigns(x, y))
    return alu(Op::Idiv, x, y);
  if (int k = powerOfTwo(y); k >= 0)
    return alu(Op::Shr, x, c(x, k));
  const UOp *q = alu(Op::Idiv, x, y);
  const UOp *fix = x->ctx().cast(needsFix(x, y, alu(Op::Mod, x, y)), x->dtype());
  return alu(Op::Sub, q, fix);
}

const UOp *lowerFloorMod(const Match &m) {
  const UOp *x = m["x"];
  const UOp *y = m["y"];
  if (sameSigns(x, y))
    return alu(Op::Mod, x, y);
  if (int k = powerOfTwo(y); k >= 0)
    return alu(Op::And, x, c(x, (int64_t(1) << k) - 1));
  const UOp *r = alu(Op::Mod, x, y);
  return alu(Op::Add, r, x->ctx().alu(Op::Where, {needsFix(x, y, r), y, c(y, 0)}));
}

} // namespace

const UOp *runLowerDivMod(const UOp *root, PassContext &pc) {
  UPat x = UPat::var("x", DClass::Int);
  UPat y = UPat::var("y", DClass::Int);
  static const PatternMatcher pm("lower-divmod",
                                 {
                                     {UPat::op(Op::Floordiv, {x, y}), lowerFloorDiv,
                                      "x floordiv y -> x idiv y - ((x mod y != 0) & ((x < 0) != (y < 0)))"},
                                     {UPat::op(Op::Floormod, {x, y}), lowerFloorMod,
                                      "x floormod y -> x mod y + where(fix, y, 0) ; x floormod 2^k -> x & (2^k-1)"},
                                 });
  return graphRewrite(root, pm);
}

} // namespace tgc
