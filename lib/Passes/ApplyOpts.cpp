//===- ApplyOpts.cpp - Optimization actions on kernel ranges ----*- C++ -*-===//
// Each action splits a range into an outer loop and a range of a new kind: upcast and unroll become vector lanes
// (expand), local and group become work-item indices on GPUs (gpudims).
//===----------------------------------------------------------------------===//
//
// An action is KIND:AXIS:AMOUNT, AXIS a range id of the kernel. Splitting range r (size n) by a:
//   r -> r_outer * a + r_inner      r_outer: range(n/a) keeps r's id and kind; r_inner: range(a), a new id
// and every `end`/`reduce` that closed r closes r_outer and r_inner. a == n (or AMOUNT 0) leaves only r_inner.
// grouptop instead gives r -> r_inner * (n/a) + r_outer, so each work-item of the group reduces a contiguous
// chunk. upcast and local apply to "loop" ranges, unroll, group and grouptop to "reduce" ranges (the new range's
// kind is the action's; grouptop's is "group"); a kernel where the action does not apply (no such
// range, another kind, a size a does not divide) is left alone, and an action no kernel takes is an error.

#include "IR/Rewrite.h"
#include "Passes/Linearize.h"
#include "Passes/OptAction.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

namespace tgc {
namespace {

bool parseInt(std::string_view s, int64_t &v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && v >= 0;
}

} // namespace

/// The kernel with range r replaced by `value` (arithmetic of the ranges `parts`), and every end/reduce that
/// closed r closing `parts` instead.
static const UOp *splitRange(const UOp *kernel, const std::vector<const UOp *> &order, const UOp *r, const UOp *value,
                             const std::vector<const UOp *> &parts);

const char *rangeKindOfAction(const std::string &action) {
  static const std::pair<const char *, const char *> kinds[] = {
      {"upcast", "upcast"},  {"unroll", "unroll"}, {"local", "local"}, {"group", "group"},
      {"grouptop", "group"}, {"tc", "warp"},       {"block", "block"}};
  for (const auto &[name, kind] : kinds)
    if (action == name)
      return kind;
  return nullptr;
}

const char *actionAppliesTo(const std::string &action) {
  return action == "upcast" || action == "local" || action == "block" ? "loop" : "reduce"; // tc: the reduce axis
}

std::optional<std::vector<OptAction>> parseOptActions(const std::string &text, std::string &err) {
  std::vector<OptAction> out;
  size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    size_t end = text.find(',', start);
    std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    size_t c1 = item.find(':');
    size_t c2 = c1 == std::string::npos ? c1 : item.find(':', c1 + 1);
    OptAction o;
    o.text = item;
    if (c2 == std::string::npos) {
      err = "'" + item + "' is not KIND:AXIS:AMOUNT";
      return std::nullopt;
    }
    o.kind = item.substr(0, c1);
    if (!rangeKindOfAction(o.kind)) {
      err = "unknown optimization '" + o.kind + "' (expected upcast, unroll, local, group, grouptop, tc or block)";
      return std::nullopt;
    }
    std::string_view rest(item);
    if (!parseInt(rest.substr(c1 + 1, c2 - c1 - 1), o.axis) || !parseInt(rest.substr(c2 + 1), o.amount)) {
      err = "'" + item + "' needs a non-negative axis and amount";
      return std::nullopt;
    }
    out.push_back(o);
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return out;
}

std::string actionUnsupported(const OptAction &o, const TargetDesc &t) {
  if (o.kind == "tc" && !t.tensorCores)
    return "'" + o.text + "' needs a target with tensor cores (cuda), not " + t.name();
  if (o.kind == "block" && t.isGPU())
    return "'" + o.text + "' is a CPU cache blocking action; GPU targets tile with local";
  return "";
}

std::string actionRequirement(const OptAction &o) {
  if (o.kind == "block")
    return "axis " + std::to_string(o.axis) + " must be a loop range whose size the amount divides, amount < size";
  if (o.kind == "tc")
    return "axis " + std::to_string(o.axis) +
           " must be the reduce range of an f32 sum of products of two f16 or "
           "bf16 values, amount 0, with 16, 8 and 16 dividing the m, n and reduce ranges";
  return "axis " + std::to_string(o.axis) + " must be a " + actionAppliesTo(o.kind) +
         " range whose size the amount divides";
}

const UOp *applyOptAction(const UOp *kernel, const OptAction &o) {
  if (o.kind == "tc")
    return o.amount == 0 ? applyTensorCore(kernel, o.axis) : nullptr;
  std::vector<const UOp *> order = toposort(kernel);
  const UOp *r = nullptr;
  int64_t nextId = 0;
  for (const UOp *u : order) {
    if (u->op() != Op::Range)
      continue;
    nextId = std::max(nextId, rangeId(u) + 1);
    if (rangeId(u) == o.axis)
      r = u;
  }
  if (!r || rangeKind(r) != actionAppliesTo(o.kind) || !r->src(0)->isConst())
    return nullptr;
  int64_t n = rangeSize(r);
  int64_t a = o.amount == 0 ? n : o.amount;
  if (a <= 0 || n % a != 0)
    return nullptr;
  Context &ctx = kernel->ctx();
  DType d = r->dtype();
  if (o.kind == "block" && a == n)
    return nullptr;        // one block of everything: nothing to move outward
  if (o.kind == "block") { // r -> r_block * a + r: the new range of n/a blocks nests outside every loop
    const UOp *block =
        ctx.make(Op::Range, d, {ctx.constInt(d, n / a)}, Arg::tuple({Arg(nextId), Arg(std::string("block"))}));
    const UOp *within = ctx.make(Op::Range, d, {ctx.constInt(d, a)}, r->arg());
    return splitRange(kernel, order, r, ctx.alu(Op::Add, {ctx.alu(Op::Mul, {block, ctx.constInt(d, a)}), within}),
                      {block, within});
  }
  const UOp *inner = ctx.make(Op::Range, d, {ctx.constInt(d, a)},
                              Arg::tuple({Arg(nextId), Arg(std::string(rangeKindOfAction(o.kind)))}));
  const UOp *outer = a == n ? nullptr : ctx.make(Op::Range, d, {ctx.constInt(d, n / a)}, r->arg());
  // grouptop puts the new range on top: work-item g of the group reduces elements g*(n/a) .. (g+1)*(n/a)-1
  const UOp *value = !outer ? inner
                     : o.kind == "grouptop"
                         ? ctx.alu(Op::Add, {ctx.alu(Op::Mul, {inner, ctx.constInt(d, n / a)}), outer})
                         : ctx.alu(Op::Add, {ctx.alu(Op::Mul, {outer, ctx.constInt(d, a)}), inner});
  std::vector<const UOp *> parts;
  if (outer)
    parts.push_back(outer);
  parts.push_back(inner);
  return splitRange(kernel, order, r, value, parts);
}

static const UOp *splitRange(const UOp *kernel, const std::vector<const UOp *> &order, const UOp *r, const UOp *value,
                             const std::vector<const UOp *> &parts) {
  Context &ctx = kernel->ctx();
  std::unordered_map<const UOp *, const UOp *> done;
  for (const UOp *u : order) {
    if (u == r) {
      done[u] = value;
      continue;
    }
    bool closes = u->op() == Op::End || u->op() == Op::Reduce;
    std::vector<const UOp *> src;
    for (size_t i = 0; i < u->numSrc(); ++i) {
      if (closes && i > 0 && u->src(i) == r) {
        src.insert(src.end(), parts.begin(), parts.end());
        continue;
      }
      src.push_back(done.at(u->src(i)));
    }
    if (closes) // ranges listed in nesting order, as linearize nests them
      std::sort(src.begin() + 1, src.end(), rangeNestsBefore);
    done[u] = ctx.make(u->op(), u->dtype(), src, u->arg(),
                       u->hasShape() ? std::optional<Shape>(u->shapeVec()) : std::nullopt, u->tag());
  }
  return done.at(kernel);
}

const UOp *runApplyOpts(const UOp *root, PassContext &pc) {
  std::string err;
  std::optional<std::vector<OptAction>> opts = parseOptActions(pc.opts, err);
  if (!opts) {
    pc.diags.error(Loc{pc.module.fileName, 0, 0}, "apply-opts: " + err);
    return nullptr;
  }
  for (const OptAction &o : *opts) {
    if (std::string why = actionUnsupported(o, pc.target); !why.empty()) {
      pc.diags.error(Loc{pc.module.fileName, 0, 0}, "apply-opts: " + why);
      return nullptr;
    }
    std::unordered_map<const UOp *, const UOp *> split;
    for (const UOp *u : toposort(root))
      if (u->op() == Op::Sink && isKernelRoot(u))
        if (const UOp *k = applyOptAction(u, o))
          split[u] = k;
    if (split.empty()) {
      pc.diags.error(Loc{pc.module.fileName, 0, 0},
                     "apply-opts: '" + o.text + "' applies to no kernel (" + actionRequirement(o) + ")");
      return nullptr;
    }
    root = substitute(root, split);
    pc.stats["apply-opts." + o.kind] += int64_t(split.size());
  }
  return root;
}

} // namespace tgc
