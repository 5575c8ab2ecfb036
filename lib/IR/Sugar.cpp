//===- Sugar.cpp - Tensor-level conveniences made explicit ------*- C++ -*-===//
// Broadcasting inserts reshape and expand, negative axes are counted from the end, 1-D matmul reshapes around.
//===----------------------------------------------------------------------===//

#include "IR/Sugar.h"

#include "IR/Infer.h"
#include "IR/SymbolicDims.h"

#include <algorithm>

namespace tgc {
namespace {

/// Where each op keeps its axes: the whole arg (`axis`, or a list), or one element of a tuple arg.
enum class AxesAt { None, Arg, First, Second };

AxesAt axesOf(Op op) {
  switch (op) {
  case Op::Permute:
  case Op::Flip:
  case Op::Softmax:
  case Op::LogSoftmax:
  case Op::Logsumexp:
  case Op::Mean:
  case Op::Gather:
  case Op::Concat:
  case Op::Cumsum: return AxesAt::Arg;
  case Op::Var:
  case Op::Layernorm:
  case Op::Rmsnorm: return AxesAt::First;     // [[axes], correction or eps]
  case Op::ReduceAxis: return AxesAt::Second; // [op, [axes]]
  default: return AxesAt::None;
  }
}

/// An axis or a list of axes with the negative ones counted from the end (those still negative are left for the
/// op's own check to report).
Arg fromEnd(const Arg &a, int64_t rank) {
  if (a.isInt())
    return a.getInt() < 0 && a.getInt() + rank >= 0 ? Arg(a.getInt() + rank) : a;
  if (!a.isIntTuple())
    return a;
  Arg::Tuple out;
  for (const Arg &x : a.getTuple())
    out.push_back(fromEnd(x, rank));
  return Arg(out);
}

Arg normalizeAxes(Op op, const Arg &arg, int64_t rank) {
  AxesAt at = axesOf(op);
  if (at == AxesAt::Arg)
    return fromEnd(arg, rank);
  size_t i = at == AxesAt::First ? 0 : 1;
  if (at == AxesAt::None || !arg.isTuple() || arg.getTuple().size() <= i)
    return arg;
  Arg::Tuple t = arg.getTuple();
  t[i] = fromEnd(t[i], rank);
  return Arg(t);
}

/// x moved to `shape` by numpy's rule: axes of size 1 prepended (reshape), then stretched (expand) to the axes'
/// sizes and variables (`vars`, empty when none).
const UOp *broadcastTo(Context &ctx, const UOp *x, const Shape &shape, const std::vector<const UOp *> &vars) {
  Shape s = x->shapeVec();
  if (s == shape)
    return x;
  if (s.size() < shape.size()) {
    s.insert(s.begin(), shape.size() - s.size(), 1);
    x = ctx.make(Op::Reshape, x->dtype(), {x}, Arg(), s);
  }
  return s == shape ? x : ctx.make(Op::Expand, x->dtype(), {x}, Arg(), shape, {}, vars);
}

/// Elementwise operands of rank >= 1 broadcast to one shape (rank-0 operands broadcast as they are).
bool broadcastOperands(Context &ctx, Op op, std::vector<const UOp *> &src, std::string &err) {
  std::optional<Shape> full;
  for (const UOp *s : src) {
    if (!s->hasShape() || s->rank() == 0)
      continue;
    std::optional<Shape> b = full ? broadcastShapes(*full, s->shapeVec()) : s->shapeVec();
    if (!b) {
      err = "operands of '" + std::string(opName(op)) + "' do not broadcast: " + shapeStr(*full) + " and " +
            shapeStr(s->shape());
      return false;
    }
    full = b;
  }
  std::vector<const UOp *> vars = full ? broadcastVars(src, *full) : std::vector<const UOp *>{};
  for (const UOp *&s : src)
    if (full && s->hasShape() && s->rank() > 0)
      s = broadcastTo(ctx, s, *full, vars);
  return true;
}

/// matmul with a 1-D operand: the left one as a row [1, K], the right one as a column [K, 1], and that axis dropped
/// from the result.
void matmulVectors(Context &ctx, Desugared &d) {
  const UOp *a = d.src[0], *b = d.src[1];
  if (!a->hasShape() || !b->hasShape() || (a->rank() != 1 && b->rank() != 1) || a->rank() == 0 || b->rank() == 0)
    return;
  Shape as = a->shapeVec(), bs = b->shapeVec();
  if (as.size() == 1)
    d.src[0] = ctx.make(Op::Reshape, a->dtype(), {a}, Arg(), Shape{1, as[0]});
  if (bs.size() == 1)
    d.src[1] = ctx.make(Op::Reshape, b->dtype(), {b}, Arg(), Shape{bs[0], 1});
  // the result: the batch axes of the matrix operand, then M (unless a was a vector), then N (unless b was)
  const Shape &batchOf = as.size() > 1 ? as : bs;
  Shape out(batchOf.begin(), batchOf.size() > 1 ? batchOf.end() - 2 : batchOf.begin());
  if (as.size() > 1)
    out.push_back(as[as.size() - 2]);
  if (bs.size() > 1)
    out.push_back(bs.back());
  d.reshapeResult = out;
}

} // namespace

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

std::optional<Desugared> desugar(Context &ctx, Op op, std::vector<const UOp *> src, Arg arg, std::string &err) {
  Desugared d{std::move(src), std::move(arg), std::nullopt};
  if (d.src.empty() || !d.src[0]->hasShape())
    return d;
  d.arg = normalizeAxes(op, d.arg, d.src[0]->rank());
  if (group::elementwise().contains(op) && !broadcastOperands(ctx, op, d.src, err))
    return std::nullopt;
  if (op == Op::Matmul && d.src.size() == 2)
    matmulVectors(ctx, d);
  return d;
}

const UOp *buildNode(Context &ctx, Op op, std::vector<const UOp *> src, Arg arg, std::optional<DType> dtype,
                     const std::optional<Shape> &shape, std::string &err, BuildErrorSite *site, Arg tag,
                     std::span<const UOp *const> dimVars) {
  auto fail = [&](BuildErrorSite where, std::string message) -> const UOp * {
    if (site)
      *site = where;
    err = std::move(message);
    return nullptr;
  };
  if (!dtype && !(dtype = inferDType(op, src, arg, err)))
    return fail(BuildErrorSite::Op, err);
  int arity = opArity(op);
  if (arity >= 0 && int(src.size()) != arity)
    return fail(BuildErrorSite::Op, "'" + std::string(opName(op)) + "' takes " + std::to_string(arity) + " operand" +
                                        (arity == 1 ? "" : "s") + ", got " + std::to_string(src.size()));
  std::optional<Desugared> sugar = desugar(ctx, op, std::move(src), std::move(arg), err);
  if (!sugar)
    return fail(BuildErrorSite::Op, err);
  InferredShape inferred = inferShape(op, *dtype, sugar->src, sugar->arg, sugar->reshapeResult ? std::nullopt : shape);
  if (!inferred.error.empty())
    return fail(shape ? BuildErrorSite::Type : BuildErrorSite::Op, inferred.error);
  if (sugar->reshapeResult && shape && *shape != *sugar->reshapeResult)
    return fail(BuildErrorSite::Type, "the type gives shape " + shapeStr(*shape) + " but '" + std::string(opName(op)) +
                                          "' produces " + shapeStr(*sugar->reshapeResult));
  bool takesVars = op == Op::Input || op == Op::Weight || op == Op::Const || op == Op::Expand;
  const UOp *u = ctx.make(op, *dtype, sugar->src, sugar->arg, inferred.shape, std::move(tag),
                          takesVars && !sugar->reshapeResult ? dimVars : std::span<const UOp *const>{});
  if (sugar->reshapeResult)
    u = ctx.make(Op::Reshape, *dtype, {u}, Arg(), *sugar->reshapeResult);
  bool sameVars = std::equal(dimVars.begin(), dimVars.end(), u->dimVars().begin(), u->dimVars().end());
  if (shape && !sameVars)
    return fail(BuildErrorSite::Type, "the type gives shape " + symbolicShape(*shape, dimVars) + " but '" +
                                          std::string(opName(op)) + "' produces " + symbolicShapeStr(u));
  if (std::string e = u->hasShape() ? checkDimVars(u) : ""; !e.empty())
    return fail(BuildErrorSite::Op, e);
  return u;
}

} // namespace tgc
