//===- TensorCores.cpp - The tc action: a matmul reduce becomes warp mma ops -*- C++ -*-===//
// tc:AXIS:0 turns reduce(cast(a) * cast(b), k) over reduce range AXIS into a loop of `wmma` ops, one warp per
// m x n tile of the output, each lane holding its fragments of A, B and the accumulator (IR/TensorCore.h).
//===----------------------------------------------------------------------===//
//
// The kernel must reduce (add, f32) a product of two f16 (or bf16) values cast to f32, `a` depending on a loop range
// m and on k but not on n, `b` on k and n but not on m (matmuls, and convolutions with their channel reduce as k);
// of several candidates for m (or n), the largest.
// With the tensor core's sizes (M, N, K) dividing the ranges (m16n8k16: 16, 8, 16):
//   m -> m_o * M + row,  n -> n_o * N + col,  k -> k_o * K + kk          lane: a new range of kind "warp" (32)
//   reduce(cast(a) * cast(b), k, r...)  ->  reduce(wmma(A, B, 0, lane), k_o, r...) : f32 x cElems
//       A = vectorize(a[row, kk := element j of the lane's A fragment] for j < aElems), B likewise
//   end(store(..., v(R, m, n)), m, n, ...)  ->  end(noop(store(..., v(gep(R', j), row_j, col_j)) for j < cElems),
//                                                   m_o, n_o, ..., lane)
// where (row_j, col_j) is element j of the lane's C fragment. Every lane computes its own output elements, so the
// kernel's meaning does not change; the interpreter runs wmma as the warp-wide operation it is. The result has no
// upcast axes: the action applies to kernels without upcast, unroll or warp ranges, and other actions come after it.

#include "IR/Rewrite.h"
#include "IR/TensorCore.h"
#include "Passes/Linearize.h"
#include "Passes/OptAction.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace tgc {
namespace {

/// The f16 (or bf16) value whose cast to f32 u is: x for cast(x), where(c, x, 0) for where(c, cast(x), 0) (a
/// padded operand); nullptr otherwise.
const UOp *halfOperand(const UOp *u, const TensorCore &tc) {
  if (u->op() == Op::Cast && u->dtype() == dt::F32 && tc.takes(u->src(0)->dtype()))
    return u->src(0);
  bool zero =
      u->op() == Op::Where && u->src(2)->isConst() && u->src(2)->arg().isFloat() && u->src(2)->arg().getFloat() == 0.0;
  const UOp *x = zero ? halfOperand(u->src(1), tc) : nullptr;
  if (!x)
    return nullptr;
  return u->ctx().make(Op::Where, x->dtype(), {u->src(0), x, u->ctx().make(Op::Const, x->dtype(), {}, Arg(0.0))});
}

/// The largest (then innermost) loop range of the kernel that `on` depends on and `off` does not, with a size
/// `multiple` divides: the most tiles to spread over warps and to upcast.
const UOp *pickAxis(const std::vector<const UOp *> &loops, const UOp *on, const UOp *off, int64_t multiple) {
  const UOp *best = nullptr;
  for (auto it = loops.rbegin(); it != loops.rend(); ++it)
    if (rangeSize(*it) % multiple == 0 && dependsOn(on, *it) && !dependsOn(off, *it))
      if (!best || rangeSize(*it) > rangeSize(best))
        best = *it;
  return best;
}

class TensorCoreAction {
public:
  TensorCoreAction(const UOp *kernel, const TensorCore &tc) : kernel_(kernel), tc_(tc), ctx_(kernel->ctx()) {}

  /// The m and n ranges the action would use, nullptr when it does not apply.
  std::pair<const UOp *, const UOp *> axes(int64_t axis) {
    return select(axis) ? std::make_pair(m_, n_) : std::make_pair(nullptr, nullptr);
  }

