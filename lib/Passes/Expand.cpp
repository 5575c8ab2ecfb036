//===- Expand.cpp - Upcast and unroll ranges become vector lanes -*- C++ -*-===//
// Every value that depends on upcast or unroll ranges becomes a vector with one lane per value of those ranges.
//===----------------------------------------------------------------------===//
//
// The lanes of a value are the values of its *axes*: the expanded ranges it depends on, ordered by range id,
// the last varying fastest (lane = mixed radix of the range values). Per node, in operand order:
//   range r (upcast/unroll, size n)  -> vectorize(0, 1, ..., n-1)            axes {r}
//   alu(a, b)                        -> alu(widen(a), widen(b)) : T x L      axes a ∪ b
//   index(buf, i[, valid])           -> one scalar index per lane: i as base + k_lane when affine in the ranges,
//                                       else (and valid) with each range replaced by the lane's value
//   load(p)                          -> vectorize(load(p_0), ..., load(p_L-1))
//   store(p, v)                      -> noop(store(p_0, gep(v, 0)), ..., store(p_L-1, gep(v, L-1)))
//   reduce(v, r_unroll, r...)        -> op(gep(a, lanes with r_unroll = 0), ..., gep(a, ... = n-1))
//                                       where a = reduce(v, r...) keeps all lanes through the loops
//   end(x, r_upcast, r...)           -> end(x, r...)   (or x when no loop is left)
// widen(x) moves x to more axes: a constant becomes a vector constant, another scalar a vectorize of copies, a
// vector a gep choosing the lane of each wider lane. Memory accesses are split into lanes; on vector targets an
// affine access becomes one vector access per run of adjacent lanes at once (coalesce's runs), other lanes go
// through coalesce's rewrite here and again after simplify; devectorize splits the vector ALU ops for targets
// without them.

#include "IR/Rewrite.h"
#include "Passes/Coalesce.h"
#include "Passes/Linearize.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"
#include "Passes/SimplifyRules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

namespace tgc {
namespace {

bool isExpandedKind(const UOp *r) {
  if (r->op() != Op::Range || !r->arg().isTuple())
    return false;
  return rangeKind(r) == "upcast" || rangeKind(r) == "unroll";
}

/// Expanded ranges in lane order.
using Axes = std::vector<const UOp *>;

/// Lanes of a value with these axes (saturating: any count past 2^32 is reported as 2^32, over every limit).
int64_t laneCount(const Axes &axes) {
  constexpr int64_t kHuge = int64_t(1) << 32;
  int64_t n = 1;
  for (const UOp *r : axes)
    n = rangeSize(r) > kHuge / n ? kHuge : n * rangeSize(r);
  return n;
}

Axes unite(const Axes &a, const Axes &b) {
  Axes out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), rangeIdLess);
  return out;
}

bool isPowerOf2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// The value of each expanded axis in one lane. A lane has few axes: a flat list, searched linearly.
class LaneValues {
public:
  /// Sets (or adds) the value of `axis`.
  void set(const UOp *axis, int64_t value) {
    for (auto &[r, v] : items_)
      if (r == axis) {
        v = value;
        return;
      }
    items_.emplace_back(axis, value);
  }
  int64_t at(const UOp *axis) const {
    for (const auto &[r, v] : items_)
      if (r == axis)
        return v;
    internalError("expand: a lane has no value for an axis");
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

private:
  std::vector<std::pair<const UOp *, int64_t>> items_;
};

/// The value of each axis in `lane` of `axes`, added to (or overriding those of) `into`.
LaneValues laneValues(const Axes &axes, int64_t lane, LaneValues into = {}) {
  for (size_t i = axes.size(); i-- > 0;) {
    into.set(axes[i], lane % rangeSize(axes[i]));
    lane /= rangeSize(axes[i]);
  }
  return into;
}

/// The lane of `axes` with the given axis values (axes missing from `values` do not occur).
int64_t laneOf(const Axes &axes, const LaneValues &values) {
  int64_t lane = 0;
  for (const UOp *r : axes)
    lane = lane * rangeSize(r) + values.at(r);
  return lane;
}

/// What a node became: a value (scalar when `axes` is empty), or for an index, one pointer per lane. A vector value
/// of the kernel (a wmma's result, f32 x inner) with axes has `inner` elements per lane, lane-major; a vectorize
/// with axes (a wmma's fragment) stays unbuilt (`fragment`): only wmma takes it, lane by lane.
struct Expanded {
  const UOp *node = nullptr;
  Axes axes;
  std::vector<const UOp *> lanes;
  int64_t inner = 1;
  bool fragment = false;
  /// An index at an affine address whose other operands have no lanes: lane l is at base + offsets[l], and its
  /// scalar pointers (`lanes`) are built only where an access needs them (pointerLane).
  const UOp *base = nullptr;
  std::vector<int64_t> offsets = {};
};

class Expander {
public:
  Expander(Context &ctx, const TargetDesc &target) : ctx_(ctx), target_(target) {}

