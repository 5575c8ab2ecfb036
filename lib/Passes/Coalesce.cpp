//===- Coalesce.cpp - Lane accesses to adjacent addresses become vector accesses -*- C++ -*-===//
// vectorize(load(b[i]), load(b[i+1]), ...) -> load(b[i] : ptr<T x n>); a noop of stores to b[i], b[i+1] likewise.
//===----------------------------------------------------------------------===//
//
// Lanes are grouped by (buffer, base, valid) where each address is base + constant (what expand and simplify
// leave); within a group, runs of consecutive offsets are cut into power-of-two pieces of at most the target's
// widest access (kept whole where the target has masked accesses), and each piece of two or more lanes becomes one
// vector access. Strided load lanes (stride 2-4)
// are read through spans: one or two overlapping vector loads over [first, last] and a shuffle. A vectorize whose lanes
// came from several pieces becomes a vectorize of lanes of those pieces (one shuffle). Lanes with different valid masks
// or gates never share an access, so masking stays exact. Only for targets with vector types (TargetDesc::vectorALU).

#include "Passes/Coalesce.h"
#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/SimplifyRules.h"

#include <algorithm>
#include <bit>
#include <map>

namespace tgc {
namespace {

/// An address as base + offset (base nullptr when the address is a constant).
struct Address {
  const UOp *index = nullptr; // the index node
  const UOp *base = nullptr;
  int64_t offset = 0;
};

/// index(buf, base + c[, valid]) -> (buf, base, c, valid); nullopt for anything else.
std::optional<Address> addressOf(const UOp *p) {
  if (p->op() != Op::Index || p->dtype().pointee().isVector() || p->numSrc() < 2)
    return std::nullopt;
  Address a{p, p->src(1), 0};
  while (a.base && a.base->op() == Op::Add && a.base->src(1)->isConst()) {
    a.offset = int64_t(uint64_t(a.offset) + uint64_t(a.base->src(1)->constInt())); // wraps like index math
    a.base = a.base->src(0);
  }
  if (a.base && a.base->isConst()) {
    a.offset = int64_t(uint64_t(a.offset) + uint64_t(a.base->constInt()));
    a.base = nullptr;
  }
  return a;
}

/// Which lanes share one access: same buffer, base and valid mask.
using GroupKey = std::tuple<const UOp *, const UOp *, const UOp *>;

GroupKey keyOf(const Address &a) {
  const UOp *p = a.index;
  return {p->src(0), a.base, p->numSrc() == 3 ? p->src(2) : nullptr};
}

/// A run of consecutive offsets [start, start + n) served by one access.
struct Piece {
  int64_t start;
  int64_t n;
  const UOp *index; // the lane index at `start`
};

DType vectorPtr(const UOp *index, int64_t n) {
  DType p = index->dtype();
  return p.pointee().element().vec(uint16_t(n)).ptr(p.addrSpace());
}

/// The index of `lane`'s buffer at address base + offset (same buffer, base and valid).
const UOp *indexAt(const Address &lane, int64_t offset) {
  if (offset == lane.offset)
    return lane.index;
  Context &ctx = lane.index->ctx();
  DType t = lane.index->src(1)->dtype();
  const UOp *addr = lane.base ? ctx.make(Op::Add, t, {lane.base, ctx.constInt(t, offset)}) : ctx.constInt(t, offset);
  std::vector<const UOp *> src(lane.index->src().begin(), lane.index->src().end());
  src[1] = addr;
  return ctx.make(Op::Index, lane.index->dtype(), src, lane.index->arg());
}

/// Spans of strided lanes: the offsets left alone by the runs (a stride-2 convolution's lanes 0, 2, 4, ...) are
/// read by one or two overlapping loads over [first, last] of at most maxLanes each, from which a shuffle picks
/// them. Every address read lies between two that a lane reads, so a load never leaves the buffer (lanes of one
/// group share their valid mask). Taken where each load serves at least two lanes and a quarter of the span is
/// read (strides up to 4; a transpose's stride-8 lanes stay scalar loads).
std::vector<Piece> spanPieces(const std::vector<int64_t> &singles, const std::map<int64_t, Address> &lanes,
                              int64_t maxLanes) {
  std::vector<Piece> pieces;
  for (size_t i = 0; i < singles.size();) {
    size_t j = i;
    while (j + 1 < singles.size() && singles[j + 1] - singles[i] < 2 * maxLanes)
      ++j;
    int64_t first = singles[i], last = singles[j];
    int64_t n = std::min<int64_t>(maxLanes, int64_t(std::bit_floor(uint64_t(last - first + 1))));
    int64_t loads = n == last - first + 1 ? 1 : 2;
    int64_t count = int64_t(j - i + 1);
    if (count < 2 * loads || 4 * count < last - first + 1) {
      pieces.push_back({first, 1, lanes.at(first).index});
      ++i;
      continue;
    }
    pieces.push_back({first, n, lanes.at(first).index});
    if (loads == 2)
      pieces.push_back({last - n + 1, n, indexAt(lanes.at(first), last - n + 1)});
    i = j + 1;
  }
  return pieces;
}

/// The pieces of each group, and for each lane its piece and position.
struct Plan {
  std::map<GroupKey, std::vector<Piece>> pieces;
  bool useful = false; // some piece has two or more lanes
};

/// Loads (`spans`) may also read strided lanes through spans; stores write runs only. Elements have `bits` bits.
Plan planAccesses(const std::vector<Address> &lanes, const TargetDesc &t, int bits, bool spans) {
  std::map<GroupKey, std::map<int64_t, Address>> offsets;
  for (const Address &a : lanes)
    offsets[keyOf(a)].emplace(a.offset, a);
  Plan plan;
  for (auto &[key, offs] : offsets) {
    std::vector<int64_t> sorted, singles;
    for (auto &[offset, a] : offs)
      sorted.push_back(offset);
    std::vector<Piece> &pieces = plan.pieces[key];
    for (const Run &r : cutRuns(sorted, t, bits)) {
      if (r.n == 1 && spans)
        singles.push_back(r.start);
      else
        pieces.push_back({r.start, r.n, offs.at(r.start).index});
    }
    for (const Piece &p : spanPieces(singles, offs, t.maxVectorAccess))
      pieces.push_back(p);
    for (const Piece &p : pieces)
      plan.useful = plan.useful || p.n > 1;
  }
  return plan;
}

const Piece &pieceOf(const Plan &plan, const Address &a) {
  for (const Piece &p : plan.pieces.at(keyOf(a)))
    if (a.offset >= p.start && a.offset < p.start + p.n)
      return p;
  internalError("coalesce: lane without a piece");
}

const UOp *coalesceLoads(const Match &m) { return coalesceLoadLanes(m.root(), m.user<TargetDesc>()); }

const UOp *coalesceStores(const Match &m) { return coalesceStoreLanes(m.root(), m.user<TargetDesc>()); }

} // namespace

std::vector<Run> cutRuns(const std::vector<int64_t> &sorted, const TargetDesc &t, int bits) {
  std::vector<Run> runs;
  for (size_t i = 0; i < sorted.size();) {
    int64_t run = 1;
    while (i + size_t(run) < sorted.size() && sorted[i + size_t(run)] == sorted[i] + run && run < t.maxVectorAccess)
      ++run;
    int64_t n = t.masksLanes(bits) ? run : 1;
    while (n * 2 <= run)
      n *= 2;
    runs.push_back({sorted[i], n});
    i += size_t(n);
  }
  return runs;
}

const UOp *coalesceLoadLanes(const UOp *v, const TargetDesc &t) {
  std::vector<Address> lanes;
  for (const UOp *s : v->src()) {
    if (s->op() != Op::Load || s->numSrc() != 1)
      return nullptr;
    std::optional<Address> a = addressOf(s->src(0));
    if (!a)
      return nullptr;
    lanes.push_back(*a);
  }
  Plan plan = planAccesses(lanes, t, v->dtype().element().bits(), true);
  if (!plan.useful)
    return nullptr;
  Context &ctx = v->ctx();
  DType e = v->dtype().element();
  std::map<const Piece *, const UOp *> loads; // piece -> its load
  std::vector<const UOp *> out;
  for (const Address &a : lanes) {
    const Piece &p = pieceOf(plan, a);
    const UOp *&load = loads[&p];
    if (!load) {
      const UOp *ptr =
          p.n == 1 ? p.index : ctx.make(Op::Index, vectorPtr(p.index, p.n), p.index->src(), p.index->arg());
      load = ctx.make(Op::Load, e.vec(uint16_t(p.n)), {ptr});
    }
    out.push_back(p.n == 1 ? load : ctx.make(Op::Gep, e, {load}, Arg::tuple({Arg(a.offset - p.start)})));
  }
  return simplifyNode(ctx.make(Op::Vectorize, v->dtype(), out));
}

const UOp *coalesceStoreLanes(const UOp *group, const TargetDesc &t) {
  std::vector<Address> lanes;
  std::vector<const UOp *> values;
  for (const UOp *s : group->src()) {
    if (s->op() != Op::Store || s->numSrc() != 2)
      return nullptr;
    std::optional<Address> a = addressOf(s->src(0));
    if (!a)
      return nullptr;
    lanes.push_back(*a);
    values.push_back(s->src(1));
  }
  if (values.empty())
    return nullptr;
  Plan plan = planAccesses(lanes, t, values[0]->dtype().element().bits(), false);
  if (!plan.useful)
    return nullptr;
  std::map<std::pair<GroupKey, int64_t>, const UOp *> valueAt;
  for (size_t i = 0; i < lanes.size(); ++i)
    if (!valueAt.emplace(std::make_pair(keyOf(lanes[i]), lanes[i].offset), values[i]).second)
      return nullptr; // two stores to one address: keep their order as written
  Context &ctx = group->ctx();
  std::vector<const UOp *> stores;
  for (auto &[key, pieces] : plan.pieces) {
    for (const Piece &p : pieces) {
      std::vector<const UOp *> vals;
      for (int64_t k = 0; k < p.n; ++k)
        vals.push_back(valueAt.at({key, p.start + k}));
      if (p.n == 1) {
        stores.push_back(ctx.make(Op::Store, dt::Void, {p.index, vals[0]}));
        continue;
      }
      const UOp *ptr = ctx.make(Op::Index, vectorPtr(p.index, p.n), p.index->src(), p.index->arg());
      const UOp *value = simplifyNode(ctx.make(Op::Vectorize, vals[0]->dtype().vec(uint16_t(p.n)), vals));
      stores.push_back(ctx.make(Op::Store, dt::Void, {ptr, value}));
    }
  }
  return stores.size() == 1 ? stores[0] : ctx.make(Op::Noop, dt::Void, stores);
}

const UOp *runCoalesce(const UOp *root, PassContext &pc) {
  if (!pc.target.vectorALU)
    return root; // scalar renderers: the lanes stay separate accesses
  static const PatternMatcher pm(
      "coalesce", {{UPat::any({Op::Vectorize}), coalesceLoads,
                    "vectorize(load(b[i]), load(b[i+1]), ...) -> load(b[i] : ptr<T x n>)  (same base and valid)"},
                   {UPat::any({Op::Noop}), coalesceStores,
                    "noop(store(b[i], x), store(b[i+1], y), ...) -> store(b[i] : ptr<T x n>, vectorize(x, y, ...))"}});
  TargetDesc t = pc.target;
  RewriteOptions opts;
  opts.user = &t;
  const UOp *out = graphRewrite(root, pm, opts);
  for (const UOp *u : toposort(out))
    if (u->op() == Op::Index && u->dtype().pointee().isVector() && u->dtype().addrSpace() == AddrSpace::Global)
      pc.stats["coalesce.vector-accesses"] += 1;
  return out;
}

} // namespace tgc
