//===- ProgramQueries.cpp - Kernels and what calls read and write -*- C++ -*-===//
// A kernel is a sink or linear of effects. A store through index(define_global k, ...) writes operand k+1 of the call;
// a load reads it.
//===----------------------------------------------------------------------===//

#include "Passes/ProgramQueries.h"

#include "IR/NodeMap.h"
#include "IR/SymbolicDims.h"

#include <map>
#include <set>

#include <algorithm>

namespace tgc {

const UOp *slotBuffer(const UOp *call, const UOp *ptr) {
  if (ptr->op() != Op::Index || ptr->src(0)->op() != Op::DefineGlobal)
    return nullptr;
  int64_t slot = ptr->src(0)->arg().getInt();
  if (slot < 0 || size_t(slot) + 1 >= call->numSrc())
    return nullptr;
  return call->src(size_t(slot) + 1);
}

static void addOnce(std::vector<const UOp *> &v, const UOp *b) {
  if (b && std::find(v.begin(), v.end(), b) == v.end())
    v.push_back(b);
}

std::vector<const UOp *> kernelVariables(const UOp *kernel) {
  std::vector<const UOp *> vars;
  for (const UOp *u : toposort(kernel))
    if (u->op() == Op::DefineVar)
      vars.push_back(u);
  std::sort(vars.begin(), vars.end(), [](const UOp *a, const UOp *b) { return varName(a) < varName(b); });
  return vars;
}

Arg bufferShapeArg(const UOp *tensor) {
  Arg::Tuple dims;
  for (size_t a = 0; a < size_t(tensor->rank()); ++a) {
    const UOp *v = tensor->dimVar(a);
    dims.push_back(v ? Arg::tuple({Arg(varName(v)), Arg(tensor->shape()[a])}) : Arg(tensor->shape()[a]));
  }
  return Arg(std::move(dims));
}

Shape bufferShape(const Arg &shape, std::vector<std::string> *varNames) {
  Shape dims;
  for (const Arg &d : shape.getTuple()) {
    bool isVar = d.isTuple();
    dims.push_back(isVar ? d.getTuple()[1].getInt() : d.getInt());
    if (varNames)
      varNames->push_back(isVar ? d.getTuple()[0].getString() : "");
  }
  return dims;
}

int64_t rangeId(const UOp *range) { return range->arg().getTuple()[0].getInt(); }

const std::string &rangeKind(const UOp *range) { return range->arg().getTuple()[1].getString(); }

bool isKernelRoot(const UOp *u) {
  if (u->op() != Op::Sink && u->op() != Op::Linear)
    return false;
  return std::none_of(u->src().begin(), u->src().end(),
                      [](const UOp *s) { return s->op() == Op::Call || s->op() == Op::Output; });
}

const UOp *mapKernels(const UOp *root, const std::function<const UOp *(const UOp *kernel)> &fn) {
  auto mapped = [&](const UOp *k) {
    const UOp *r = fn(k);
    return r ? r : k;
  };
  if (isKernelRoot(root))
    return mapped(root);
  NodeMap<const UOp *> done;
  std::vector<std::pair<const UOp *, size_t>> stack = {{root, 0}}; // nodes outside kernels
  std::vector<const UOp *> src;
  while (!stack.empty()) {
    auto &[u, next] = stack.back();
    if (next < u->numSrc()) {
      const UOp *s = u->src(next++);
      if (done.find(s))
        continue;
      if (isKernelRoot(s))
        done.insert(s, mapped(s));
      else
        stack.emplace_back(s, 0);
      continue;
    }
    src.clear();
    for (const UOp *s : u->src())
      src.push_back(*done.find(s));
    done.insert(u, u->ctx().withSrc(u, src));
    stack.pop_back();
  }
  return *done.find(root);
}

CallAccess callAccess(const UOp *call) {
  CallAccess a;
  for (const UOp *n : toposort(call->src(0))) {
    if (n->op() == Op::Store)
      addOnce(a.writes, slotBuffer(call, n->src(0)));
    if (n->op() == Op::Load)
      addOnce(a.reads, slotBuffer(call, n->src(0)));
  }
  return a;
}

namespace {

const std::string &bufferKind(const UOp *b) { return b->arg().getTuple()[2].getString(); }

} // namespace

bool isTempBuffer(const UOp *b) { return b->op() == Op::Buffer && bufferKind(b) == "temp"; }

int64_t bufferElementBytes(const UOp *b) {
  DType e = b->dtype().pointee();
  return e.isBool() ? 1 : e.itemSize();
}

std::vector<bool> weightOnlyCalls(const UOp *linear) {
  std::vector<CallAccess> access;
  for (const UOp *call : linear->src())
    access.push_back(callAccess(call));
  std::set<const UOp *> shared; // buffers that a call of another kind also writes: none of their writers runs once
  std::vector<bool> once(linear->numSrc(), false);
  while (true) {
    std::set<const UOp *> constant; // buffers whose contents depend on the weights alone
    for (size_t i = 0; i < access.size(); ++i) {
      const CallAccess &a = access[i];
      bool ok = !a.writes.empty() && kernelVariables(linear->src(i)->src(0)).empty(); // not if sized by a variable
      for (const UOp *b : a.reads)
        ok = ok && (bufferKind(b) == "weight" || constant.count(b));
      for (const UOp *b : a.writes)
        ok = ok && bufferKind(b) == "temp" && !shared.count(b);
      once[i] = ok;
      if (ok)
        constant.insert(a.writes.begin(), a.writes.end());
    }
    size_t before = shared.size();
    for (size_t i = 0; i < access.size(); ++i)
      for (const UOp *b : access[i].writes)
        if (!once[i] && constant.count(b))
          shared.insert(b);
    if (shared.size() == before)
      return once;
  }
}

} // namespace tgc