  const UOp *run(int64_t axis) {
    const UOp *a = select(axis);
    return a ? rewrite(reduce_, a, b_) : nullptr;
  }

private:
  /// Find the reduce, its operands and the m, n and k ranges; the `a` operand (nullptr when the action does not
  /// apply; b_ is the other).
  const UOp *select(int64_t axis) {
    std::vector<const UOp *> loops;
    const UOp *reduce = nullptr;
    for (const UOp *u : toposort(kernel_)) {
      if (u->op() == Op::Range && u->arg().isTuple()) {
        nextId_ = std::max(nextId_, rangeId(u) + 1);
        const std::string &kind = rangeKind(u);
        if (kind == "upcast" || kind == "unroll" || kind == "warp")
          return nullptr;
        if (kind == "loop" && u->src(0)->isConst())
          loops.push_back(u);
        if (rangeId(u) == axis)
          k_ = u;
      }
      if (u->op() == Op::Reduce) {
        if (reduce)
          return nullptr; // one reduce per kernel
        reduce = u;
      }
    }
    reduce_ = reduce;
    if (!k_ || !reduce || rangeKind(k_) != "reduce" || !k_->src(0)->isConst() || rangeSize(k_) % tc_.k != 0)
      return nullptr;
    if (reduce->arg().getOp() != Op::Add || reduce->dtype() != dt::F32 || reduce->src(0)->op() != Op::Mul ||
        std::find(reduce->src().begin() + 1, reduce->src().end(), k_) == reduce->src().end())
      return nullptr;
    const UOp *a = halfOperand(reduce->src(0)->src(0), tc_), *b = halfOperand(reduce->src(0)->src(1), tc_);
    if (!a || !b || a->dtype() != b->dtype())
      return nullptr;
    std::sort(loops.begin(), loops.end(), rangeIdLess);
    m_ = pickAxis(loops, a, b, tc_.m);
    n_ = pickAxis(loops, b, a, tc_.n);
    if (!m_ || !n_) { // the operands in the other order: a * b = b * a
      std::swap(a, b);
      m_ = pickAxis(loops, a, b, tc_.m);
      n_ = pickAxis(loops, b, a, tc_.n);
    }
    if (!m_ || !n_ || !dependsOn(a, k_) || !dependsOn(b, k_))
      return nullptr;
    b_ = b;
    return a;
  }

  const UOp *idx(int64_t v) { return ctx_.constInt(dt::Index, v); }

  /// A range's outer part (size n / tile, the range's id and kind), nullptr when the tile is all of it.
  const UOp *outer(const UOp *r, int64_t tile) {
    if (rangeSize(r) == tile)
      return nullptr;
    return ctx_.make(Op::Range, r->dtype(), {ctx_.constInt(r->dtype(), rangeSize(r) / tile)}, r->arg());
  }

  /// outer * tile + the fragment coordinate of this lane (terms with a zero factor left out).
  const UOp *split(const UOp *outerRange, int64_t tile, FragCoord c) {
    const UOp *v = nullptr;
    auto term = [&](const UOp *x) { v = v ? ctx_.alu(Op::Add, {v, x}) : x; };
    if (outerRange)
      term(ctx_.alu(Op::Mul, {outerRange, idx(tile)}));
    if (c.g)
      term(c.g == 1 ? group_ : ctx_.alu(Op::Mul, {group_, idx(c.g)}));
    if (c.t)
      term(c.t == 1 ? thread_ : ctx_.alu(Op::Mul, {thread_, idx(c.t)}));
    if (c.off || !v)
      term(idx(c.off));
    return v;
  }