  /// The kernel with its upcast and unroll ranges expanded, or nullptr with `error` set.
  const UOp *run(const UOp *kernel) {
    for (const UOp *u : toposort(kernel)) {
      Expanded e = expand(u);
      if (!error.empty())
        return nullptr;
      done_[u] = std::move(e);
    }
    return done_.at(kernel).node;
  }

  std::string error;

private:
  Expanded fail(const UOp *u, const std::string &why) {
    error = "expand: " + std::string(opName(u->op())) + ": " + why;
    return {u, {}, {}};
  }

  Expanded expand(const UOp *u) {
    if (isExpandedKind(u) && u->src(0)->isConst())
      return expandRange(u);
    Axes axes;
    for (const UOp *s : u->src())
      axes = unite(axes, done_.at(s).axes);
    if (laneCount(axes) > target_.maxLanes)
      return fail(u, "would have " + std::to_string(laneCount(axes)) + " lanes, more than the target's " +
                         std::to_string(target_.maxLanes) + " (use smaller upcast and unroll amounts)");
    if (u->op() == Op::Reduce)
      return expandReduce(u);
    if (u->op() == Op::End)
      return expandEnd(u);
    if (axes.empty())
      return rebuilt(u);
    for (const UOp *s : u->src())
      if ((done_.at(s).fragment || done_.at(s).inner > 1) && u->op() != Op::Wmma && u->op() != Op::Reduce &&
          u->op() != Op::Gep)
        return fail(u, "cannot take the lanes of a tensor core fragment or result");
    switch (u->op()) {
    case Op::Index: return expandIndex(u, axes);
    case Op::Load: return expandLoad(u, axes);
    case Op::Store: return expandStore(u, axes);
    case Op::Vectorize: return {nullptr, axes, {}, 1, true}; // a fragment: built by its wmma
    case Op::Wmma: return expandWmma(u, axes);
    case Op::Gep:
      if (done_.at(u->src(0)).inner > 1)
        return expandInnerGep(u);
      break;
    default: break;
    }
    if (!group::elementwise().contains(u->op()) && u->op() != Op::Mulacc)
      return fail(u, "cannot take vector operands");
    std::vector<const UOp *> src;
    for (const UOp *s : u->src())
      src.push_back(widen(done_.at(s), axes));
    DType d = u->dtype().vec(uint16_t(laneCount(axes)));
    return {ctx_.make(u->op(), d, src, u->arg()), axes, {}};
  }

  /// u with its operands replaced by what they became (all scalar).
  Expanded rebuilt(const UOp *u) {
    std::vector<const UOp *> src;
    for (const UOp *s : u->src())
      src.push_back(done_.at(s).node);
    return {ctx_.withSrc(u, src), {}, {}};
  }

  Expanded expandRange(const UOp *r) {
    int64_t n = rangeSize(r);
    if (n <= 0)
      return fail(r, "an upcast or unroll range needs a positive size, has " + std::to_string(n));
    if (n > target_.maxLanes)
      return fail(r, "would have " + std::to_string(n) + " lanes, more than the target's " +
                         std::to_string(target_.maxLanes) + " (use smaller upcast and unroll amounts)");
    if (n == 1)
      return {ctx_.constInt(r->dtype(), 0), {}, {}};
    std::vector<const UOp *> lanes;
    for (int64_t i = 0; i < n; ++i)
      lanes.push_back(ctx_.constInt(r->dtype(), i));
    return {ctx_.make(Op::Vectorize, r->dtype().vec(uint16_t(n)), lanes), {r}, {}};
  }

