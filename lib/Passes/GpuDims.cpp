//===- GpuDims.cpp - Loop ranges become launch indices ----------*- C++ -*-===//
// On GPU targets, output loops become work-group and work-item indices, and group reduces go through local memory.
//===----------------------------------------------------------------------===//
//
// Per kernel (a sink), on a target with local index spaces (TargetDesc::hasLocal); other targets are untouched:
//  - "loop" ranges (the output axes) become `special "gidxN"` (work-group indices) and "local", "group" and "warp"
//    ranges `special "lidxN"` (work-item indices within a group). The innermost range gets dimension 0 (x), which
//    the hardware makes the fastest; a "warp" range (the tc action's lanes) is always dimension 0, alone. More than
//    three ranges, or a dimension over the target's limit, are merged into one index and recovered by division and
//    remainder:
//        ranges (a[n0], b[n1], c[n2], d[n3]) -> gidx2 = a*n1 + b ... : a = gidx2 / n1, b = gidx2 % n1
//    An `end` forgets the ranges that became indices (and disappears when none is left).
//  - A reduce over "group" ranges becomes a two-stage reduce (tinygrad's GROUP/GROUPTOP):
//        reduce(v, r..., g...)  ->  L = define_local; store(L[slot], reduce(v, r...)); barrier
//                                   reduce(load(after(L, barrier)[slot with g -> g']), g'...)
//    where slot numbers the work-items of a group (its local and group indices) and the upcast lanes, and g' are
//    new reduce ranges over the group sizes. Every work-item of the group computes the same result; global stores
//    of a kernel with group reduces are gated on g == 0, so one work-item writes it.
// Errors: a kernel whose work-items exceed the target's limits, or whose local buffers exceed its local memory.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tgc {
namespace {

bool isKind(const UOp *u, const char *kind) {
  return u->op() == Op::Range && u->arg().isTuple() && rangeKind(u) == kind;
}

bool isLaunchLocal(const UOp *u) { return isKind(u, "local") || isKind(u, "group") || isKind(u, "warp"); }

/// Local ranges outer to inner: by id, the warp lane (tc action) innermost, so that it is dimension 0 alone.
bool localNestsBefore(const UOp *a, const UOp *b) {
  if (isKind(a, "warp") != isKind(b, "warp"))
    return isKind(b, "warp");
  return rangeIdLess(a, b);
}

/// One launch dimension: ranges (outer to inner) merged into one index.
struct Dim {
  std::vector<const UOp *> ranges;
  int64_t size = 1;
};

/// Whether a loop runs to a variable (a symbolic batch): it gets a launch dimension of its own, never merged.
bool isVariableLoop(const UOp *r) { return r->src(0)->op() == Op::DefineVar; }

/// Launch dimensions for ranges (outer to inner): at most three, the innermost last (it becomes dimension 0), each
/// within limit[d]. Ranges that run to a variable come first, one dimension each, with the variable's upper bound
/// as their size. nullopt when they cannot fit.
std::optional<std::vector<Dim>> groupDims(const std::vector<const UOp *> &ranges, const int64_t limit[3]) {
  std::vector<Dim> dims, variable;
  for (const UOp *r : ranges)
    (isVariableLoop(r) ? variable : dims).push_back({{r}, isVariableLoop(r) ? r->src(0)->vmax() : rangeSize(r)});
  size_t most = 3 - std::min<size_t>(variable.size(), 3);
  if (variable.size() > 3 || (most == 0 && !dims.empty()))
    return std::nullopt;
  auto merge = [](Dim a, const Dim &b) {
    a.ranges.insert(a.ranges.end(), b.ranges.begin(), b.ranges.end());
    a.size *= b.size;
    return a;
  };
  while (dims.size() > most) {
    dims[1] = merge(dims[0], dims[1]);
    dims.erase(dims.begin());
  }
  auto fits = [&](const std::vector<Dim> &all) {
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].size > limit[all.size() - 1 - i])
        return false;
    return true;
  };
  // outer dimensions over their (smaller) limits merge inward, into x
  while (!fits(dims) && dims.size() > 1) {
    dims[1] = merge(dims[0], dims[1]);
    dims.erase(dims.begin());
  }
  variable.insert(variable.end(), dims.begin(), dims.end());
  if (!fits(variable))
    return std::nullopt;
  return variable;
}

