//===- NhcwInput.cpp - 1x1 convolutions on small maps read their input row by row -*- C++ -*-===//
// On CPU targets, a 1x1 convolution on a map at most 14 wide reads its input through a copy laid out [N, H, C, W],
// so the input rows that one row of outputs reduces over are one contiguous stream.
//===----------------------------------------------------------------------===//
//
// conv2d(x[N, C, H, W], w) with a 1x1 kernel, stride 1, no padding and groups 1:
//   xr = contiguous(permute(x, [0, 2, 1, 3]))     xr[n, h, c, w] = x[n, c, h, w]
//   conv2d(permute(xr, [0, 2, 1, 3]), w)          the same values, read from xr
// A register tile of a row's pixels times a vector of output channels reads, at each step c of the reduce, the W
// pixels x[n, c, h, 0..W-1]: 28 bytes of a 7-wide row. Laid out [N, C, H, W], the rows of consecutive channels are
// H*W elements apart, so each step touches a new cache line, and the C lines of a row do not stay in the L1 cache
// while the tiles of other output channels sweep them again (MobileNetV2's 320 -> 1280 layer on 7x7 ran at 47% of
// the FMA peak, 80% when the input fit L1). Laid out [N, H, C, W], a row's C steps read C*W contiguous elements.
// The copy is usually no kernel of its own: the producer of x stores it in this layout.
//
// Applies to f32 and f64 convolutions whose input is at most 14 wide and larger than an L1 data cache (32 KiB;
// smaller inputs stay in L1 either way), not already read through such a copy. GPU targets are left alone.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/TensorBuilder.h"

namespace tgc {
namespace {

constexpr int64_t kMaxWidth = 14;
constexpr int64_t kL1Bytes = 32 * 1024;

/// x is already read from a row-major copy: permute(contiguous(permute(...))).
bool readsRows(const UOp *x) { return x->op() == Op::Permute && x->src(0)->op() == Op::Contiguous; }

/// The form of conv2d `u` that reads its input [N, H, C, W], or nullptr when the rewrite does not apply.
const UOp *rowsConv(const UOp *u) {
  DType d = u->dtype();
  const UOp *x = u->src(0);
  const UOp *w = u->src(1);
  if ((d != dt::F32 && d != dt::F64) || x->rank() != 4 || w->rank() != 4 || readsRows(x))
    return nullptr;
  const Arg::Tuple &arg = u->arg().getTuple(); // [groups, stride, dilation, pads]
  if (arg.size() != 4 || !arg[0].isInt() || arg[0].getInt() != 1 || !arg[1].isIntTupleOf(1) || !arg[3].isIntTupleOf(0))
    return nullptr;
  const Shape &s = x->shapeVec();
  if (w->shape()[2] != 1 || w->shape()[3] != 1 || s[3] > kMaxWidth || s[2] < 2)
    return nullptr;
  if (s[1] * s[2] * s[3] * int64_t(d.itemSize()) <= kL1Bytes)
    return nullptr;
  Tensor rows = Tensor(x).permute({0, 2, 1, 3});
  Tensor copy = Tensor(u->ctx().make(Op::Contiguous, d, {rows.uop()}, Arg(), rows.shape()));
  std::vector<const UOp *> src(u->src().begin(), u->src().end());
  src[0] = copy.permute({0, 2, 1, 3}).uop();
  return u->ctx().withSrc(u, src);
}

} // namespace

const UOp *runNhcwInput(const UOp *root, PassContext &pc) {
  if (pc.target.isGPU())
    return root;
  int64_t changed = 0;
  root = substituteOneByOne(
      root, [&](const UOp *u) { return u->op() == Op::Conv2d ? rowsConv(u) : nullptr; }, changed);
  if (changed > 0)
    pc.stats["nhcw-input.copied"] += changed;
  return root;
}

} // namespace tgc