  const UOp *rewrite(const UOp *reduce, const UOp *a, const UOp *b) {
    lane_ = ctx_.make(Op::Range, dt::Index, {idx(tc_.warp)}, Arg::tuple({Arg(nextId_), Arg(std::string("warp"))}));
    group_ = ctx_.alu(Op::Idiv, {lane_, idx(4)});
    thread_ = ctx_.alu(Op::Mod, {lane_, idx(4)});
    const UOp *mo = outer(m_, tc_.m), *no = outer(n_, tc_.n), *ko = outer(k_, tc_.k);
    std::vector<const UOp *> aLanes, bLanes;
    for (int j = 0; j < tc_.aElems; ++j)
      aLanes.push_back(
          substitute(a, {{m_, split(mo, tc_.m, tc_.a(j).first)}, {k_, split(ko, tc_.k, tc_.a(j).second)}}));
    for (int j = 0; j < tc_.bElems; ++j)
      bLanes.push_back(
          substitute(b, {{k_, split(ko, tc_.k, tc_.b(j).first)}, {n_, split(no, tc_.n, tc_.b(j).second)}}));
    DType in = a->dtype();
    DType acc = dt::F32.vec(uint16_t(tc_.cElems));
    const UOp *A = ctx_.make(Op::Vectorize, in.vec(uint16_t(tc_.aElems)), aLanes);
    const UOp *B = ctx_.make(Op::Vectorize, in.vec(uint16_t(tc_.bElems)), bLanes);
    const UOp *zero = ctx_.make(Op::Const, acc, {}, Arg(0.0));
    const UOp *mma = ctx_.make(Op::Wmma, acc, {A, B, zero, lane_}, Arg(std::string(tc_.name)));
    std::vector<const UOp *> loops = {mma};
    for (size_t i = 1; i < reduce->numSrc(); ++i)
      if (reduce->src(i) != k_)
        loops.push_back(reduce->src(i));
    if (ko)
      loops.push_back(ko);
    std::sort(loops.begin() + 1, loops.end(), rangeNestsBefore);
    const UOp *total = loops.size() == 1 ? mma : ctx_.make(Op::Reduce, acc, loops, reduce->arg());
    std::vector<const UOp *> items;
    for (const UOp *item : kernel_->src()) {
      const UOp *out = storeTiles(item, reduce, total, mo, no);
      if (!out)
        return nullptr;
      items.push_back(out);
    }
    return ctx_.make(Op::Sink, kernel_->dtype(), items, kernel_->arg());
  }

  /// A sink item with the output tile stored by fragments: end(x, m, n, r...) -> end(noop(x_j...), m_o, n_o, r...,
  /// lane); an item that uses none of m, n and the reduce is kept; any other makes the action not apply.
  const UOp *storeTiles(const UOp *item, const UOp *reduce, const UOp *total, const UOp *mo, const UOp *no) {
    if (!dependsOn(item, m_) && !dependsOn(item, n_) && !dependsOn(item, reduce))
      return item;
    if (item->op() != Op::End || std::find(item->src().begin() + 1, item->src().end(), m_) == item->src().end() ||
        std::find(item->src().begin() + 1, item->src().end(), n_) == item->src().end())
      return nullptr;
    std::vector<const UOp *> parts;
    for (int j = 0; j < tc_.cElems; ++j) {
      const UOp *value = ctx_.make(Op::Gep, dt::F32, {total}, Arg::tuple({Arg(int64_t(j))}));
      parts.push_back(substitute(
          item->src(0),
          {{reduce, value}, {m_, split(mo, tc_.m, tc_.c(j).first)}, {n_, split(no, tc_.n, tc_.c(j).second)}}));
    }
    std::vector<const UOp *> src = {ctx_.make(Op::Noop, dt::Void, parts)};
    for (size_t i = 1; i < item->numSrc(); ++i) {
      const UOp *r = item->src(i) == m_ ? mo : item->src(i) == n_ ? no : item->src(i);
      if (r)
        src.push_back(r);
    }
    src.push_back(lane_);
    std::sort(src.begin() + 1, src.end(), rangeNestsBefore);
    return ctx_.make(Op::End, dt::Void, src);
  }

  const UOp *kernel_;
  const TensorCore &tc_;
  Context &ctx_;
  int64_t nextId_ = 0;
  const UOp *k_ = nullptr, *m_ = nullptr, *n_ = nullptr, *reduce_ = nullptr, *b_ = nullptr;
  const UOp *lane_ = nullptr, *group_ = nullptr, *thread_ = nullptr;
};

} // namespace

const UOp *applyTensorCore(const UOp *kernel, int64_t axis) {
  return TensorCoreAction(kernel, defaultTensorCore()).run(axis);
}

std::optional<std::pair<int64_t, int64_t>> tensorCoreAxes(const UOp *kernel, int64_t axis) {
  auto [m, n] = TensorCoreAction(kernel, defaultTensorCore()).axes(axis);
  if (!m)
    return std::nullopt;
  return std::make_pair(rangeId(m), rangeId(n));
}

} // namespace tgc