class GpuKernel {
public:
  GpuKernel(const UOp *kernel, const TargetDesc &t) : kernel_(kernel), t_(t), ctx_(kernel->ctx()) {}

  const UOp *run(std::string &error) {
    std::vector<const UOp *> loops, locals;
    for (const UOp *u : toposort(kernel_)) {
      if (u->op() == Op::Range && u->arg().isTuple())
        nextId_ = std::max(nextId_, rangeId(u) + 1);
      if (!isKind(u, "loop") && !isLaunchLocal(u))
        continue;
      if (!u->src(0)->isConst() && !(isKind(u, "loop") && isVariableLoop(u))) {
        error = "range " + std::to_string(rangeId(u)) + " has no constant size";
        return nullptr;
      }
      (isKind(u, "loop") ? loops : locals).push_back(u);
    }
    if (loops.empty() && locals.empty())
      return kernel_;
    std::sort(loops.begin(), loops.end(), rangeIdLess);
    std::sort(locals.begin(), locals.end(), localNestsBefore);
    int64_t workItems = 1;
    for (const UOp *r : locals)
      workItems *= rangeSize(r);
    if (workItems > t_.maxLocalProduct) {
      error = std::to_string(workItems) + " work-items per group, more than the target's " +
              std::to_string(t_.maxLocalProduct);
      return nullptr;
    }
    if (!assign(loops, t_.maxGlobal, "gidx", error) || !assign(locals, t_.maxLocal, "lidx", error))
      return nullptr;
    const UOp *k = groupReduces(error);
    if (!k)
      return nullptr;
    return substitute(k, value_) == k ? k : dropEnds(substitute(k, value_));
  }

private:
  /// Give each range its value in terms of launch indices named prefix0.. (dimension 0 the innermost).
  bool assign(const std::vector<const UOp *> &ranges, const int64_t limit[3], const char *prefix, std::string &error) {
    if (ranges.empty())
      return true;
    std::optional<std::vector<Dim>> dims = groupDims(ranges, limit);
    if (!dims) {
      error = std::string("the kernel's ") + (prefix[0] == 'g' ? "work-groups" : "work-items") +
              " exceed the target's launch limits";
      return false;
    }
    const Dim &x = dims->back();
    if (isKind(x.ranges.back(), "warp") && x.ranges.size() > 1) {
      error = "the warp lanes of the tc action must be work-item dimension 0 alone, but the other local ranges "
              "exceed the target's launch limits";
      return false;
    }
    for (size_t i = 0; i < dims->size(); ++i) {
      const Dim &d = (*dims)[i];
      DType ix = d.ranges[0]->dtype();
      std::string name = prefix + std::to_string(dims->size() - 1 - i);
      if (isVariableLoop(d.ranges[0])) { // launched with the variable's value as its extent
        value_[d.ranges[0]] = ctx_.make(Op::Special, ix, {d.ranges[0]->src(0)}, Arg(name));
        continue;
      }
      const UOp *s = ctx_.make(Op::Special, ix, {ctx_.constInt(ix, d.size)}, Arg(name));
      int64_t inner = 1; // product of the sizes of the ranges inside the current one
      for (size_t k = d.ranges.size(); k-- > 0;) {
        const UOp *r = d.ranges[k];
        const UOp *v = inner == 1 ? s : ctx_.alu(Op::Idiv, {s, ctx_.constInt(ix, inner)});
        if (k > 0)
          v = ctx_.alu(Op::Mod, {v, ctx_.constInt(ix, rangeSize(r))});
        value_[r] = v;
        inner *= rangeSize(r);
      }
    }
    return true;
  }