  /// x moved to the lanes of `to` (a superset of its axes).
  const UOp *widen(const Expanded &x, const Axes &to) {
    if (x.axes == to)
      return x.node;
    int64_t n = laneCount(to);
    DType d = x.node->dtype().element().vec(uint16_t(n));
    if (x.axes.empty() && x.node->isConst())
      return ctx_.make(Op::Const, d, {}, x.node->arg());
    if (x.axes.empty())
      return ctx_.make(Op::Vectorize, d, std::vector<const UOp *>(size_t(n), x.node));
    return gep(x, to, n);
  }

  /// gep choosing, for each lane of `to`, the lane of x with the same axis values.
  const UOp *gep(const Expanded &x, const Axes &to, int64_t n) {
    std::vector<Arg> lanes;
    for (int64_t l = 0; l < n; ++l)
      lanes.push_back(Arg(laneOf(x.axes, laneValues(to, l))));
    DType d = x.node->dtype().element().vec(uint16_t(n));
    return ctx_.make(Op::Gep, d, {x.node}, Arg(lanes));
  }

  /// Lane `lane` of a value with these axes, as a scalar.
  const UOp *laneOfValue(const Expanded &x, const Axes &axes, int64_t lane) {
    if (x.axes.empty())
      return x.node;
    int64_t l = laneOf(x.axes, laneValues(axes, lane));
    return ctx_.make(Op::Gep, x.node->dtype().element(), {x.node}, Arg::tuple({Arg(l)}));
  }

  // --- tensor cores: one wmma per lane of the upcast axes ---------------------------------------------------------

  /// wmma(a, b, c, lane) with axes: per lane L of the axes, wmma(fragment of a at L, of b at L, c's inner elements
  /// at L); the result has the wmma's elements as `inner`, lane-major.
  Expanded expandWmma(const UOp *u, const Axes &axes) {
    int64_t n = laneCount(axes), inner = u->dtype().lanes();
    std::vector<const UOp *> parts;
    for (int64_t l = 0; l < n; ++l) {
      std::vector<const UOp *> src;
      for (size_t k = 0; k < 3; ++k)
        src.push_back(fragmentAt(u->src(k), axes, l));
      src.push_back(done_.at(u->src(3)).node);
      const UOp *w = ctx_.make(Op::Wmma, u->dtype(), src, u->arg());
      for (int64_t j = 0; j < inner; ++j)
        parts.push_back(ctx_.make(Op::Gep, u->dtype().element(), {w}, Arg::tuple({Arg(j)})));
    }
    return {ctx_.make(Op::Vectorize, u->dtype().element().vec(uint16_t(parts.size())), parts), axes, {}, inner};
  }

  /// A wmma operand (a vector of the kernel) at lane l of `axes`.
  const UOp *fragmentAt(const UOp *x, const Axes &axes, int64_t l) {
    const Expanded &e = done_.at(x);
    if (e.axes.empty())
      return e.node;
    if (e.fragment) { // an unbuilt vectorize: each element at this lane
      std::vector<const UOp *> elems;
      for (const UOp *s : x->src())
        elems.push_back(laneOfValue(done_.at(s), axes, l));
      return ctx_.make(Op::Vectorize, x->dtype(), elems);
    }
    int64_t at = laneOf(e.axes, laneValues(axes, l)) * e.inner;
    std::vector<Arg> lanes;
    for (int64_t j = 0; j < e.inner; ++j)
      lanes.push_back(Arg(at + j));
    return ctx_.make(Op::Gep, x->dtype(), {e.node}, Arg(lanes));
  }

  /// gep(x, [j]) of a value with inner elements: element j of every lane.
  Expanded expandInnerGep(const UOp *u) {
    const Expanded &x = done_.at(u->src(0));
    std::vector<int64_t> pick = u->arg().intTuple();
    if (pick.size() != 1)
      return fail(u, "takes one element of a tensor core result");
    std::vector<Arg> lanes;
    for (int64_t l = 0; l < laneCount(x.axes); ++l)
      lanes.push_back(Arg(l * x.inner + pick[0]));
    return {ctx_.make(Op::Gep, u->dtype().vec(uint16_t(lanes.size())), {x.node}, Arg(lanes)), x.axes, {}};
  }

