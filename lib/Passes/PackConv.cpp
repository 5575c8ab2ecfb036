//===- PackConv.cpp - Lay a convolution's weights out in blocks of output channels -*- C++ -*-===//
// On CPU targets, conv2d reads its weights through a copy whose output channels are contiguous in blocks of the
// vector width, so the register tile can take its vector lanes along the output channels (a direct convolution).
//===----------------------------------------------------------------------===//
//
// conv2d(x, w[O, C, KH, KW]) with groups 1, W the vector width:
//   wp = contiguous(permute(reshape(w, [O/W, W, C, KH, KW]), [0, 2, 3, 4, 1]))   wp[o/W, c, i, j, o%W] = w[o, c, i, j]
//   conv2d(x, reshape(permute(wp, [0, 4, 1, 2, 3]), [O, C, KH, KW]))            the same values, read from wp
// A tile's weights (one or more blocks) are then a few sequential streams: with the output channels innermost
// over the whole layer, each reduce step read 64-128 bytes every O elements (ResNet-18: 42 -> 34 ms).
// Without it, the only contiguous loop axis of the convolution is the output's width (20 in the beautiful_mnist
// CNN's second convolution: 4 lanes of a 16-lane register); with it, the output channels are (16 or 32 lanes), the
// input is broadcast along them, and each step of the reduce is one vector load of weights for the whole tile. The
// copy is one small kernel; of weights, it depends on the weights alone and runs once (plan-memory's run-once calls).
//
// Applies when the convolution is f32 or f64 with groups 1, the output channels are a multiple of the vector width
// (at least one full vector), and the weights are not already read through such a copy. GPU targets are left alone.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/TensorBuilder.h"

namespace tgc {
namespace {

/// w is already read from a channel-last copy: permute(contiguous(...)).
bool readsPacked(const UOp *w) {
  return w->op() == Op::Reshape && w->src(0)->op() == Op::Permute && w->src(0)->src(0)->op() == Op::Contiguous;
}

/// The packed form of conv2d `u`, or nullptr when the rewrite does not apply.
const UOp *packedConv(const UOp *u, const TargetDesc &t) {
  const UOp *w = u->src(1);
  DType d = u->dtype();
  if ((d != dt::F32 && d != dt::F64) || w->rank() != 4 || readsPacked(w))
    return nullptr;
  if (!u->arg().isTuple() || u->arg().getTuple().empty() || u->arg().getTuple()[0].getInt() != 1)
    return nullptr; // grouped and depthwise convolutions keep their layout
  int64_t outChannels = w->shape()[0];
  int64_t width = t.vectorLanes(int(d.itemSize()));
  if (width < 2 || outChannels % width != 0)
    return nullptr;
  const Shape &s = w->shapeVec();
  Tensor blocked = Tensor(w).reshape({outChannels / width, width, s[1], s[2], s[3]}).permute({0, 2, 3, 4, 1});
  Tensor packed = Tensor(u->ctx().make(Op::Contiguous, d, {blocked.uop()}, Arg(), blocked.shape()));
  std::vector<const UOp *> src(u->src().begin(), u->src().end());
  src[1] = packed.permute({0, 4, 1, 2, 3}).reshape(s).uop();
  return u->ctx().withSrc(u, src);
}

} // namespace

const UOp *runPackConv(const UOp *root, PassContext &pc) {
  if (pc.target.isGPU())
    return root;
  // one convolution at a time, so that one whose input holds another is rebuilt from the packed one
  int64_t packed = 0;
  root = substituteOneByOne(
      root, [&](const UOp *u) { return u->op() == Op::Conv2d ? packedConv(u, pc.target) : nullptr; }, packed);
  if (packed > 0)
    pc.stats["pack-conv.packed"] += packed;
  return root;
}

} // namespace tgc
