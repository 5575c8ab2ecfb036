//===- SplitReduce.cpp - Large reductions to few outputs in two stages -*- C++ -*-===//
// A reduce of 32768 or more values into at most 64 outputs becomes P partial reduces, then a reduce of the partials,
// so the first kernel has P times more outputs to spread over threads or GPU work-groups.
//===----------------------------------------------------------------------===//
//
//   reduce_axis(x) [op, [a]]   with x's axis a of size K = P * R
//     -> reshape(reduce_axis(contiguous(reduce_axis(reshape(x, [..., P, R, ...])) [op, [a + 1]])) [op, [a]], out)
//
// tinygrad's split_reduceop. P is the largest divisor of K in [65, 256], so the partials always outnumber the
// outputs by more than 64 and neither new reduce qualifies again. The sum is reassociated (P sums of R values, then
// a sum of P); max is unchanged. Applies to single-axis reduces of f32, f64 and integers on static shapes (f16 and
// bf16 sums are f32 reduces after decompose). Without it a sum of 64M floats is one loop on one thread.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/TensorBuilder.h"

namespace tgc {
namespace {

constexpr int64_t kMinReduce = 32768; // values reduced into each output
constexpr int64_t kMaxOutputs = 64;   // more outputs already give the threads enough to share
constexpr int64_t kMinSplit = kMaxOutputs + 1;
constexpr int64_t kMaxSplit = 256;

/// The largest divisor of k in [kMinSplit, kMaxSplit], or 0.
int64_t splitOf(int64_t k) {
  for (int64_t p = kMaxSplit; p >= kMinSplit; --p)
    if (k % p == 0)
      return p;
  return 0;
}

/// The two-stage form of reduce `u`, or nullptr when the rewrite does not apply.
const UOp *splitReduce(const UOp *u) {
  const std::vector<int64_t> axes = u->arg().getTuple()[1].intTuple();
  const UOp *x = u->src(0);
  DType d = u->dtype();
  if (axes.size() != 1 || x->hasDimVars() || d.scalar() == Scalar::F16 || d.scalar() == Scalar::BF16 || d.isBool())
    return nullptr;
  int64_t a = axes[0];
  Shape in = x->shapeVec();
  int64_t k = in[size_t(a)];
  int64_t p = splitOf(k);
  if (k < kMinReduce || u->numel() > kMaxOutputs || p == 0)
    return nullptr;
  Op op = u->arg().getTuple()[0].getOp();
  Shape split = in;
  split[size_t(a)] = k / p;
  split.insert(split.begin() + a, p);
  Tensor partial = Tensor(x).reshape(split).reduce(op, {a + 1});
  const UOp *stored = u->ctx().make(Op::Contiguous, d, {partial.uop()}, Arg(), partial.shape());
  return Tensor(stored).reduce(op, {a}).reshape(u->shapeVec()).uop();
}

} // namespace

const UOp *runSplitReduce(const UOp *root, PassContext &pc) {
  int64_t split = 0;
  root = substituteOneByOne(
      root, [](const UOp *u) { return u->op() == Op::ReduceAxis ? splitReduce(u) : nullptr; }, split);
  if (split > 0)
    pc.stats["split-reduce.split"] += split;
  return root;
}

} // namespace tgc
