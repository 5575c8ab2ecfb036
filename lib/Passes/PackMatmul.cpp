//===- PackMatmul.cpp - Lay a matmul's right operand out in panels -*- C++ -*-===//
// On CPU targets, a large matmul reads its right operand through a packed copy: column panels of the width the
// register tile reads, each panel contiguous over the reduce axis (BLAS libraries' "packing" of B).
//===----------------------------------------------------------------------===//
//
// matmul(a[M, K], b[K, N]) with NR = TargetDesc::panelLanes:
//   bp = contiguous(permute(reshape(b, [K, N/NR, NR]), [1, 0, 2]))       panel p holds columns p*NR .. p*NR+NR-1
//   matmul(a, reshape(permute(bp, [1, 0, 2]), [K, N]))                    the same values, read from bp
// The copy is one small kernel (K*N elements); in exchange the matmul's tile reads NR contiguous values per step of
// the reduce axis instead of a row of b at stride N, which at power-of-two N maps every row to the same cache sets.
// optimize then blocks the panels so that a block of them stays in L2 (the `block` action).
//
// Applies when the matmul is f32 or f64, b is a matrix (rank 2) that does not fit TargetDesc::l2OperandBytes, NR
// divides N with at least two panels, and a has at least kMinRows rows (fewer rows reuse b too little to pay for
// the copy). GPU targets are left alone (they tile through local memory).

#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/TensorBuilder.h"

namespace tgc {
namespace {

constexpr int64_t kMinRows = 32;

/// b is already read from a packed copy: reshape(permute(contiguous(...))).
bool readsPacked(const UOp *b) {
  return b->op() == Op::Reshape && b->src(0)->op() == Op::Permute && b->src(0)->src(0)->op() == Op::Contiguous;
}

/// The packed form of matmul `u`, or nullptr when the rewrite does not apply.
const UOp *packedMatmul(const UOp *u, const TargetDesc &t) {
  const UOp *a = u->src(0);
  const UOp *b = u->src(1);
  DType d = u->dtype();
  if ((d != dt::F32 && d != dt::F64) || readsPacked(b))
    return nullptr;
  if (b->rank() != 2 || a->rank() < 2)
    return nullptr;
  int64_t k = b->shape()[0], n = b->shape()[1];
  int64_t rows = a->numel() / std::max<int64_t>(1, k);
  int64_t nr = t.panelLanes(int(d.itemSize()));
  if (nr < 2 || n % nr != 0 || n / nr < 2 || rows < kMinRows || k * n * d.itemSize() <= t.l2OperandBytes)
    return nullptr;
  Tensor panels = Tensor(b).reshape({k, n / nr, nr}).permute({1, 0, 2});
  Tensor packed = Tensor(u->ctx().make(Op::Contiguous, d, {panels.uop()}, Arg(), panels.shape()));
  Tensor read = packed.permute({1, 0, 2}).reshape({k, n});
  return u->ctx().make(Op::Matmul, d, {a, read.uop()}, u->arg(), u->shapeVec());
}

} // namespace

const UOp *runPackMatmul(const UOp *root, PassContext &pc) {
  if (pc.target.isGPU())
    return root;
  // one matmul at a time, so that a matmul whose operands contain another one is rebuilt from the packed one
  int64_t packed = 0;
  root = substituteOneByOne(
      root, [&](const UOp *u) { return u->op() == Op::Matmul ? packedMatmul(u, pc.target) : nullptr; }, packed);
  if (packed > 0)
    pc.stats["pack-matmul.packed"] += packed;
  return root;
}

} // namespace tgc