  // --- memory: one scalar address per lane --------------------------------------------------------------------

  Expanded expandIndex(const UOp *u, const Axes &axes) {
    Expanded e;
    e.axes = axes;
    std::optional<Coefs> affine = coefsOf(u->src(1));
    const UOp *base = affine ? scalarAt(u->src(1), laneValues(axes, 0)) : nullptr; // lane 0: every axis at 0
    std::vector<int64_t> offsets;
    for (int64_t l = 0; affine && l < laneCount(axes); ++l)
      offsets.push_back(offsetAt(*affine, laneValues(axes, l)));
    bool uniform = true; // the other operands (valid) have no lanes
    for (size_t i = 2; i < u->numSrc(); ++i)
      uniform = uniform && done_.at(u->src(i)).axes.empty();
    if (affine && uniform) {
      e.base = base;
      e.offsets = std::move(offsets);
      return e;
    }
    for (int64_t l = 0; l < laneCount(axes); ++l) {
      LaneValues values = laneValues(axes, l);
      std::vector<const UOp *> src = {done_.at(u->src(0)).node};
      src.push_back(affine ? plus(base, offsets[size_t(l)]) : scalarAt(u->src(1), values));
      for (size_t i = 2; i < u->numSrc(); ++i)
        src.push_back(scalarAt(u->src(i), values));
      e.lanes.push_back(ctx_.make(Op::Index, u->dtype(), src, u->arg()));
    }
    return e;
  }

  /// index(buf, base + k, rest...) of an affine index (its operands' expansions), as a pointer to n elements.
  const UOp *indexAt(const UOp *index, const Expanded &p, int64_t k, int64_t n) {
    std::vector<const UOp *> src = {done_.at(index->src(0)).node, plus(p.base, k)};
    for (size_t i = 2; i < index->numSrc(); ++i)
      src.push_back(done_.at(index->src(i)).node);
    DType d = index->dtype();
    if (n > 1)
      d = d.pointee().element().vec(uint16_t(n)).ptr(d.addrSpace());
    return ctx_.make(Op::Index, d, src, index->arg());
  }

  /// An address affine in the expanded ranges, u = u(ranges at 0) + sum of c_r * r: the coefficients c_r.
  using Coefs = std::map<const UOp *, int64_t>;

  /// The coefficients of u in the expanded ranges when it is built from them by add and multiplication by
  /// constants over values without lanes; nullopt otherwise (then each lane's address is rebuilt on its own).
  std::optional<Coefs> coefsOf(const UOp *u) {
    if (auto it = coefsMemo_.find(u); it != coefsMemo_.end())
      return it->second;
    std::optional<Coefs> c = linearCoefs(u);
    coefsMemo_[u] = c;
    return c;
  }

  std::optional<Coefs> linearCoefs(const UOp *u) {
    if (done_.at(u).axes.empty())
      return Coefs{};
    if (isExpandedKind(u))
      return Coefs{{u, 1}};
    if (u->op() == Op::Add) {
      std::optional<Coefs> a = coefsOf(u->src(0)), b = coefsOf(u->src(1));
      if (!a || !b)
        return std::nullopt;
      for (auto &[r, c] : *b)
        (*a)[r] = int64_t(uint64_t((*a)[r]) + uint64_t(c)); // wraps like index arithmetic
      return a;
    }
    if (u->op() == Op::Mul && (u->src(0)->isConst() || u->src(1)->isConst())) {
      bool left = u->src(0)->isConst();
      std::optional<Coefs> a = coefsOf(u->src(left ? 1 : 0));
      if (!a)
        return std::nullopt;
      int64_t k = u->src(left ? 0 : 1)->constInt();
      for (auto &[r, c] : *a)
        c = int64_t(uint64_t(c) * uint64_t(k));
      return a;
    }
    return std::nullopt;
  }

  static int64_t offsetAt(const Coefs &coefs, const LaneValues &values) {
    uint64_t off = 0;
    for (auto &[r, c] : coefs)
      off += uint64_t(c) * uint64_t(values.at(r));
    return int64_t(off);
  }

