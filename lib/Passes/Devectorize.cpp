//===- Devectorize.cpp - Vector values into lanes for scalar targets -*- C++ -*-===//
// For targets without vector types: every vector ALU op, load, store and register becomes one scalar per lane.
//===----------------------------------------------------------------------===//
//
//   op(a, b) : T x n               -> vectorize(op(gep(a, 0), gep(b, 0)), ..., op(gep(a, n-1), gep(b, n-1)))
//   load(index(b, i) : ptr<T x n>) -> vectorize(load(index(b, i) : ptr<T>), ..., load(index(b, i + n-1)))
//   store(index(b, i) : ptr<T x n>, v) -> noop(store(index(b, i), gep(v, 0)), ..., store(index(b, i + n-1), ...))
//   define_reg [id, k] : ptr<T x n, reg> -> define_reg [id, k*n] : ptr<T, reg>   (after follows its operand)
// Index offsets count scalar elements of the buffer, so a vector access at i is the scalar accesses i .. i+n-1.
// The simplify rules on gep and vectorize then cancel the lane plumbing, leaving scalar code only. Targets with
// vector ALU ops (TargetDesc::vectorALU) keep their vectors and the pass changes nothing.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/SimplifyRules.h"

namespace tgc {
namespace {

const UOp *laneOf(const UOp *v, int64_t l) {
  if (v->dtype().lanes() == 1)
    return v;
  return v->ctx().make(Op::Gep, v->dtype().element(), {v}, Arg::tuple({Arg(l)}));
}

/// op(a, b) : T x n -> vectorize(op(a_0, b_0), ...)
const UOp *splitAlu(const Match &m) {
  const UOp *u = m.root();
  if (!u->dtype().isVector())
    return nullptr;
  Context &ctx = u->ctx();
  std::vector<const UOp *> lanes;
  for (int64_t l = 0; l < u->dtype().lanes(); ++l) {
    std::vector<const UOp *> src;
    for (const UOp *s : u->src())
      src.push_back(laneOf(s, l));
    lanes.push_back(ctx.make(u->op(), u->dtype().element(), src, u->arg()));
  }
  return ctx.make(Op::Vectorize, u->dtype(), lanes);
}

/// A vector constant is its value in every lane.
const UOp *splitConst(const Match &m) {
  const UOp *u = m.root();
  if (!u->dtype().isVector())
    return nullptr;
  const UOp *c = u->ctx().make(Op::Const, u->dtype().element(), {}, u->arg());
  return u->ctx().make(Op::Vectorize, u->dtype(), std::vector<const UOp *>(u->dtype().lanes(), c));
}

/// The scalar pointer to lane l of a vector pointer index(b, i[, valid]) : ptr<T x n>.
const UOp *lanePointer(const UOp *p, int64_t l) {
  Context &ctx = p->ctx();
  std::vector<const UOp *> src(p->src().begin(), p->src().end());
  if (l != 0)
    src[1] = ctx.alu(Op::Add, {src[1], ctx.constInt(src[1]->dtype(), l)});
  DType scalarPtr = p->dtype().pointee().element().ptr(p->dtype().addrSpace());
  return ctx.make(Op::Index, scalarPtr, src, p->arg());
}

bool isVectorPointer(const UOp *p) { return p->op() == Op::Index && p->dtype().pointee().isVector(); }

const UOp *splitLoad(const Match &m) {
  const UOp *u = m.root();
  if (!isVectorPointer(u->src(0)))
    return nullptr;
  Context &ctx = u->ctx();
  std::vector<const UOp *> lanes;
  for (int64_t l = 0; l < u->dtype().lanes(); ++l) {
    std::vector<const UOp *> src = {lanePointer(u->src(0), l)};
    for (size_t i = 1; i < u->numSrc(); ++i)
      src.push_back(laneOf(u->src(i), i == 1 ? l : 0));
    lanes.push_back(ctx.make(Op::Load, u->dtype().element(), src));
  }
  return ctx.make(Op::Vectorize, u->dtype(), lanes);
}

const UOp *splitStore(const Match &m) {
  const UOp *u = m.root();
  if (!isVectorPointer(u->src(0)))
    return nullptr;
  Context &ctx = u->ctx();
  std::vector<const UOp *> stores;
  for (int64_t l = 0; l < u->src(1)->dtype().lanes(); ++l) {
    std::vector<const UOp *> src = {lanePointer(u->src(0), l), laneOf(u->src(1), l)};
    if (u->numSrc() == 3)
      src.push_back(u->src(2));
    stores.push_back(ctx.make(Op::Store, dt::Void, src));
  }
  return ctx.make(Op::Noop, dt::Void, stores);
}

/// define_reg [id, k] : ptr<T x n, reg> -> define_reg [id, k*n] : ptr<T, reg>
const UOp *splitRegister(const Match &m) {
  const UOp *u = m.root();
  DType e = u->dtype().pointee();
  if (!e.isVector())
    return nullptr;
  const Arg::Tuple &a = u->arg().getTuple();
  Arg arg = Arg::tuple({a[0], Arg(a[1].getInt() * e.lanes())});
  return u->ctx().make(u->op(), e.element().ptr(u->dtype().addrSpace()), {}, arg);
}

/// after(x, deps...) takes the dtype of x once x changed type
const UOp *retypeAfter(const Match &m) {
  const UOp *u = m.root();
  if (u->dtype() == u->src(0)->dtype())
    return nullptr;
  return u->ctx().withDType(u, u->src(0)->dtype());
}

} // namespace

const UOp *runDevectorize(const UOp *root, PassContext &pc) {
  if (pc.target.vectorALU)
    return root; // the renderer has vector types
  static const PatternMatcher pm(
      "devectorize",
      {{UPat::any(group::elementwise() | OpSet{Op::Mulacc}), splitAlu,
        "op(a, b) : T x n -> vectorize(op(gep(a, 0), gep(b, 0)), ...)"},
       {UPat::any({Op::Const}), splitConst, "c : T x n -> vectorize(c, ..., c)"},
       {UPat::any({Op::Load}), splitLoad, "load(b[i] : ptr<T x n>) -> vectorize(load(b[i]), ..., load(b[i+n-1]))"},
       {UPat::any({Op::Store}), splitStore, "store(b[i] : ptr<T x n>, v) -> noop(store(b[i], gep(v, 0)), ...)"},
       {UPat::any({Op::DefineReg, Op::DefineLocal}), splitRegister,
        "define_reg [id, k] : ptr<T x n> -> define_reg [id, k*n] : ptr<T>"},
       {UPat::any({Op::After}), retypeAfter, "after(x, deps) follows the dtype of x"}});
  const UOp *out = graphRewrite(root, pm);
  return out == root ? root : simplifyExpression(out);
}

} // namespace tgc
