//===- EmulateFloats.cpp - Float arithmetic a target lacks, from what it has -*- C++ -*-===//
// Half-type arithmetic in float32 where the target has none, and a NaN-propagating max from compares.
//===----------------------------------------------------------------------===//
//
// The target's `native` flags (Targets.def) decide what is rewritten; every rule keeps the interpreter's bits:
//
//   op(a, ...) : h      -> cast_h(op(cast_f32(a), ...))   h = bf16 or f16 without BF16 or F16 arithmetic; op any
//                                                        arithmetic op but where (float32 holds every h exactly
//                                                        and has more than 2p + 2 bits, so for + - * / sqrt
//                                                        rounding twice is rounding once; the interpreter
//                                                        computes the others in float32 too)
//   mulacc(a, b, c) : h -> cast_h(mulacc(cast_f32(a), ...))  every target: the interpreter's half fma is a float fma
//                                                        rounded to h, not a GPU's native half fma
//   max(a, b) : h       -> cast_h(max(cast_f32(a), ...))     every target: no backend has a NaN-propagating half max
//   max(a, b) : f32/f64 -> where(a != a | b < a | (a == b & -1 < bits(a)), a, b)   without NanMax: NaN wins, then
//                                                        the larger, then of equal values +0 over -0
//
// Comparisons, where and conversions are left alone: they are exact on half values and every renderer maps them
// (a conversion to bf16 is the renderer's rounding). Runs after lower-reduce, so accumulators of half types round
// at every step as the interpreter's do. Only kernel-level (unshaped) ops are rewritten.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"

namespace tgc {
namespace {

bool isHalf(DType d) {
  Scalar s = d.element().scalar();
  return s == Scalar::F16 || s == Scalar::BF16;
}

/// The target computes arithmetic on the half type of d itself.
bool nativeHalf(const TargetDesc &t, DType d) {
  return d.element().scalar() == Scalar::F16 ? t.has(native::F16) : t.has(native::BF16);
}

/// op on float32 copies of the operands, rounded back to the half type.
const UOp *inFloat32(const UOp *u) {
  Context &ctx = u->ctx();
  DType f32 = dt::F32.vec(u->dtype().lanes());
  std::vector<const UOp *> src;
  for (const UOp *s : u->src())
    src.push_back(ctx.cast(s, f32));
  return ctx.cast(ctx.make(u->op(), f32, src, u->arg()), u->dtype());
}

/// op(a, ...) : h -> cast_h(op(cast_f32(a), ...)) where the target has no h arithmetic; mulacc and max everywhere.
/// Any arithmetic op with a half result: a new float op needs no entry here.
const UOp *halfInFloat32(const Match &m) {
  const UOp *u = m.root();
  if (u->hasShape() || u->op() == Op::Where || !isHalf(u->dtype())) // where only selects; comparisons give bool
    return nullptr;
  bool always = u->op() == Op::Mulacc || u->op() == Op::Max;
  if (!always && nativeHalf(m.user<const TargetDesc>(), u->dtype()))
    return nullptr;
  return inFloat32(u);
}

/// max(a, b) -> where(a != a | b < a | (a == b & -1 < bits(a)), a, b)  (f32, f64; targets without NanMax)
const UOp *maxByCompares(const Match &m) {
  const UOp *u = m.root();
  DType d = u->dtype();
  Scalar s = d.element().scalar();
  if (u->hasShape() || (s != Scalar::F32 && s != Scalar::F64) || m.user<const TargetDesc>().has(native::NanMax))
    return nullptr;
  Context &ctx = u->ctx();
  const UOp *a = u->src(0);
  const UOp *b = u->src(1);
  DType bitsType = (s == Scalar::F32 ? dt::I32 : dt::I64).vec(d.lanes());
  const UOp *bits = ctx.make(Op::Bitcast, bitsType, {a});
  const UOp *positive = ctx.alu(Op::Cmplt, {ctx.constInt(bitsType, -1), bits}); // +0 and positive values
  const UOp *nan = ctx.alu(Op::Cmpne, {a, a});
  const UOp *larger = ctx.alu(Op::Cmplt, {b, a});
  const UOp *tie = ctx.alu(Op::And, {ctx.alu(Op::Cmpeq, {a, b}), positive});
  const UOp *takeA = ctx.alu(Op::Or, {ctx.alu(Op::Or, {nan, larger}), tie});
  return ctx.alu(Op::Where, {takeA, a, b});
}

} // namespace

const UOp *runEmulateFloats(const UOp *root, PassContext &pc) {
  static const PatternMatcher pm(
      "emulate-floats",
      {{UPat::any(group::alu()), halfInFloat32, "op(a, ...) : h -> cast_h(op(cast_f32(a), ...))  (no h arithmetic)"},
       {UPat::op(Op::Max, {UPat::var("a"), UPat::var("b")}), maxByCompares,
        "max(a, b) -> where(a != a | b < a | (a == b & -1 < bits(a)), a, b)  (no NaN-propagating max)"}});
  RewriteOptions opts;
  opts.user = const_cast<TargetDesc *>(&pc.target);
  return graphRewrite(root, pm, opts);
}

} // namespace tgc