  /// base + k (base itself for k = 0, a constant for a constant base).
  const UOp *plus(const UOp *base, int64_t k) {
    if (k == 0)
      return base;
    if (base->isConst())
      return ctx_.constInt(base->dtype(), int64_t(uint64_t(base->constInt()) + uint64_t(k)));
    return ctx_.make(Op::Add, base->dtype(), {base, ctx_.constInt(base->dtype(), k)});
  }

  /// The scalar value of original node u where the expanded ranges take `values`: address arithmetic is rebuilt
  /// with the ranges replaced by constants (so it simplifies to base + constant); anything else is a lane of its
  /// expanded value.
  const UOp *scalarAt(const UOp *u, const LaneValues &values) {
    const Expanded &x = done_.at(u);
    if (x.axes.empty())
      return x.node;
    auto key = std::make_pair(u, laneOf(x.axes, values));
    if (auto it = scalarMemo_.find(key); it != scalarMemo_.end())
      return it->second;
    const UOp *out = nullptr;
    if (isExpandedKind(u)) {
      out = ctx_.constInt(u->dtype(), values.at(u));
    } else if (group::elementwise().contains(u->op()) || u->op() == Op::Index ||
               (u->op() == Op::Load && u->numSrc() == 1)) {
      std::vector<const UOp *> src;
      for (const UOp *s : u->src())
        src.push_back(scalarAt(s, values));
      DType d = u->dtype().isPtr() ? u->dtype() : u->dtype().element();
      out = ctx_.make(u->op(), d, src, u->arg());
    } else {
      out = laneOfValue(x, x.axes, key.second);
    }
    scalarMemo_[key] = out;
    return out;
  }

  /// The scalar pointer of `lane` (of `axes`) of the expanded pointer `index`.
  const UOp *pointerLane(const UOp *index, const Axes &axes, int64_t lane) {
    const Expanded &p = done_.at(index);
    if (p.axes.empty())
      return p.node;
    size_t l = size_t(laneOf(p.axes, laneValues(axes, lane)));
    return p.base ? indexAt(index, p, p.offsets[l], 1) : p.lanes[l];
  }

  /// On a vector target, the runs of adjacent lanes of an affine index (coalesce's pieces, found from the offsets
  /// without a scalar access per lane); empty when no two lanes are adjacent or two lanes share an address.
  std::vector<Run> vectorRuns(const Expanded &p, DType element) {
    if (!target_.vectorALU || !p.base)
      return {};
    std::vector<int64_t> sorted = p.offsets;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return {};
    std::vector<Run> runs = cutRuns(sorted, target_, element.bits());
    bool useful = std::any_of(runs.begin(), runs.end(), [](const Run &r) { return r.n > 1; });
    return useful ? runs : std::vector<Run>{};
  }

  /// The run holding `offset`.
  static size_t runOf(const std::vector<Run> &runs, int64_t offset) {
    auto after =
        std::upper_bound(runs.begin(), runs.end(), offset, [](int64_t off, const Run &r) { return off < r.start; });
    return size_t(after - runs.begin()) - 1;
  }

  /// load(p) of an affine index: one load per run, each lane the element of its run's load.
  const UOp *vectorLoad(const UOp *u, const Expanded &p) {
    std::vector<Run> runs = vectorRuns(p, u->dtype().element());
    if (runs.empty() || u->numSrc() != 1)
      return nullptr;
    std::vector<const UOp *> loads;
    for (const Run &r : runs)
      loads.push_back(ctx_.make(Op::Load, u->dtype().vec(uint16_t(r.n)), {indexAt(u->src(0), p, r.start, r.n)}));
    bool inOrder =
        runs.size() == 1 && size_t(runs[0].n) == p.offsets.size() && std::is_sorted(p.offsets.begin(), p.offsets.end());
    if (inOrder)
      return loads[0];
    std::vector<const UOp *> lanes;
    for (int64_t off : p.offsets) {
      size_t r = runOf(runs, off);
      const UOp *load = loads[r];
      lanes.push_back(runs[r].n == 1 ? load
                                     : ctx_.make(Op::Gep, u->dtype(), {load}, Arg::tuple({Arg(off - runs[r].start)})));
    }
    return simplifyNode(ctx_.make(Op::Vectorize, u->dtype().vec(uint16_t(lanes.size())), lanes));
  }

