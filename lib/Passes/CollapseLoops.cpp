//===- CollapseLoops.cpp - Few outer iterations: the next loop joins the outermost -*- C++ -*-===//
// range(A) around range(B), closed together -> range(A*B) r with r / B and r % B in their place, while A < 64.
//===----------------------------------------------------------------------===//
//
// Threads split a kernel's outermost loop (KernelInfo::parallel). When that loop has few iterations (the 10 row
// tiles of a batch-1 convolution), the loop nested in it joins it, so threads share A*B iterations instead of A,
// and again while the merged loop has fewer than kMinIterations. Two loops merge only when they are the two
// outermost loops of the kernel (cache blocks and reduces stay apart), both "loop" ranges of constant size, and
// every `end` or `reduce` that closes one closes the other: then whatever the kernel computes between them depends
// on the outer loop alone, and is computed once per merged iteration. The iteration order is unchanged
// (r = a*B + b), so results are bit for bit the same. CPU targets only (TargetDesc::hasThreads): GPU kernels map
// loops to launch dimensions (gpudims).

#include "IR/Rewrite.h"
#include "Passes/Linearize.h"
#include "Passes/Pass.h"
#include "Passes/ProgramInfo.h"

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

/// The kernel's two outermost loops (after expand: loop, block and reduce ranges) when they may merge, else
/// {nullptr, nullptr}.
std::pair<const UOp *, const UOp *> mergeable(const std::vector<const UOp *> &order) {
  std::vector<const UOp *> loops;
  for (const UOp *u : order)
    if (u->op() == Op::Range && (rangeKind(u) == "loop" || rangeKind(u) == "block" || rangeKind(u) == "reduce"))
      loops.push_back(u);
  std::sort(loops.begin(), loops.end(), rangeNestsBefore);
  if (loops.size() < 2)
    return {nullptr, nullptr};
  const UOp *a = loops[0];
  const UOp *b = loops[1];
  for (const UOp *r : {a, b})
    if (rangeKind(r) != "loop" || !r->src(0)->isConst())
      return {nullptr, nullptr};
  if (rangeSize(a) >= kMinIterations)
    return {nullptr, nullptr};
  for (const UOp *u : order)
    if (closesRanges(u) && lists(u, a) != lists(u, b))
      return {nullptr, nullptr};
  return {a, b};
}

/// The kernel with loops a and b (b nested in a) replaced by one loop over both.
const UOp *merge(const UOp *kernel, const std::vector<const UOp *> &order, const UOp *a, const UOp *b) {
  Context &ctx = kernel->ctx();
  DType d = a->dtype();
  const UOp *size = ctx.constInt(d, rangeSize(b));
  const UOp *r = ctx.make(Op::Range, d, {ctx.constInt(d, rangeSize(a) * rangeSize(b))}, a->arg());
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
    done[u] = ctx.make(u->op(), u->dtype(), src, u->arg(),
                       u->hasShape() ? std::optional<Shape>(u->shapeVec()) : std::nullopt, u->tag());
  }
  return done.at(kernel);
}

} // namespace

const UOp *runCollapseLoops(const UOp *root, PassContext &pc) {
  if (!pc.target.hasThreads)
    return root;
  std::unordered_map<const UOp *, const UOp *> collapsed;
  for (const UOp *k : toposort(root)) {
    if (k->op() != Op::Sink || !isKernelRoot(k))
      continue;
    const UOp *now = k;
    for (;;) {
      std::vector<const UOp *> order = toposort(now);
      auto [a, b] = mergeable(order);
      if (!a)
        break;
      now = merge(now, order, a, b);
      pc.stats["collapse-loops.merged"] += 1;
    }
    if (now != k)
      collapsed[k] = now;
  }
  return collapsed.empty() ? root : substitute(root, collapsed);
}

} // namespace tgc
