//===- Simplify.cpp - The simplify pass and its constant folding -*- C++ -*-===//
// Folds constant ALU ops, casts and bitcasts through Eval (exact dtype semantics), then runs all rule families.
//===----------------------------------------------------------------------===//

#include "IR/Eval.h"
#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/SimplifyRules.h"

namespace tgc {
namespace simplify {
namespace {

std::optional<Shape> shapeOf(const UOp *u) {
  if (!u->hasShape())
    return std::nullopt;
  return u->shapeVec();
}

const UOp *constFromArg(const UOp *like, const std::optional<Arg> &value) {
  if (!value)
    return nullptr;
  return like->ctx().make(Op::Const, like->dtype(), {}, *value, shapeOf(like), {}, like->dimVars());
}

const UOp *foldAlu(const Match &m) {
  const UOp *u = m.root();
  std::vector<Arg> args;
  for (const UOp *s : u->src())
    args.push_back(s->arg());
  DType in = u->op() == Op::Where ? u->src(1)->dtype() : u->src(0)->dtype();
  return constFromArg(u, evalAlu(u->op(), u->dtype().element(), in.element(), args)); // vector constants: per lane
}

const UOp *foldCast(const Match &m) {
  const UOp *u = m.root();
  const UOp *c = u->src(0);
  if (u->op() == Op::Cast)
    return constFromArg(u, evalCast(c->arg(), c->dtype().element(), u->dtype().element()));
  return constFromArg(u, evalBitcast(c->arg(), c->dtype().element(), u->dtype().element()));
}

/// An integer or bool value whose range holds one value is that constant.
const UOp *foldSingleValue(const Match &m) {
  const UOp *u = m.root();
  if (!u->hasRange() || u->vmin() != u->vmax() || u->dtype().isVector())
    return nullptr;
  return u->ctx().constLikeInt(u, u->vmin());
}

} // namespace

std::vector<Rule> foldRules() {
  UPat anyConst = UPat::any({Op::Const});
  OpSet casts = {Op::Cast, Op::Bitcast};
  return {
      {UPat::any(group::alu()).repeatSrc(anyConst), foldAlu, "op(c0, c1, ...) -> c  (evaluated in the dtype)"},
      {UPat(casts, {anyConst}), foldCast, "cast(c) -> c'  (converted), bitcast(c) -> c'  (reinterpreted)"},
      {UPat::any(group::elementwise()).dclass(DClass::IntOrBool), foldSingleValue,
       "x -> c  when vmin(x) == vmax(x) == c"},
  };
}

static const PatternMatcher &matcher() {
  static const PatternMatcher pm = [] {
    std::vector<Rule> rules;
    for (auto family : {emptyRules, foldRules, identityRules, sumRules, divModRules, compareRules, whereRules,
                        vectorRules, reduceRules})
      for (Rule &r : family())
        rules.push_back(std::move(r));
    return PatternMatcher("simplify", std::move(rules), /*preservesTypes=*/true);
  }();
  return pm;
}

} // namespace simplify

const UOp *simplifyExpression(const UOp *root) {
  // the rules look at nothing but the node: what one call made of a subexpression holds for every later call
  RewriteOptions opts;
  opts.memo = &root->ctx().memo(&simplify::matcher());
  return graphRewrite(root, simplify::matcher(), opts);
}

const UOp *runSimplify(const UOp *root, PassContext &pc) { return simplifyExpression(root); }

const UOp *simplifyNode(const UOp *u) {
  for (int step = 0; step < 1000; ++step) { // each rule makes progress; the bound guards a cycle between two
    const UOp *r = simplify::matcher().rewrite(u);
    if (!r)
      return u;
    u = r;
  }
  internalError("simplify: no fixed point at one node after 1000 rewrites");
}

} // namespace tgc