  /// store(p, v) of an affine index with the lanes of v: one store per run of the lanes of v it holds.
  const UOp *vectorStore(const UOp *u, const Axes &axes) {
    const Expanded &p = done_.at(u->src(0));
    std::vector<Run> runs =
        p.axes == axes && u->numSrc() == 2 ? vectorRuns(p, u->src(1)->dtype().element()) : std::vector<Run>{};
    if (runs.empty())
      return nullptr;
    std::map<int64_t, int64_t> laneAt; // offset -> lane
    for (size_t l = 0; l < p.offsets.size(); ++l)
      laneAt[p.offsets[l]] = int64_t(l);
    const Expanded &v = done_.at(u->src(1));
    std::vector<const UOp *> stores;
    for (const Run &r : runs) {
      std::vector<int64_t> lanes;
      for (int64_t k = 0; k < r.n; ++k)
        lanes.push_back(laneAt.at(r.start + k));
      stores.push_back(ctx_.make(Op::Store, dt::Void, {indexAt(u->src(0), p, r.start, r.n), lanesOf(v, axes, lanes)}));
    }
    return stores.size() == 1 ? stores[0] : ctx_.make(Op::Noop, dt::Void, stores);
  }

  /// The value of x at these lanes of `axes` (a scalar for one lane).
  const UOp *lanesOf(const Expanded &x, const Axes &axes, const std::vector<int64_t> &lanes) {
    if (lanes.size() == 1)
      return laneOfValue(x, axes, lanes[0]);
    std::vector<Arg> picks;
    for (int64_t l : lanes)
      picks.push_back(Arg(laneOf(x.axes, laneValues(axes, l))));
    DType d = x.node->dtype().element().vec(uint16_t(lanes.size()));
    if (x.axes.empty() && x.node->isConst())
      return ctx_.make(Op::Const, d, {}, x.node->arg());
    if (x.axes.empty())
      return ctx_.make(Op::Vectorize, d, std::vector<const UOp *>(lanes.size(), x.node));
    return simplifyNode(ctx_.make(Op::Gep, d, {x.node}, Arg(picks)));
  }

  Expanded expandLoad(const UOp *u, const Axes &axes) {
    if (axes.empty())
      return rebuilt(u);
    if (const UOp *v = vectorLoad(u, done_.at(u->src(0))))
      return {v, axes, {}};
    std::vector<const UOp *> loads;
    for (int64_t l = 0; l < laneCount(axes); ++l) {
      std::vector<const UOp *> src = {pointerLane(u->src(0), axes, l)};
      for (size_t i = 1; i < u->numSrc(); ++i)
        src.push_back(laneOfValue(done_.at(u->src(i)), axes, l));
      loads.push_back(ctx_.make(Op::Load, u->dtype(), src));
    }
    const UOp *v = ctx_.make(Op::Vectorize, u->dtype().vec(uint16_t(loads.size())), loads);
    return {vectorAccess(v, coalesceLoadLanes), axes, {}};
  }

  Expanded expandStore(const UOp *u, const Axes &axes) {
    if (axes.empty())
      return rebuilt(u);
    if (const UOp *s = vectorStore(u, axes))
      return {s, {}, {}};
    std::vector<const UOp *> stores;
    for (int64_t l = 0; l < laneCount(axes); ++l) {
      std::vector<const UOp *> src = {pointerLane(u->src(0), axes, l)};
      for (size_t i = 1; i < u->numSrc(); ++i)
        src.push_back(laneOfValue(done_.at(u->src(i)), axes, l));
      stores.push_back(ctx_.make(Op::Store, dt::Void, src));
    }
    return {vectorAccess(ctx_.make(Op::Noop, dt::Void, stores), coalesceStoreLanes), {}, {}};
  }

  /// On vector targets, per-lane accesses that coalesce's rewrite can merge already (lanes at base + k sharing one
  /// mask node) become vector accesses here; the coalesce pass merges what needs simplify first.
  const UOp *vectorAccess(const UOp *lanes, const UOp *(*coalesce)(const UOp *, const TargetDesc &)) {
    if (!target_.vectorALU)
      return lanes;
    const UOp *v = coalesce(lanes, target_);
    return v ? v : lanes;
  }

