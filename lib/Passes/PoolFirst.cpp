//===- PoolFirst.cpp - Average-pool a 1x1 convolution's input, not its output -*- C++ -*-===//
// avg_pool2d(conv2d(x, w[, b])) -> conv2d(avg_pool2d(x), w[, b]) for a 1x1 convolution of stride 1 without padding:
// the pool's window area times fewer multiply-adds.
//===----------------------------------------------------------------------===//
//
// A 1x1 convolution of stride 1 maps each pixel's channels alone, linearly (plus a bias), and an average pool
// without padding is a mean of pixels: the two commute, since mean_p(W x_p + b) = W mean_p(x_p) + b. Pooling
// first convolves k*k times fewer pixels: DenseNet's transition layers (batch norm, ReLU, 1x1 convolution, 2x2
// average pool) do a quarter of the multiply-adds. Sums are reassociated (floating-point results change in the
// last bits).
//
// Applies when the convolution is a float conv2d on [N, C, H, W] with a 1x1 kernel, stride 1 and no padding (any
// groups or dilation), the pool has no padding, and the pool is the convolution's only user (another user would
// need the full convolution anyway, and both would be computed).

#include "IR/Rewrite.h"
#include "Passes/Pass.h"

#include <unordered_map>

namespace tgc {
namespace {

/// conv2d(x, w[, b]) whose output is each pixel's channels mapped alone: a 1x1 kernel, stride 1, no padding.
bool pixelwiseConv(const UOp *c) {
  if (c->op() != Op::Conv2d || !c->dtype().isFloat() || c->rank() != 4 || c->src(1)->rank() != 4)
    return false;
  const Arg::Tuple &arg = c->arg().getTuple(); // [groups, stride, dilation, pads]
  auto w = c->src(1)->shape();
  return arg.size() == 4 && w[2] == 1 && w[3] == 1 && arg[1].isIntTupleOf(1) && arg[3].isIntTupleOf(0);
}

/// The pooled-first form of avg_pool2d `u`, or nullptr when the rewrite does not apply.
const UOp *poolFirst(const UOp *u, const std::unordered_map<const UOp *, int> &users) {
  if (u->op() != Op::AvgPool2d || u->rank() != 4)
    return nullptr;
  const UOp *conv = u->src(0);
  if (!pixelwiseConv(conv) || users.at(conv) != 1 || !u->arg().getTuple()[2].isIntTupleOf(0))
    return nullptr;
  const UOp *x = conv->src(0);
  Shape pooledShape = {x->shape()[0], x->shape()[1], u->shape()[2], u->shape()[3]};
  const UOp *pooled = u->ctx().make(Op::AvgPool2d, x->dtype(), {x}, u->arg(), pooledShape);
  std::vector<const UOp *> src(conv->src().begin(), conv->src().end());
  src[0] = pooled;
  return u->ctx().make(Op::Conv2d, conv->dtype(), src, conv->arg(), u->shapeVec());
}

/// How many times each node of the graph is an operand.
std::unordered_map<const UOp *, int> userCounts(const UOp *root) {
  std::unordered_map<const UOp *, int> users;
  for (const UOp *u : toposort(root)) {
    users.try_emplace(u, 0);
    for (const UOp *s : u->src())
      ++users[s];
  }
  return users;
}

} // namespace

const UOp *runPoolFirst(const UOp *root, PassContext &pc) {
  // one pool at a time: a replacement changes the users of the nodes below it
  for (bool changed = true; changed;) {
    changed = false;
    std::unordered_map<const UOp *, int> users = userCounts(root);
    for (const UOp *u : toposort(root)) {
      if (const UOp *r = poolFirst(u, users)) {
        root = substitute(root, {{u, r}});
        pc.stats["pool-first.moved"] += 1;
        changed = true;
        break;
      }
    }
  }
  return root;
}

} // namespace tgc
