//===- Common.cpp - Shared pieces of the reference interpreter --*- C++ -*-===//
// Element encoding in memory (via Eval's bit patterns), conversions to and from runtime arrays, index helpers.
//===----------------------------------------------------------------------===//

#include "Interp/Internal.h"

#include "IR/Eval.h"
#include "IR/UOp.h"

#include <cmath>
#include <cstring>

namespace tgc::interp {

void fail(std::string message) { throw InterpError{std::move(message)}; }

std::string where(const UOp *u) {
  std::string s = "'" + std::string(opName(u->op())) + "'";
  if (const Loc *l = u->ctx().loc(u); l && l->valid())
    s += " at " + l->file + ":" + std::to_string(l->line);
  return s;
}

int64_t numelOf(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::vector<int64_t> stridesOf(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    st[i - 1] = st[i] * s[i];
  return st;
}

void unravel(int64_t flat, const Shape &shape, std::vector<int64_t> &idx) {
  idx.resize(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    int64_t d = shape[i];
    idx[i] = d ? flat % d : 0;
    flat = d ? flat / d : 0;
  }
}

int64_t elemBytes(DType d) { return d.isBool() ? 1 : d.itemSize(); }

Arg readElem(const uint8_t *p, DType d) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, size_t(elemBytes(d)));
  return valueFromBits(bits, d);
}

void writeElem(uint8_t *p, DType d, const Arg &v) {
  uint64_t bits = valueBits(v, d);
  std::memcpy(p, &bits, size_t(elemBytes(d)));
}

Tensor fromArray(const rt::Array &a, DType d) {
  Tensor t{d, a.shape, {}};
  int64_t n = numelOf(a.shape);
  t.data.reserve(size_t(n));
  for (int64_t i = 0; i < n; ++i)
    t.data.push_back(readElem(a.data.data() + i * elemBytes(d), d));
  return t;
}

rt::Array toArray(const Tensor &t) {
  rt::Array a;
  a.type = *elemTypeOf(t.dtype);
  a.shape = t.shape;
  a.data.resize(t.data.size() * size_t(elemBytes(t.dtype)));
  for (size_t i = 0; i < t.data.size(); ++i)
    writeElem(a.data.data() + i * size_t(elemBytes(t.dtype)), t.dtype, t.data[i]);
  return a;
}

double toDouble(const Arg &a) {
  if (a.isBool())
    return a.getBool();
  if (a.isInt())
    return double(a.getInt());
  return a.getFloat();
}

Arg fromDouble(double v, DType d) {
  if (d.isBool())
    return Arg(v != 0);
  if (d.isInt()) {
    if (std::isnan(v) || std::fabs(v) >= 9.2e18)
      fail("a value (" + std::to_string(v) + ") does not fit " + d.str());
    return Arg(wrapInt(int64_t(std::trunc(v)), d));
  }
  return Arg(roundToDType(v, d));
}

Arg fromInt(int64_t v, DType d) {
  if (d.isBool())
    return Arg(v != 0);
  if (d.isInt())
    return Arg(wrapInt(v, d));
  return Arg(roundToDType(double(v), d));
}

std::optional<rt::ElemType> elemTypeOf(DType d) {
  int code = d.isPtr() || d.isVector() ? -1 : scalarRuntimeCode(d.scalar());
  if (code < 0)
    return std::nullopt;
  return rt::ElemType(code);
}

DType dtypeOf(rt::ElemType t) { return DType(*scalarOfRuntimeCode(int(t))); }

} // namespace tgc::interp
