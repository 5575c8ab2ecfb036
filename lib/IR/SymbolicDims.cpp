//===- SymbolicDims.cpp - Tensor dimensions that are variables --*- C++ -*-===//
// Deriving variable axes from operands, the rules they obey, printing, and binding them to values.
//===----------------------------------------------------------------------===//

#include "IR/SymbolicDims.h"

#include "IR/Infer.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace tgc {

const std::string &varName(const UOp *var) { return var->arg().getTuple()[0].getString(); }
int64_t varMin(const UOp *var) { return var->arg().getTuple()[1].getInt(); }
int64_t varMax(const UOp *var) { return var->arg().getTuple()[2].getInt(); }

std::string checkDefineVarArg(const UOp *u) {
  DType d = u->dtype();
  if (!d.isInt() || d.isVector() || d.isPtr())
    return "needs a scalar integer dtype, has " + d.str();
  const Arg &a = u->arg();
  bool form = a.isTuple() && a.getTuple().size() == 3 && a.getTuple()[0].isString() && a.getTuple()[1].isInt() &&
              a.getTuple()[2].isInt();
  if (!form || a.getTuple()[0].getString().empty())
    return "arg must be [\"name\", lo, hi]";
  int64_t lo = a.getTuple()[1].getInt();
  int64_t hi = a.getTuple()[2].getInt();
  if (lo > hi)
    return "bounds [" + std::to_string(lo) + ", " + std::to_string(hi) + "] are empty";
  if (lo < dtypeMin(d) || hi > dtypeMax(d))
    return "bounds [" + std::to_string(lo) + ", " + std::to_string(hi) + "] do not fit " + d.str();
  return "";
}

namespace {

bool anyDimVars(std::span<const UOp *const> src) {
  return std::any_of(src.begin(), src.end(), [](const UOp *s) { return s->hasDimVars(); });
}

int64_t product(std::span<const int64_t> dims, size_t end) {
  int64_t n = 1;
  for (size_t i = 0; i < end; ++i)
    n *= dims[i];
  return n;
}

/// The output axis of a reshape that is input axis `a` unchanged (same size, same elements before it), or -1.
int reshapedAxis(std::span<const int64_t> in, size_t a, std::span<const int64_t> out) {
  int64_t before = product(in, a);
  for (size_t b = 0; b < out.size(); ++b)
    if (out[b] == in[a] && product(out, b) == before)
      return int(b);
  return -1;
}

bool isEmpty(const std::vector<const UOp *> &vars) {
  return std::all_of(vars.begin(), vars.end(), [](const UOp *v) { return v == nullptr; });
}

std::string axisName(const UOp *v, int64_t size) { return v ? varName(v) : std::to_string(size); }

/// Inputs and outputs are dense in memory: a variable axis may only follow axes of size 1.
std::string checkBoundaryLayout(const UOp *u) {
  for (size_t a = 0; a < size_t(u->rank()); ++a)
    if (u->dimVar(a) && product(u->shape(), a) != 1)
      return "variable axis " + varName(u->dimVar(a)) + " of '" + std::string(opName(u->op())) +
             "' must be outermost (only axes of size 1 before it), so the layout is that of the dense tensor";
  return "";
}

/// An operand's variable axis must survive in the result at the same place (ops other than reshape and permute).
std::string checkOperandVarsKept(const UOp *u) {
  for (size_t i = 0; i < u->numSrc(); ++i) {
    const UOp *s = u->src(i);
    for (size_t a = 0; a < s->dimVars().size(); ++a) {
      const UOp *v = s->dimVar(a);
      if (!v || (u->op() == Op::ReduceAxis && u->shape()[a] == 1))
        continue;
      if (s->rank() != u->rank() || u->dimVar(a) != v)
        return "'" + std::string(opName(u->op())) + "' cannot resize, move or reduce variable axis " + varName(v) +
               " of operand #" + std::to_string(i) + " (only elementwise ops, permute, reshapes that keep it, " +
               "broadcasts and reduce_axis handle variable axes)";
    }
  }
  return "";
}

/// Elementwise operands agree on each axis's variable (a broadcast to a variable axis is an expand to it).
std::string checkElementwiseVars(const UOp *u) {
  for (size_t i = 0; i < u->numSrc(); ++i) {
    const UOp *s = u->src(i);
    if (s->rank() != u->rank())
      continue;
    for (size_t a = 0; a < size_t(u->rank()); ++a) {
      if (s->dimVar(a) == u->dimVar(a))
        continue;
      return "operand #" + std::to_string(i) + " of '" + std::string(opName(u->op())) + "' has axis " +
             std::to_string(a) + " of size " + axisName(s->dimVar(a), s->shape()[a]) + ", the result " +
             axisName(u->dimVar(a), u->shape()[a]);
    }
  }
  return "";
}

std::string checkReshapeVars(const UOp *u) {
  const UOp *x = u->src(0);
  for (size_t a = 0; a < x->dimVars().size(); ++a) {
    const UOp *v = x->dimVar(a);
    if (!v)
      continue;
    int b = reshapedAxis(x->shape(), a, u->shape());
    if (b < 0 || u->dimVar(size_t(b)) != v)
      return "'reshape' cannot merge or split variable axis " + varName(v) + " (it must stay one axis, with the " +
             "same axes before it)";
  }
  for (size_t b = 0; b < u->dimVars().size(); ++b)
    if (const UOp *v = u->dimVar(b); v && std::find(x->dimVars().begin(), x->dimVars().end(), v) == x->dimVars().end())
      return "'reshape' makes axis " + std::to_string(b) + " variable " + varName(v) + " from static axes";
  return "";
}

std::string checkExpandVars(const UOp *u) {
  const UOp *x = u->src(0);
  for (size_t a = 0; a < size_t(u->rank()); ++a)
    if (x->shape()[a] != 1 && x->dimVar(a) != u->dimVar(a))
      return "'expand' keeps axis " + std::to_string(a) + " of size " + axisName(x->dimVar(a), x->shape()[a]) +
             " but the type gives " + axisName(u->dimVar(a), u->shape()[a]);
  return "";
}

} // namespace

