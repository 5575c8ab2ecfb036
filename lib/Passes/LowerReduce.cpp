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
// load after the loops close (tinygrad's reduce_to_acc). Accumulator ids are unique in the program.

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
  const UOp *update = ctx.make(Op::Store, dt::Void, {at(acc), ctx.make(op, d, {current, r->src(0)})});
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