  // --- loops --------------------------------------------------------------------------------------------------

  Expanded expandEnd(const UOp *u) {
    const Expanded &x = done_.at(u->src(0));
    if (!x.axes.empty())
      return fail(u, "closes a value that still has lanes");
    std::vector<const UOp *> src = {x.node};
    for (size_t i = 1; i < u->numSrc(); ++i)
      if (!isExpandedKind(u->src(i)))
        src.push_back(done_.at(u->src(i)).node);
    if (src.size() == 1)
      return {x.node, {}, {}};
    return {ctx_.make(Op::End, dt::Void, src), {}, {}};
  }

  Expanded expandReduce(const UOp *u) {
    const Expanded &v = done_.at(u->src(0));
    Axes closed, keep;
    std::vector<const UOp *> loops;
    for (size_t i = 1; i < u->numSrc(); ++i) {
      if (isExpandedKind(u->src(i)) && rangeSize(u->src(i)) > 1)
        closed.push_back(u->src(i));
      else if (!isExpandedKind(u->src(i)))
        loops.push_back(done_.at(u->src(i)).node);
    }
    std::sort(closed.begin(), closed.end(), rangeIdLess);
    for (const UOp *r : v.axes)
      if (!std::binary_search(closed.begin(), closed.end(), r, rangeIdLess))
        keep.push_back(r);
    Op op = u->arg().getOp();
    if (v.inner > 1) { // tensor core results: every lane and element accumulates on its own
      if (!closed.empty())
        return fail(u, "cannot combine unrolled lanes of tensor core results");
      std::vector<const UOp *> src = {v.node};
      src.insert(src.end(), loops.begin(), loops.end());
      return {loops.empty() ? v.node : ctx_.make(Op::Reduce, v.node->dtype(), src, u->arg()), v.axes, {}, v.inner};
    }
    if (loops.empty())
      return {closed.empty() ? v.node : combineLanes(v, keep, closed, op), keep, {}};
    // keep every lane in the accumulator through the loops and combine the unrolled lanes once, after them
    Axes all = unite(keep, closed);
    const UOp *lanes = all.empty() ? v.node : widen(v, all);
    std::vector<const UOp *> src = {lanes};
    src.insert(src.end(), loops.begin(), loops.end());
    Expanded reduced{ctx_.make(Op::Reduce, lanes->dtype(), src, u->arg()), all, {}};
    return {closed.empty() ? reduced.node : combineLanes(reduced, keep, closed, op), keep, {}};
  }

  /// op over the lanes of the closed axes: one vector over `keep` per value of the closed axes, folded pairwise.
  /// (In a loop this runs once, after it: the accumulator keeps the unrolled lanes as independent partial results.)
  const UOp *combineLanes(const Expanded &v, const Axes &keep, const Axes &closed, Op op) {
    if (!v.axes.empty() && isPowerOf2(laneCount(closed)))
      return foldHalves(v, keep, closed, op);
    int64_t n = laneCount(keep);
    DType d = v.node->dtype().element().vec(uint16_t(n));
    std::vector<const UOp *> parts;
    for (int64_t c = 0; c < laneCount(closed); ++c) {
      LaneValues values = laneValues(closed, c);
      std::vector<Arg> lanes;
      for (int64_t k = 0; k < n; ++k)
        lanes.push_back(Arg(v.axes.empty() ? 0 : laneOf(v.axes, laneValues(keep, k, values))));
      if (v.axes.empty())
        parts.push_back(n == 1 ? v.node : ctx_.make(Op::Vectorize, d, std::vector<const UOp *>(size_t(n), v.node)));
      else
        parts.push_back(ctx_.make(Op::Gep, d, {v.node}, Arg(lanes)));
    }
    while (parts.size() > 1) { // pairwise: independent partial results
      std::vector<const UOp *> next;
      for (size_t i = 0; i + 1 < parts.size(); i += 2)
        next.push_back(ctx_.make(op, d, {parts[i], parts[i + 1]}));
      if (parts.size() % 2)
        next.push_back(parts.back());
      parts = std::move(next);
    }
    return parts[0];
  }