std::vector<const UOp *> deriveDimVars(Op op, std::span<const UOp *const> src, const Arg &arg, const Shape &shape) {
  if (!anyDimVars(src))
    return {};
  std::vector<const UOp *> vars(shape.size(), nullptr);
  if (op == Op::Permute && src.size() == 1 && arg.isIntTuple() && arg.getTuple().size() == shape.size()) {
    std::vector<int64_t> order = arg.intTuple();
    for (size_t a = 0; a < order.size(); ++a)
      if (order[a] >= 0 && order[a] < src[0]->rank())
        vars[a] = src[0]->dimVar(size_t(order[a]));
  } else if (op == Op::Reshape && src.size() == 1) {
    const UOp *x = src[0];
    for (size_t a = 0; a < x->dimVars().size(); ++a)
      if (int b = x->dimVar(a) ? reshapedAxis(x->shape(), a, shape) : -1; b >= 0)
        vars[size_t(b)] = x->dimVar(a);
  } else {
    for (const UOp *s : src)
      if (s->hasDimVars() && size_t(s->rank()) == shape.size())
        for (size_t a = 0; a < shape.size(); ++a)
          if (!vars[a] && s->dimVar(a) && s->shape()[a] == shape[a])
            vars[a] = s->dimVar(a);
  }
  return isEmpty(vars) ? std::vector<const UOp *>{} : vars;
}

std::string checkDimVars(const UOp *u) {
  if (!u->hasShape())
    return "";
  for (size_t a = 0; a < u->dimVars().size(); ++a) {
    const UOp *v = u->dimVar(a);
    if (v && (v->op() != Op::DefineVar || varMax(v) != u->shape()[a]))
      return "internal: axis " + std::to_string(a) + " is a variable but not sized by its upper bound";
  }
  switch (u->op()) {
  case Op::Weight: return u->hasDimVars() ? "weights have static shapes" : "";
  case Op::Input:
  case Op::Output: return checkBoundaryLayout(u);
  case Op::Reshape: return checkReshapeVars(u);
  case Op::Expand: return checkExpandVars(u);
  case Op::Permute: return "";
  default: break;
  }
  if (group::elementwise().contains(u->op()))
    if (std::string err = checkElementwiseVars(u); !err.empty())
      return err;
  return checkOperandVarsKept(u);
}

std::vector<const UOp *> broadcastVars(std::span<const UOp *const> src, const Shape &full) {
  std::vector<const UOp *> vars(full.size(), nullptr);
  for (const UOp *s : src)
    for (size_t a = 0; s->hasShape() && a < size_t(s->rank()) && size_t(s->rank()) <= full.size(); ++a)
      if (const UOp *v = s->dimVar(a); v && s->shape()[a] == full[full.size() - size_t(s->rank()) + a])
        vars[full.size() - size_t(s->rank()) + a] = v;
  return isEmpty(vars) ? std::vector<const UOp *>{} : vars;
}

std::string symbolicShape(std::span<const int64_t> shape, std::span<const UOp *const> vars) {
  std::string s = "[";
  for (size_t a = 0; a < shape.size(); ++a)
    s += (a ? ", " : "") + axisName(a < vars.size() ? vars[a] : nullptr, shape[a]);
  return s + "]";
}

std::string symbolicShapeStr(const UOp *u) { return symbolicShape(u->shape(), u->dimVars()); }

std::vector<const UOp *> shapeVariables(const UOp *root) {
  std::set<const UOp *> seen;
  for (const UOp *u : toposort(root))
    for (const UOp *v : u->dimVars())
      if (v)
        seen.insert(v);
  std::vector<const UOp *> vars(seen.begin(), seen.end());
  std::sort(vars.begin(), vars.end(), [](const UOp *a, const UOp *b) { return varName(a) < varName(b); });
  return vars;
}

const UOp *bindVariables(const UOp *root, const std::map<std::string, int64_t> &values) {
  Context &ctx = root->ctx();
  std::unordered_map<const UOp *, const UOp *> done;
  auto valueOf = [&](const UOp *v) {
    auto it = values.find(varName(v));
    if (it == values.end())
      internalError("bindVariables: no value for variable " + varName(v));
    return it->second;
  };
  for (const UOp *u : toposort(root)) {
    if (u->op() == Op::DefineVar) {
      done[u] = ctx.constInt(u->dtype(), valueOf(u));
      continue;
    }
    std::vector<const UOp *> src;
    for (const UOp *s : u->src())
      src.push_back(done.at(s));
    std::optional<Shape> shape;
    if (u->hasShape())
      shape = u->shapeVec();
    for (size_t a = 0; a < u->dimVars().size(); ++a)
      if (const UOp *v = u->dimVar(a))
        (*shape)[a] = valueOf(v);
    done[u] = ctx.make(u->op(), u->dtype(), src, u->arg(), shape, u->tag());
  }
  return done.at(root);
}

} // namespace tgc
