//===- LowerIndex.cpp - index arithmetic to i32 or i64 ----------*- C++ -*-===//
// Gives index-typed values a real width per kernel: int32 when every index value of the kernel fits, else int64.
//===----------------------------------------------------------------------===//
//
// Value ranges decide: a kernel whose index nodes all have ranges within [-2^31, 2^31) uses i32 (cheaper address
// arithmetic and vector lanes); otherwise i64. A node without a known range forces i64.

#include "IR/NodeIdMap.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"

namespace tgc {
namespace {

bool fitsI32(const UOp *u) { return u->hasRange() && u->vmin() >= INT32_MIN && u->vmax() <= INT32_MAX; }

const UOp *lowerKernel(const UOp *kernel) {
  std::vector<const UOp *> order = toposort(kernel);
  bool narrow = true;
  for (const UOp *u : order)
    if (u->dtype().isIndex() || (u->dtype().element().isIndex() && !u->dtype().isPtr()))
      narrow = narrow && fitsI32(u);
  DType width = narrow ? dt::I32 : dt::I64;
  Context &ctx = kernel->ctx();
  ScratchNodeIdMap<const UOp *> done(ctx); // what each node became
  std::vector<const UOp *> src;
  for (const UOp *u : order) {
    src.clear();
    bool same = true;
    for (const UOp *s : u->src()) {
      src.push_back(*done->find(s));
      same = same && src.back() == s;
    }
    DType d = u->dtype();
    if (!d.isPtr() && d.element().isIndex())
      d = width.vec(d.lanes());
    if (same && d == u->dtype()) {
      done->insert(u, u); // neither an index value nor over one
      continue;
    }
    done->insert(u, ctx.make(u->op(), d, src, u->arg(),
                             u->hasShape() ? std::optional<Shape>(u->shapeVec()) : std::nullopt, u->tag()));
  }
  return *done->find(kernel);
}

} // namespace

const UOp *runLowerIndex(const UOp *root, PassContext &) { return mapKernels(root, lowerKernel); }

} // namespace tgc
