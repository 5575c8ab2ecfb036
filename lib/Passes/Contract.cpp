//===- Contract.cpp - Multiply-adds into fused multiply-adds ----*- C++ -*-===//
// a*b + c -> mulacc(a, b, c) for f32 and f64, on targets with FMA hardware: one instruction and one rounding.
//===----------------------------------------------------------------------===//
//
//   add(mul(a, b), c) -> mulacc(a, b, c)      (add is commutative: c + a*b matches too)
//
// mulacc rounds once (ops.md), so the result may differ from the two roundings of mul and add in the last bit;
// the interpreter evaluates mulacc the same way, so every stage after this pass agrees with it bit for bit, and
// every target (cpu, c, opencl, amd, cuda) computes the same bits. The rewrite is what C compilers do under
// -ffp-contract=on, made explicit in the IR instead of left to the backend. Half types keep their two roundings:
// their mulacc is a float fma rounded to the half type, not what a GPU's native half fma computes.
// TargetDesc::contract turns it off (no FMA hardware, or tgc --fp-contract=off).

#include "IR/Rewrite.h"
#include "Passes/Pass.h"

namespace tgc {
namespace {

bool contractible(DType d) {
  Scalar s = d.element().scalar();
  return s == Scalar::F32 || s == Scalar::F64;
}

/// add(mul(a, b), c) -> mulacc(a, b, c)
const UOp *fuseMulAdd(const Match &m) {
  const UOp *product = m["p"];
  if (!contractible(m.root()->dtype()) || product->dtype() != m.root()->dtype())
    return nullptr;
  return m.ctx().make(Op::Mulacc, m.root()->dtype(), {product->src(0), product->src(1), m["c"]});
}

} // namespace

const UOp *runContract(const UOp *root, PassContext &pc) {
  if (!pc.target.contract)
    return root;
  using P = UPat;
  static const PatternMatcher pm("contract",
                                 {{P::op(Op::Add, {P::op(Op::Mul, {P::var("a"), P::var("b")}, "p"), P::var("c")}),
                                   fuseMulAdd, "add(mul(a, b), c) -> mulacc(a, b, c)"}});
  return graphRewrite(root, pm);
}

} // namespace tgc
