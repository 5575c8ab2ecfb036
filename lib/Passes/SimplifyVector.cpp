//===- SimplifyVector.cpp - Lane selection rules ----------------*- C++ -*-===//
// gep and vectorize cancel: what expand, devectorize and coalesce write folds back to the values it names.
//===----------------------------------------------------------------------===//

#include "Passes/SimplifyRules.h"

namespace tgc::simplify {
namespace {

std::vector<int64_t> lanesOf(const UOp *gep) { return gep->arg().intTuple(); }

/// Whether `lanes` are all of v's lanes, in order.
bool allLanesInOrder(const UOp *v, const std::vector<int64_t> &lanes) {
  bool identity = int64_t(lanes.size()) == v->dtype().lanes();
  for (size_t i = 0; i < lanes.size() && identity; ++i)
    identity = lanes[i] == int64_t(i);
  return identity;
}

/// A gep of the lanes of v, or v itself when the lanes are all of v in order.
const UOp *select(const UOp *v, const std::vector<int64_t> &lanes) {
  if (allLanesInOrder(v, lanes))
    return v;
  std::vector<Arg> args(lanes.begin(), lanes.end());
  return v->ctx().make(Op::Gep, v->dtype().element().vec(uint16_t(lanes.size())), {v}, Arg(args));
}

/// gep(vectorize(x0, x1, ...), [i, j]) -> vectorize(xi, xj), or xi for one lane
const UOp *gepOfVectorize(const Match &m) {
  const UOp *g = m.root();
  const UOp *v = g->src(0);
  std::vector<const UOp *> picked;
  for (int64_t l : lanesOf(g))
    picked.push_back(v->src(size_t(l)));
  if (picked.size() == 1)
    return picked[0];
  return g->ctx().make(Op::Vectorize, g->dtype(), picked);
}

/// gep(c, lanes) -> c  (a vector constant has its value in every lane)
const UOp *gepOfConst(const Match &m) {
  const UOp *g = m.root();
  return g->ctx().make(Op::Const, g->dtype(), {}, g->src(0)->arg());
}

/// gep(gep(x, a), b) -> gep(x, a[b])
const UOp *gepOfGep(const Match &m) {
  const UOp *g = m.root();
  std::vector<int64_t> inner = lanesOf(g->src(0));
  std::vector<int64_t> lanes;
  for (int64_t l : lanesOf(g))
    lanes.push_back(inner[size_t(l)]);
  return select(g->src(0)->src(0), lanes);
}

/// gep(x, [0, 1, ..., n-1]) -> x  when x has n lanes
const UOp *gepIdentity(const Match &m) {
  const UOp *g = m.root();
  return allLanesInOrder(g->src(0), lanesOf(g)) ? g->src(0) : nullptr; // no gep rebuilt only to compare
}

/// vectorize(gep(x, [i]), gep(x, [j]), ...) -> gep(x, [i, j, ...]);  vectorize(c, c, ...) -> c
const UOp *vectorizeOfLanes(const Match &m) {
  const UOp *v = m.root();
  const UOp *first = v->src(0);
  bool sameConst = first->isConst();
  bool sameGep = first->op() == Op::Gep && first->dtype().lanes() == 1;
  std::vector<int64_t> lanes;
  for (const UOp *s : v->src()) {
    sameConst = sameConst && s == first;
    sameGep = sameGep && s->op() == Op::Gep && s->src(0) == first->src(0) && s->dtype().lanes() == 1;
    if (sameGep)
      lanes.push_back(lanesOf(s)[0]);
  }
  if (sameConst)
    return v->ctx().make(Op::Const, v->dtype(), {}, first->arg());
  if (sameGep)
    return select(first->src(0), lanes);
  return nullptr;
}

} // namespace

std::vector<Rule> vectorRules() {
  UPat gep = UPat::any({Op::Gep});
  return {
      {UPat::op(Op::Gep, {UPat::any({Op::Vectorize})}), gepOfVectorize, "gep(vectorize(x0, x1, ...), [i]) -> xi"},
      {UPat::op(Op::Gep, {UPat::any({Op::Const})}), gepOfConst, "gep(c, lanes) -> c"},
      {UPat::op(Op::Gep, {gep}), gepOfGep, "gep(gep(x, a), b) -> gep(x, a[b])"},
      {gep, gepIdentity, "gep(x, [0, 1, ..., n-1]) -> x  (x has n lanes)"},
      {UPat::any({Op::Vectorize}), vectorizeOfLanes,
       "vectorize(gep(x, [i]), gep(x, [j])) -> gep(x, [i, j]);  vectorize(c, c, ...) -> c"},
  };
}

} // namespace tgc::simplify
