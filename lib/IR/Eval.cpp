//===- Eval.cpp - Exact scalar semantics of every ALU op --------*- C++ -*-===//
// Integer ops run on 64-bit patterns and wrap; float ops run in double and round once to the dtype.
//===----------------------------------------------------------------------===//

#include "IR/Eval.h"

#include "IR/UOp.h"
#include "Runtime/Half.h"

#include <bit>
#include <cmath>
#include <limits>

namespace tgc {
namespace {

using u64 = uint64_t;
using i64 = int64_t;

/// Zero-extended pattern of an int value of dtype d (so unsigned compares work on u64).
u64 upattern(i64 v, DType d) {
  int b = d.bits();
  return b >= 64 ? u64(v) : u64(v) & ((u64(1) << b) - 1);
}

Arg intResult(u64 v, DType d) { return Arg(wrapInt(i64(v), d)); }

std::optional<Arg> evalBool(Op op, std::span<const Arg> a) {
  auto b = [&](size_t i) { return a[i].getBool(); };
  switch (op) {
  case Op::And: return Arg(b(0) && b(1));
  case Op::Or:
  case Op::Max: return Arg(b(0) || b(1));
  case Op::Xor:
  case Op::Cmpne: return Arg(b(0) != b(1));
  case Op::Cmpeq: return Arg(b(0) == b(1));
  case Op::Cmplt: return Arg(!b(0) && b(1));
  default: return std::nullopt;
  }
}

std::optional<Arg> evalIntBinary(Op op, DType d, i64 x, i64 y) {
  bool sgn = d.isSigned();
  u64 ux = upattern(x, d);
  u64 uy = upattern(y, d);
  int bits = d.bits();
  switch (op) {
  case Op::Add: return intResult(u64(x) + u64(y), d);
  case Op::Sub: return intResult(u64(x) - u64(y), d);
  case Op::Mul: return intResult(u64(x) * u64(y), d);
  case Op::Idiv:
    if (y == 0)
      return std::nullopt;
    if (!sgn)
      return intResult(ux / uy, d);
    return intResult(u64(__int128(x) / __int128(y)), d); // INT_MIN / -1 wraps
  case Op::Mod:
    if (y == 0)
      return std::nullopt;
    if (!sgn)
      return intResult(ux % uy, d);
    return intResult(u64(__int128(x) % __int128(y)), d);
  case Op::Floordiv:
  case Op::Floormod: {
    if (y == 0)
      return std::nullopt;
    if (!sgn)
      return intResult(op == Op::Floordiv ? ux / uy : ux % uy, d);
    __int128 q = __int128(x) / __int128(y);
    __int128 r = __int128(x) % __int128(y);
    if (r != 0 && (r < 0) != (y < 0)) {
      q -= 1;
      r += y;
    }
    return intResult(u64(op == Op::Floordiv ? q : r), d); // INT_MIN floordiv -1 wraps
  }
  case Op::Max: return Arg(sgn ? std::max(x, y) : i64(std::max(ux, uy) == ux ? x : y));
  case Op::Cmplt: return Arg(sgn ? x < y : ux < uy);
  case Op::Cmpne: return Arg(x != y);
  case Op::Cmpeq: return Arg(x == y);
  case Op::And: return intResult(u64(x) & u64(y), d);
  case Op::Or: return intResult(u64(x) | u64(y), d);
  case Op::Xor: return intResult(u64(x) ^ u64(y), d);
  case Op::Shl:
    if (y < 0 || y >= bits)
      return std::nullopt;
    return intResult(ux << y, d);
  case Op::Shr:
    if (y < 0 || y >= bits)
      return std::nullopt;
    return intResult(sgn ? u64(x >> y) : ux >> y, d);
  default: return std::nullopt;
  }
}

/// IEEE maximum with NaN propagation; +0.0 is larger than -0.0 (numpy.maximum, llvm.maximum).
double fmaximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// a * b + c rounded once to d: f64 by fma, f32 by fmaf; f16 and bf16 by fmaf, then rounded to d (as renderers
/// compute them: half types have no fma of their own on CPUs).
double fusedMulAdd(double a, double b, double c, DType d) {
  if (d.scalar() == Scalar::F64)
    return std::fma(a, b, c);
  return std::fmaf(float(a), float(b), float(c));
}

std::optional<Arg> evalFloat(Op op, DType d, std::span<const Arg> a) {
  auto f = [&](size_t i) { return a[i].getFloat(); };
  double r;
  switch (op) {
  case Op::Exp2: r = std::exp2(f(0)); break;
  case Op::Log2: r = std::log2(f(0)); break;
  case Op::Sin: r = std::sin(f(0)); break;
  case Op::Sqrt: r = std::sqrt(f(0)); break;
  case Op::Recip: r = 1.0 / f(0); break;
  case Op::Neg: r = -f(0); break;
  case Op::Trunc: r = std::trunc(f(0)); break;
  case Op::Add: r = f(0) + f(1); break;
  case Op::Sub: r = f(0) - f(1); break;
  case Op::Mul: r = f(0) * f(1); break;
  case Op::Fdiv: r = f(0) / f(1); break;
  case Op::Max: r = fmaximum(f(0), f(1)); break;
  case Op::Pow: r = std::pow(f(0), f(1)); break;
  case Op::Mulacc: r = fusedMulAdd(f(0), f(1), f(2), d); break;
  case Op::Cmplt: return Arg(f(0) < f(1));
  case Op::Cmpne: return Arg(f(0) != f(1));
  case Op::Cmpeq: return Arg(f(0) == f(1));
  default: return std::nullopt;
  }
  return Arg(roundToDType(r, d));
}

std::optional<Arg> evalInt(Op op, DType d, std::span<const Arg> a) {
  if (a.size() == 1) {
    if (op == Op::Neg)
      return intResult(u64(0) - u64(a[0].getInt()), d);
    return std::nullopt;
  }
  if (op == Op::Mulacc) {
    u64 r = u64(a[0].getInt()) * u64(a[1].getInt()) + u64(a[2].getInt());
    return intResult(r, d);
  }
  return evalIntBinary(op, d, a[0].getInt(), a[1].getInt());
}

bool argFits(const Arg &a, DType d) {
  if (d.isBool())
    return a.isBool();
  if (d.isInt())
    return a.isInt();
  if (d.isFloat())
    return a.isFloat();
  return false;
}

} // namespace

std::optional<Arg> evalAlu(Op op, DType out, DType in, std::span<const Arg> args) {
  if (out.isVector() || in.isVector() || out.isPtr() || in.isPtr())
    return std::nullopt;
  if (op == Op::Where) {
    if (args.size() != 3 || !args[0].isBool() || !argFits(args[1], out) || !argFits(args[2], out))
      return std::nullopt;
    return args[0].getBool() ? args[1] : args[2];
  }
  for (const Arg &a : args)
    if (!argFits(a, in))
      return std::nullopt;
  if (in.isBool())
    return evalBool(op, args);
  if (in.isInt())
    return evalInt(op, in, args);
  if (in.isFloat())
    return evalFloat(op, in, args);
  return std::nullopt;
}

std::optional<Arg> evalCast(const Arg &v, DType from, DType to) {
  if (!argFits(v, from) || to.isVector() || to.isPtr() || to.isVoid())
    return std::nullopt;
  if (to.isBool()) {
    if (v.isFloat())
      return Arg(v.getFloat() != 0);
    return Arg(v.isBool() ? v.getBool() : v.getInt() != 0);
  }
  if (v.isBool())
    return to.isFloat() ? Arg(double(v.getBool())) : Arg(i64(v.getBool()));
  if (v.isInt()) {
    if (to.isInt())
      return Arg(wrapInt(v.getInt(), to));
    // int -> float: convert from the exact integer value (u64 keeps its pattern)
    long double exact = from.scalar() == Scalar::U64 ? (long double)u64(v.getInt()) : (long double)v.getInt();
    if (to.scalar() == Scalar::F32)
      return Arg(double(float(exact)));
    return Arg(roundToDType(double(exact), to));
  }
  double f = v.getFloat();
  if (to.isFloat())
    return Arg(roundToDType(f, to));
  // float -> int: defined only when the truncated value fits the target
  if (std::isnan(f))
    return std::nullopt;
  double t = std::trunc(f);
  if (to.scalar() == Scalar::U64) {
    if (t < 0 || t >= 18446744073709551616.0)
      return std::nullopt;
    return Arg(i64(u64(t)));
  }
  if (t < double(dtypeMin(to)) || t > double(dtypeMax(to)) || t >= 9223372036854775808.0)
    return std::nullopt;
  return Arg(i64(t));
}

uint64_t valueBits(const Arg &v, DType d) {
  switch (d.scalar()) {
  case Scalar::Bool: return v.getBool();
  case Scalar::F16: return rt::floatToHalf(float(v.getFloat()));
  case Scalar::BF16: return rt::floatToBF16(float(v.getFloat()));
  case Scalar::F32: return std::bit_cast<uint32_t>(float(v.getFloat()));
  case Scalar::F64: return std::bit_cast<uint64_t>(v.getFloat());
  default: return upattern(v.getInt(), d);
  }
}

Arg valueFromBits(uint64_t bits, DType d) {
  switch (d.scalar()) {
  case Scalar::Bool: return Arg(bits != 0);
  case Scalar::F16: return Arg(double(rt::halfToFloat(uint16_t(bits))));
  case Scalar::BF16: return Arg(double(rt::bf16ToFloat(uint16_t(bits))));
  case Scalar::F32: return Arg(double(std::bit_cast<float>(uint32_t(bits))));
  case Scalar::F64: return Arg(std::bit_cast<double>(bits));
  default: return Arg(wrapInt(i64(bits), d));
  }
}

std::optional<Arg> evalBitcast(const Arg &v, DType from, DType to) {
  if (!argFits(v, from) || from.isVector() || to.isVector() || from.bits() != to.bits() || from.isBool() ||
      to.isBool() || to.isPtr() || from.isPtr())
    return std::nullopt;
  return valueFromBits(valueBits(v, from), to);
}

Arg reduceIdentity(Op op, DType d) {
  DType e = d.element();
  if (op == Op::Add)
    return e.isFloat() ? Arg(-0.0) : e.isBool() ? Arg(false) : Arg(int64_t(0));
  if (op == Op::Mul)
    return e.isFloat() ? Arg(1.0) : e.isBool() ? Arg(true) : Arg(int64_t(1));
  if (e.isFloat())
    return Arg(-std::numeric_limits<double>::infinity());
  return e.isBool() ? Arg(false) : Arg(dtypeMin(e));
}

Arg emptyReduceValue(Op op, DType d) {
  if (op == Op::Add && d.element().isFloat())
    return Arg(0.0);
  return reduceIdentity(op, d);
}

bool accumulatesInF32(Op op, DType d) {
  Scalar s = d.element().scalar();
  return (op == Op::Add || op == Op::Mul) && (s == Scalar::F16 || s == Scalar::BF16);
}

} // namespace tgc
