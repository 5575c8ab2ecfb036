//===- LowerReduce.cpp - Reduces to accumulators ----------------*- C++ -*-===//
// reduce(v, r...) becomes a register accumulator: set to the identity before the loops, updated in them, read after.
//===----------------------------------------------------------------------===//
//
//   acc  = define_reg [id, 1] : ptr<T, reg>
//   init = store(index(after(acc, outer...), 0), identity)     outer: the other ranges v depends on
//   upd  = store(index(acc, 0), op(load(index(after(acc, init, r...), 0)), v))   inside the loops over r...
//   out  = load(index(after(acc, end(upd, r...)), 0))                          after them
// `after` orders the accumulator's uses: the initial store inside the loops around the reduce (so each output
// element starts from the identity), the load in the loop after the initial store and inside the ranges, the final
// load after the loops close (tinygrad's reduce_to_acc). Accumulator ids are unique in the program. A sum of wmma
// results with a zero accumulator feeds the accumulator to the tensor core: acc + wmma(a, b, 0) = wmma(a, b, acc).

#include "IR/Eval.h"
#include "IR/Rewrite.h"
#include "Passes/Pass.h"

#include <algorithm>
#include <limits>

namespace tgc {
namespace {

struct State {
  int64_t nextId = 0;
};

const UOp *identityOf(Context &ctx, Op op, DType d) { return ctx.make(Op::Const, d, {}, reduceIdentity(op, d)); }

/// Is range r closed by an end inside v (a loop of an inner, already lowered reduce)?
bool closedInside(const UOp *v, const UOp *r) {
  for (const UOp *n : toposort(v))
    if (n->op() == Op::End && std::find(n->src().begin() + 1, n->src().end(), r) != n->src().end())
      return true;
  return false;
}

bool isZero(const UOp *u) { return u->isConst() && u->arg().isFloat() && u->arg().getFloat() == 0.0; }

bool isFreshWmma(const UOp *u) { return u->op() == Op::Wmma && isZero(u->src(2)); }

/// wmma(a, b, 0, lane) taking `acc` as its accumulator.
const UOp *withAccumulator(const UOp *w, const UOp *acc) {
  return w->ctx().make(Op::Wmma, w->dtype(), {w->src(0), w->src(1), acc, w->src(3)}, w->arg());
}

/// acc + vectorize(gep(w0, 0..n-1), gep(w1, 0..n-1), ...) for the lanes of several tensor core tiles (expand's
/// form for upcast tiles) -> vectorize(gep(w0', ...), ...) with wi' = wmma(ai, bi, gep(acc, its lanes), lane);
/// nullptr when v is not of that form.
const UOp *accumulateTiles(const UOp *acc, const UOp *v) {
  if (v->op() != Op::Vectorize)
    return nullptr;
  Context &ctx = v->ctx();
  std::vector<const UOp *> parts;
  for (size_t i = 0; i < v->numSrc();) {
    const UOp *g = v->src(i);
    if (g->op() != Op::Gep || !isFreshWmma(g->src(0)))
      return nullptr;
    const UOp *w = g->src(0);
    int64_t n = w->dtype().lanes();
    std::vector<Arg> lanes;
    for (int64_t j = 0; j < n; ++j) {
      const UOp *s = i + size_t(j) < v->numSrc() ? v->src(i + size_t(j)) : nullptr;
      if (!s || s->op() != Op::Gep || s->src(0) != w || s->arg().intTuple() != std::vector<int64_t>{j})
        return nullptr;
      lanes.push_back(Arg(int64_t(i) + j));
    }
    const UOp *tile = withAccumulator(w, ctx.make(Op::Gep, w->dtype(), {acc}, Arg(lanes)));
    for (int64_t j = 0; j < n; ++j)
      parts.push_back(ctx.make(Op::Gep, v->dtype().element(), {tile}, Arg::tuple({Arg(j)})));
    i += size_t(n);
  }
  return ctx.make(Op::Vectorize, v->dtype(), parts);
}

/// acc op v; a tensor core adds its accumulator itself: acc + wmma(a, b, 0, lane) -> wmma(a, b, acc, lane), also
/// for several tiles side by side (accumulateTiles).
const UOp *accumulate(Op op, const UOp *acc, const UOp *v) {
  if (op == Op::Add && isFreshWmma(v))
    return withAccumulator(v, acc);
  if (const UOp *tiles = op == Op::Add ? accumulateTiles(acc, v) : nullptr)
    return tiles;
  return v->ctx().make(op, v->dtype(), {acc, v});
}

const UOp *lowerReduce(const Match &m) {
  const UOp *r = m.root();
  Context &ctx = r->ctx();
  State &st = m.user<State>();
  DType d = r->dtype();
  Op op = r->arg().getOp();
  const UOp *acc = ctx.make(Op::DefineReg, d.ptr(AddrSpace::Reg), {}, Arg::tuple({Arg(st.nextId++), Arg(1)}));
  const UOp *zero = ctx.constInt(dt::Index, 0);
  auto at = [&](const UOp *base) { return ctx.make(Op::Index, base->dtype(), {base, zero}); };
  std::vector<const UOp *> outer = {acc};
  for (const UOp *n : toposort(r->src(0))) {
    bool own = std::find(r->src().begin() + 1, r->src().end(), n) != r->src().end();
    if (n->op() == Op::Range && !own && !closedInside(r->src(0), n))
      outer.push_back(n);
  }
  const UOp *initAt = outer.size() > 1 ? ctx.make(Op::After, acc->dtype(), outer) : acc;
  const UOp *init = ctx.make(Op::Store, dt::Void, {at(initAt), identityOf(ctx, op, d)});
  std::vector<const UOp *> inLoop = {acc, init};
  for (size_t i = 1; i < r->numSrc(); ++i)
    inLoop.push_back(r->src(i));
  const UOp *current = ctx.make(Op::Load, d, {at(ctx.make(Op::After, acc->dtype(), inLoop))});
  const UOp *update = ctx.make(Op::Store, dt::Void, {at(acc), accumulate(op, current, r->src(0))});
  std::vector<const UOp *> endSrc = {update};
  for (size_t i = 1; i < r->numSrc(); ++i)
    endSrc.push_back(r->src(i));
  const UOp *end = ctx.make(Op::End, dt::Void, endSrc);
  return ctx.make(Op::Load, d, {at(ctx.make(Op::After, acc->dtype(), {acc, end}))});
}

} // namespace

const UOp *runLowerReduce(const UOp *root, PassContext &pc) {
  static const PatternMatcher pm("lower-reduce", {{UPat::any({Op::Reduce}), lowerReduce,
                                                   "reduce(v, r) -> load(acc) after end(store(acc, acc op v), r)"}});
  State st;
  RewriteOptions opts;
  opts.user = &st;
  return graphRewrite(root, pm, opts);
}

} // namespace tgc
