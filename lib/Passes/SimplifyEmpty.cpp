//===- SimplifyEmpty.cpp - Rules for tensors with no elements and loops that never run -*- C++ -*-===//
// A tensor with no elements is a constant; a reduce of nothing is its empty value; a loop of 0 trips does nothing.
//===----------------------------------------------------------------------===//
//
// These rules keep zero-size tensors out of kernels: without them, index arithmetic over a range of 0 trips (an
// empty value range) could fold into addresses that no longer depend on the range, and linearize would hoist the
// loads and stores out of the loop that guards them.

#include "IR/Eval.h"
#include "Passes/SimplifyRules.h"

namespace tgc::simplify {
namespace {

bool isZeroTrip(const UOp *r) { return r->op() == Op::Range && r->src(0)->isConst() && r->src(0)->constInt() <= 0; }

bool anyZeroTrip(const UOp *u) {
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (isZeroTrip(u->src(i)))
      return true;
  return false;
}

/// A computed tensor with no elements: its value is never read.
const UOp *emptyTensor(const Match &m) {
  const UOp *u = m.root();
  if (!u->hasShape() || u->numel() != 0)
    return nullptr;
  return u->ctx().constLikeInt(u, 0);
}

/// reduce_axis over an operand with no elements: every output element is the reduce of nothing.
const UOp *emptyReduceAxis(const Match &m) {
  const UOp *u = m.root();
  if (u->src(0)->numel() != 0 || u->numel() == 0)
    return nullptr;
  Op op = u->arg().getTuple()[0].getOp();
  return u->ctx().make(Op::Const, u->dtype(), {}, emptyReduceValue(op, u->dtype()), u->shapeVec(), {}, u->dimVars());
}

const UOp *deadEnd(const Match &m) {
  return anyZeroTrip(m.root()) ? m.ctx().make(Op::Noop, dt::Void, std::span<const UOp *const>{}) : nullptr;
}

const UOp *emptyReduce(const Match &m) {
  const UOp *u = m.root();
  return anyZeroTrip(u) ? u->ctx().make(Op::Const, u->dtype(), {}, emptyReduceValue(u->arg().getOp(), u->dtype()))
                        : nullptr;
}

} // namespace

std::vector<Rule> emptyRules() {
  OpSet computed = group::elementwise() |
                   OpSet{Op::Reshape, Op::Permute, Op::Expand, Op::Pad, Op::Shrink, Op::Flip, Op::Contiguous, Op::Copy};
  return {
      {UPat::any({Op::ReduceAxis}), emptyReduceAxis, "reduce_axis(x) -> c  when x has no elements (sum: 0)"},
      {UPat::any(computed | OpSet{Op::ReduceAxis}), emptyTensor, "x -> const  when x has no elements"},
      {UPat::any({Op::End}), deadEnd, "end(x, ..., range(0), ...) -> noop  (the loop never runs)"},
      {UPat::any({Op::Reduce}), emptyReduce, "reduce(x, ..., range(0), ...) -> c  (sum of nothing: 0)"},
  };
}

} // namespace tgc::simplify