  /// Reduces over group ranges become two stages through local memory; global stores are gated on g == 0.
  const UOp *groupReduces(std::string &error) {
    std::unordered_map<const UOp *, const UOp *> done;
    std::vector<const UOp *> groups;
    int64_t localBytes = 0;
    for (const UOp *u : toposort(kernel_)) {
      if (u->op() != Op::Reduce)
        continue;
      std::vector<const UOp *> inner, grp;
      for (size_t i = 1; i < u->numSrc(); ++i)
        (isKind(u->src(i), "group") ? grp : inner).push_back(u->src(i));
      if (grp.empty())
        continue;
      for (const UOp *r : freeRanges(u))
        if (isKind(r, "reduce") || isKind(r, "unroll")) {
          error = "a group reduce inside the loop of range " + std::to_string(rangeId(r)) + " is not supported";
          return nullptr;
        }
      // an earlier group reduce inside this one's value is replaced first (softmax: max, then a sum using it)
      const UOp *value = substitute(u->src(0), done);
      done[u] = twoStage(u, value, inner, grp, localBytes);
      for (const UOp *g : grp)
        if (std::find(groups.begin(), groups.end(), g) == groups.end())
          groups.push_back(g);
    }
    if (localBytes > t_.localMemoryBytes) {
      error = "group reduces need " + std::to_string(localBytes) + " bytes of local memory, more than the target's " +
              std::to_string(t_.localMemoryBytes);
      return nullptr;
    }
    if (done.empty())
      return kernel_;
    const UOp *k = substitute(kernel_, done);
    return gateGlobalStores(k, groups);
  }

  /// The ranges a node depends on that no reduce or end inside it binds.
  std::vector<const UOp *> freeRanges(const UOp *root) {
    std::unordered_map<const UOp *, std::vector<const UOp *>> free;
    for (const UOp *u : toposort(root)) {
      std::vector<const UOp *> f;
      if (u->op() == Op::Range)
        f.push_back(u);
      for (const UOp *s : u->src())
        f.insert(f.end(), free.at(s).begin(), free.at(s).end());
      if (u->op() == Op::Reduce || u->op() == Op::End)
        for (size_t k = 1; k < u->numSrc(); ++k)
          std::erase(f, u->src(k));
      std::sort(f.begin(), f.end(), rangeIdLess);
      f.erase(std::unique(f.begin(), f.end()), f.end());
      free.emplace(u, std::move(f));
    }
    return free.at(root);
  }

  const UOp *twoStage(const UOp *u, const UOp *value, const std::vector<const UOp *> &inner,
                      const std::vector<const UOp *> &grp, int64_t &localBytes) {
    DType d = u->dtype();
    DType ix = grp[0]->dtype();
    std::vector<const UOp *> partialSrc = {value};
    partialSrc.insert(partialSrc.end(), inner.begin(), inner.end());
    const UOp *partial = inner.empty() ? value : ctx_.make(Op::Reduce, d, partialSrc, u->arg());
    // the slot of a work-item's partial result: its local and group indices and the upcast lanes, mixed radix
    std::vector<const UOp *> slotRanges;
    for (const UOp *r : freeRanges(partial))
      if (isLaunchLocal(r) || isKind(r, "upcast"))
        slotRanges.push_back(r);
    int64_t slots = 1;
    for (const UOp *r : slotRanges)
      slots *= rangeSize(r);
    auto slotIndex = [&](const std::unordered_map<const UOp *, const UOp *> &replace) {
      const UOp *idx = ctx_.constInt(ix, 0);
      for (const UOp *r : slotRanges) {
        auto it = replace.find(r);
        idx = ctx_.alu(
            Op::Add, {ctx_.alu(Op::Mul, {idx, ctx_.constInt(ix, rangeSize(r))}), it == replace.end() ? r : it->second});
      }
      return idx;
    };
    const UOp *local =
        ctx_.make(Op::DefineLocal, d.ptr(AddrSpace::Local), {}, Arg::tuple({Arg(nextLocal_++), Arg(slots)}));
    localBytes += slots * std::max<int64_t>(1, d.itemSize());
    const UOp *store =
        ctx_.make(Op::Store, dt::Void, {ctx_.make(Op::Index, local->dtype(), {local, slotIndex({})}), partial});
    std::vector<const UOp *> upcasts = {store};
    for (const UOp *r : slotRanges)
      if (isKind(r, "upcast"))
        upcasts.push_back(r);
    const UOp *stored = upcasts.size() > 1 ? ctx_.make(Op::End, dt::Void, upcasts) : store;
    const UOp *barrier = ctx_.make(Op::Barrier, dt::Void, {stored});
    const UOp *ready = ctx_.make(Op::After, local->dtype(), {local, barrier});
    std::unordered_map<const UOp *, const UOp *> second;
    std::vector<const UOp *> finalSrc;
    for (const UOp *g : grp) {
      const UOp *r =
          ctx_.make(Op::Range, g->dtype(), {g->src(0)}, Arg::tuple({Arg(nextId_++), Arg(std::string("reduce"))}));
      second[g] = r;
      finalSrc.push_back(r);
    }
    const UOp *loaded = ctx_.make(Op::Load, d, {ctx_.make(Op::Index, local->dtype(), {ready, slotIndex(second)})});
    finalSrc.insert(finalSrc.begin(), loaded);
    return ctx_.make(Op::Reduce, d, finalSrc, u->arg());
  }