  /// combineLanes' pairwise fold, a step at a time when the closed axes have 2^m lanes: every pair of partial
  /// results (closed index 2j and 2j+1) is added by one op over all of them. The sums keep the order of their first
  /// lane in v, so each step's geps take nearby lanes (a few two-register shuffles), where one gep per closed value
  /// gathers lanes from every register: LLVM spent 3/4 of a dense layer's code generation on that. The additions
  /// and their order are combineLanes', so the result is the same to the bit.
  const UOp *foldHalves(const Expanded &v, const Axes &keep, const Axes &closed, Op op) {
    int64_t n = laneCount(keep), groups = laneCount(closed);
    // lane[k][c]: the lane in v of kept lane k and closed value c
    auto lane = std::vector<std::vector<int64_t>>(size_t(n));
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < groups; ++c)
        lane[size_t(k)].push_back(laneOf(v.axes, laneValues(keep, k, laneValues(closed, c))));
    const UOp *x = v.node;
    DType elem = v.node->dtype().element();
    std::vector<std::vector<int64_t>> at = lane; // at[k][j]: the lane in x of kept lane k's partial result j
    for (int64_t span = 1; groups > 1; span *= 2, groups /= 2) {
      // the sums (k, j) of partial results 2j and 2j+1, ordered by the lane in v of the first value they sum
      std::vector<std::pair<int64_t, int64_t>> sums;
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < groups / 2; ++j)
          sums.push_back({k, j});
      auto firstLane = [&](const std::pair<int64_t, int64_t> &kj) {
        return lane[size_t(kj.first)][size_t(kj.second * 2 * span)];
      };
      std::sort(sums.begin(), sums.end(), [&](const auto &a, const auto &b) { return firstLane(a) < firstLane(b); });
      std::vector<Arg> even, odd;
      auto next = std::vector<std::vector<int64_t>>(size_t(n), std::vector<int64_t>(size_t(groups / 2)));
      for (size_t i = 0; i < sums.size(); ++i) {
        auto [k, j] = sums[i];
        even.push_back(Arg(at[size_t(k)][size_t(2 * j)]));
        odd.push_back(Arg(at[size_t(k)][size_t(2 * j + 1)]));
        next[size_t(k)][size_t(j)] = int64_t(i);
      }
      DType d = elem.vec(uint16_t(sums.size()));
      x = ctx_.make(op, d, {ctx_.make(Op::Gep, d, {x}, Arg(even)), ctx_.make(Op::Gep, d, {x}, Arg(odd))});
      at = std::move(next);
    }
    std::vector<Arg> order; // kept lane k at lane k
    bool identity = true;
    for (int64_t k = 0; k < n; ++k) {
      order.push_back(Arg(at[size_t(k)][0]));
      identity = identity && at[size_t(k)][0] == k;
    }
    return identity ? x : ctx_.make(Op::Gep, elem.vec(uint16_t(n)), {x}, Arg(order));
  }

  Context &ctx_;
  const TargetDesc &target_;
  std::unordered_map<const UOp *, Expanded> done_;
  std::map<std::pair<const UOp *, int64_t>, const UOp *> scalarMemo_;
  std::unordered_map<const UOp *, std::optional<Coefs>> coefsMemo_;
};

/// A kernel sink with its ranges expanded (nullptr: unchanged); on an error, reports it and sets `failed`.
const UOp *expandKernel(const UOp *kernel, PassContext &pc, bool &failed) {
  if (failed || kernel->op() != Op::Sink)
    return nullptr;
  Expander e(kernel->ctx(), pc.target);
  const UOp *k = e.run(kernel);
  if (!k) {
    pc.diags.error(Loc{pc.module.fileName, 0, 0}, e.error);
    failed = true;
    return nullptr;
  }
  if (k != kernel)
    pc.stats["expand.kernels"] += 1;
  return k;
}

} // namespace

const UOp *runExpand(const UOp *root, PassContext &pc) {
  bool failed = false;
  const UOp *out = mapKernels(root, [&](const UOp *k) { return expandKernel(k, pc, failed); });
  return failed ? nullptr : out;
}

} // namespace tgc
