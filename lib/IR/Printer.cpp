//===- Printer.cpp - Canonical .uop text of a graph -------------*- C++ -*-===//
// `%N = op(%a, %b) arg {tag = t} : dtype[shape]`, one node per line, operands before users, the root last.
//===----------------------------------------------------------------------===//

#include "IR/Infer.h"
#include "IR/Module.h"
#include "IR/SymbolicDims.h"

#include <cstdint>
#include <unordered_map>

namespace tgc {
namespace {

/// A CONST's value in the precision of its dtype, so f32 constants print as short as they read.
std::string constArgStr(const UOp *u) {
  const Arg &a = u->arg();
  DType e = u->dtype().element();
  if (a.isInt() && e.scalar() == Scalar::U64)
    return std::to_string(uint64_t(a.getInt()));
  if (a.isFloat() && (e.scalar() == Scalar::F32 || e.scalar() == Scalar::F16 || e.scalar() == Scalar::BF16))
    return formatFloat(float(a.getFloat()));
  return a.str();
}

std::string typeStr(const UOp *u) {
  std::string s = u->dtype().str();
  if (u->hasShape())
    s += u->hasDimVars() ? symbolicShapeStr(u) : shapeStr(u->shape());
  return s;
}

void printNode(std::string &out, const UOp *u, const std::unordered_map<const UOp *, size_t> &names, bool ranges) {
  out += "%" + std::to_string(names.at(u)) + " = ";
  out += opName(u->op());
  if (u->numSrc() > 0) {
    out += "(";
    for (size_t i = 0; i < u->numSrc(); ++i) {
      if (i)
        out += ", ";
      out += "%" + std::to_string(names.at(u->src(i)));
    }
    out += ")";
  }
  if (!u->arg().isNone())
    out += " " + (u->op() == Op::Const ? constArgStr(u) : u->arg().str());
  if (!u->tag().isNone())
    out += " {tag = " + u->tag().str() + "}";
  if (!u->dtype().isVoid() || u->hasShape())
    out += " : " + typeStr(u);
  if (ranges && u->hasRange() && !u->isConst())
    out += "  // [" + std::to_string(u->vmin()) + ", " + std::to_string(u->vmax()) + "]";
  out += "\n";
}

} // namespace

std::string printGraph(const UOp *root, bool ranges) {
  std::string out;
  std::unordered_map<const UOp *, size_t> names;
  for (const UOp *u : toposort(root)) {
    for (const UOp *v : u->dimVars()) // a variable's definition comes before the first shape naming it
      if (v && names.emplace(v, names.size()).second)
        printNode(out, v, names, ranges);
    if (names.emplace(u, names.size()).second)
      printNode(out, u, names, ranges);
  }
  return out;
}

std::string printModule(const Module &m, bool ranges) {
  std::string out;
  for (const std::string &w : m.weightFiles)
    out += "weights " + quoteString(w) + "\n";
  if (m.root)
    out += printGraph(m.root, ranges);
  return out;
}

} // namespace tgc