  const UOp *gateGlobalStores(const UOp *k, const std::vector<const UOp *> &groups) {
    const UOp *first = nullptr;
    for (const UOp *g : groups) {
      const UOp *isFirst = ctx_.alu(Op::Cmpeq, {g, ctx_.constInt(g->dtype(), 0)});
      first = first ? ctx_.alu(Op::And, {first, isFirst}) : isFirst;
    }
    std::unordered_map<const UOp *, const UOp *> gated;
    for (const UOp *u : toposort(k)) {
      if (u->op() != Op::Store || u->src(0)->op() != Op::Index || u->src(0)->src(0)->op() != Op::DefineGlobal)
        continue;
      const UOp *p = u->src(0);
      std::vector<const UOp *> src = {p->src(0), p->src(1),
                                      p->numSrc() == 3 ? ctx_.alu(Op::And, {p->src(2), first}) : first};
      std::vector<const UOp *> st = {ctx_.make(Op::Index, p->dtype(), src, p->arg())};
      st.insert(st.end(), u->src().begin() + 1, u->src().end());
      gated[u] = ctx_.make(Op::Store, dt::Void, st, u->arg());
    }
    return substitute(k, gated);
  }

  /// end(x, ranges...) without the ranges that became launch indices (x alone when none is left).
  const UOp *dropEnds(const UOp *k) {
    static const PatternMatcher pm("gpudims-ends", {{UPat::any({Op::End}),
                                                     [](const Match &m) -> const UOp * {
                                                       const UOp *e = m.root();
                                                       std::vector<const UOp *> src = {e->src(0)};
                                                       for (size_t i = 1; i < e->numSrc(); ++i)
                                                         if (e->src(i)->op() == Op::Range)
                                                           src.push_back(e->src(i));
                                                       if (src.size() == e->numSrc())
                                                         return nullptr;
                                                       return src.size() == 1 ? src[0]
                                                                              : e->ctx().make(Op::End, dt::Void, src);
                                                     },
                                                     "end(x, launch index...) -> x"}});
    return graphRewrite(k, pm);
  }

  const UOp *kernel_;
  const TargetDesc &t_;
  Context &ctx_;
  std::unordered_map<const UOp *, const UOp *> value_;
  int64_t nextId_ = 0;
  int64_t nextLocal_ = 0;
};

} // namespace

const UOp *runGpuDims(const UOp *root, PassContext &pc) {
  if (!pc.target.hasLocal)
    return root;
  std::unordered_map<const UOp *, const UOp *> done;
  for (const UOp *u : toposort(root)) {
    if (u->op() != Op::Sink || !isKernelRoot(u))
      continue;
    std::string error;
    const UOp *k = GpuKernel(u, pc.target).run(error);
    if (!k) {
      std::string name = u->arg().isString() ? u->arg().getString() : "kernel";
      pc.diags.error(Loc{pc.module.fileName, 0, 0}, "gpudims: " + name + ": " + error);
      return nullptr;
    }
    if (k != u) {
      done[u] = k;
      pc.stats["gpudims.kernels"] += 1;
    }
  }
  return substitute(root, done);
}

} // namespace tgc
