//===- CollapseLoops.cpp - Few outer iterations: the next loop joins the outermost -*- C++ -*-===//
// range(A) around range(B), closed together -> range(A*B) r with r / B and r % B in their place, while A < 64.
//===----------------------------------------------------------------------===//
//
// Threads split a kernel's outermost loop (KernelInfo::parallel). When that loop has few iterations (the 10 row
// tiles of a batch-1 convolution), the loop nested in it joins it, so threads share A*B iterations instead of A,
// and again while the merged loop has fewer than kMinIterations. Two loops merge only when
//  - they are the two outermost loops of the kernel, of constant size, the outer one a "loop" or a cache "block"
//    (blocks stay whole: one thread's iterations still sweep a block's rows together), the inner one a "loop" (a
//    reduce stays apart), and every `end` or `reduce` that closes one closes the other;
//  - nothing costly depends on the outer loop alone (a store, a reduce, a transcendental): it would run B times as
//    often, once per merged iteration;
//  - the division and remainder cost nothing per element: the inner loop encloses a reduce (they run once per
//    reduce), or simplify folds them away (contiguous indices: (r/B)*B + r%B -> r).
// The iteration order is unchanged (r = a*B + b), so results are bit for bit the same. CPU targets only
// (TargetDesc::hasThreads): GPU kernels map loops to launch dimensions (gpudims).

#include "IR/Rewrite.h"
#include "Passes/Linearize.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"
#include "Passes/SimplifyRules.h"

#include <algorithm>
#include <unordered_map>

namespace tgc {
namespace {

/// Enough iterations that the threads of the machines tgc targets each get several.
constexpr int64_t kMinIterations = 64;

bool closesRanges(const UOp *u) { return u->op() == Op::End || u->op() == Op::Reduce; }

bool lists(const UOp *closer, const UOp *r) {
  return std::find(closer->src().begin() + 1, closer->src().end(), r) != closer->src().end();
}

/// Per node of `order` (operands first): whether it depends on range a (bit 1) and on range b (bit 2).
std::unordered_map<const UOp *, int> dependence(const std::vector<const UOp *> &order, const UOp *a, const UOp *b) {
  std::unordered_map<const UOp *, int> dep;
  for (const UOp *u : order) {
    int d = (u == a ? 1 : 0) | (u == b ? 2 : 0);
    for (const UOp *s : u->src())
      d |= dep.at(s);
    dep[u] = d;
  }
  return dep;
}

/// Work that must not run once per merged iteration when it depends on the outer loop alone.
bool costly(const UOp *u) {
  return u->op() == Op::Store || u->op() == Op::Reduce || isCostly(u->op());
}

/// The kernel's two outermost loops (after expand: loop, block and reduce ranges), before the checks.
std::pair<const UOp *, const UOp *> outerLoops(const std::vector<const UOp *> &order) {
  std::vector<const UOp *> loops;
  for (const UOp *u : order)
    if (u->op() == Op::Range && (rangeKind(u) == "loop" || rangeKind(u) == "block" || rangeKind(u) == "reduce"))
      loops.push_back(u);
  std::sort(loops.begin(), loops.end(), rangeNestsBefore);
  if (loops.size() < 2)
    return {nullptr, nullptr};
  return {loops[0], loops[1]};
}

/// Whether the outer loops a and b may merge, with `dep` their dependence().
bool mergeable(const std::vector<const UOp *> &order, const UOp *a, const UOp *b,
               const std::unordered_map<const UOp *, int> &dep) {
  for (const UOp *r : {a, b})
    if (!r->src(0)->isConst())
      return false;
  if ((rangeKind(a) != "loop" && rangeKind(a) != "block") || rangeKind(b) != "loop")
    return false;
  if (rangeSize(a) >= kMinIterations)
    return false;
  for (const UOp *u : order) {
    if (closesRanges(u) && lists(u, a) != lists(u, b))
      return false;
    if (dep.at(u) == 1 && costly(u))
      return false;
  }
  return true;
}

/// Whether a reduce runs inside loop b: the merged loop's division and remainder then run once per reduce.
bool enclosesReduce(const std::vector<const UOp *> &order, const std::unordered_map<const UOp *, int> &dep) {
  return std::any_of(order.begin(), order.end(),
                     [&](const UOp *u) { return u->op() == Op::Reduce && (dep.at(u) & 2); });
}

bool isDivision(const UOp *u) {
  return u->op() == Op::Idiv || u->op() == Op::Mod || u->op() == Op::Floordiv || u->op() == Op::Floormod;
}

/// Whether simplify folds away every division and remainder that the merged range r reaches.
bool divisionsFold(const UOp *merged, const UOp *r) {
  std::unordered_map<const UOp *, bool> onR;
  for (const UOp *u : toposort(simplifyExpression(merged))) {
    bool d = u == r;
    for (const UOp *s : u->src())
      d = d || onR.at(s);
    onR[u] = d;
    if (d && isDivision(u))
      return false;
  }
  return true;
}

/// The range that replaces loops a and b: a's id and kind, A*B iterations.
const UOp *mergedRange(const UOp *a, const UOp *b) {
  Context &ctx = a->ctx();
  DType d = a->dtype();
  return ctx.make(Op::Range, d, {ctx.constInt(d, rangeSize(a) * rangeSize(b))}, a->arg());
}

/// The kernel with loops a and b (b nested in a) replaced by the loop r over both.
const UOp *merge(const UOp *kernel, const std::vector<const UOp *> &order, const UOp *a, const UOp *b, const UOp *r) {
  Context &ctx = kernel->ctx();
  const UOp *size = ctx.constInt(a->dtype(), rangeSize(b));
  std::unordered_map<const UOp *, const UOp *> done;
  for (const UOp *u : order) {
    if (u == a || u == b) {
      done[u] = ctx.alu(u == a ? Op::Idiv : Op::Mod, {r, size});
      continue;
    }
    bool closes = closesRanges(u);
    std::vector<const UOp *> src;
    for (size_t i = 0; i < u->numSrc(); ++i) {
      if (closes && i > 0 && (u->src(i) == a || u->src(i) == b)) {
        if (u->src(i) == a)
          src.push_back(r);
        continue;
      }
      src.push_back(done.at(u->src(i)));
    }
    if (closes)
      std::sort(src.begin() + 1, src.end(), rangeNestsBefore);
    done[u] = ctx.withSrc(u, src);
  }
  return done.at(kernel);
}

/// The kernel with its outer loops merged while they may.
const UOp *collapseKernel(const UOp *kernel, PassContext &pc) {
  for (;;) {
    std::vector<const UOp *> order = toposort(kernel);
    auto [a, b] = outerLoops(order);
    if (!a)
      return kernel;
    std::unordered_map<const UOp *, int> dep = dependence(order, a, b);
    if (!mergeable(order, a, b, dep))
      return kernel;
    const UOp *r = mergedRange(a, b);
    const UOp *merged = merge(kernel, order, a, b, r);
    if (!enclosesReduce(order, dep) && !divisionsFold(merged, r))
      return kernel;
    kernel = merged;
    pc.stats["collapse-loops.merged"] += 1;
  }
}

} // namespace

const UOp *runCollapseLoops(const UOp *root, PassContext &pc) {
  if (!pc.target.hasThreads)
    return root;
  std::unordered_map<const UOp *, const UOp *> collapsed;
  for (const UOp *k : toposort(root))
    if (k->op() == Op::Sink && isKernelRoot(k))
      if (const UOp *now = collapseKernel(k, pc); now != k)
        collapsed[k] = now;
  return collapsed.empty() ? root : substitute(root, collapsed);
}

} // namespace tgc
