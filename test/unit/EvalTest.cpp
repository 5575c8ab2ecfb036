//===- EvalTest.cpp - Exact scalar semantics of ALU ops ---------*- C++ -*-===//
// Hand-derived values for wraparound, truncating division, IEEE rounding in each float width, casts, bitcasts.
//===----------------------------------------------------------------------===//

#include "IR/Eval.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace tgc;

namespace {

std::optional<Arg> ev(Op op, DType d, std::initializer_list<Arg> a) {
  std::vector<Arg> args(a);
  DType out = (op == Op::Cmplt || op == Op::Cmpne || op == Op::Cmpeq) ? dt::Bool : d;
  return evalAlu(op, out, d, args);
}

int64_t evi(Op op, DType d, int64_t a, int64_t b) { return ev(op, d, {Arg(a), Arg(b)})->getInt(); }
double evf(Op op, DType d, double a, double b) { return ev(op, d, {Arg(a), Arg(b)})->getFloat(); }

} // namespace

TEST_CASE("integer arithmetic wraps in its width", "[eval]") {
  REQUIRE(evi(Op::Add, dt::I8, 127, 1) == -128);
  REQUIRE(evi(Op::Add, dt::U8, 250, 10) == 4);
  REQUIRE(evi(Op::Mul, dt::I32, 65536, 65536) == 0);
  REQUIRE(evi(Op::Sub, dt::U32, 0, 1) == 4294967295);
  REQUIRE(evi(Op::Add, dt::I64, INT64_MAX, 1) == INT64_MIN);
  REQUIRE(ev(Op::Neg, dt::I32, {Arg(int64_t(INT32_MIN))})->getInt() == INT32_MIN);
}

TEST_CASE("integer division and remainder truncate (C)", "[eval]") {
  REQUIRE(evi(Op::Idiv, dt::I32, 7, 2) == 3);
  REQUIRE(evi(Op::Idiv, dt::I32, -7, 2) == -3);
  REQUIRE(evi(Op::Mod, dt::I32, -7, 2) == -1);
  REQUIRE(evi(Op::Mod, dt::I32, 7, -2) == 1);
  REQUIRE(evi(Op::Idiv, dt::I32, INT32_MIN, -1) == INT32_MIN);
  REQUIRE(evi(Op::Idiv, dt::U8, 255, 2) == 127);
  REQUIRE_FALSE(ev(Op::Idiv, dt::I32, {Arg(1), Arg(0)}));
  REQUIRE_FALSE(ev(Op::Mod, dt::I32, {Arg(1), Arg(0)}));
}

TEST_CASE("shifts and bit operations", "[eval]") {
  REQUIRE(evi(Op::Shl, dt::I8, 1, 7) == -128);
  REQUIRE(evi(Op::Shr, dt::I8, -128, 7) == -1); // arithmetic
  REQUIRE(evi(Op::Shr, dt::U8, 128, 7) == 1);  // logical
  REQUIRE_FALSE(ev(Op::Shl, dt::I32, {Arg(1), Arg(32)}));
  REQUIRE_FALSE(ev(Op::Shr, dt::I32, {Arg(1), Arg(-1)}));
  REQUIRE(evi(Op::Xor, dt::U8, 0xf0, 0xff) == 0x0f);
  REQUIRE(evi(Op::Max, dt::U32, 4294967295, 1) == 4294967295);
  REQUIRE(ev(Op::Cmplt, dt::U32, {Arg(int64_t(4294967295)), Arg(1)})->getBool() == false);
  REQUIRE(ev(Op::Cmplt, dt::I32, {Arg(-1), Arg(1)})->getBool() == true);
}

TEST_CASE("float results round once to the dtype", "[eval]") {
  REQUIRE(evf(Op::Add, dt::F32, double(0.1f), double(0.2f)) == double(0.1f + 0.2f));
  REQUIRE(evf(Op::Add, dt::F64, 0.1, 0.2) == 0.1 + 0.2);
  REQUIRE(evf(Op::Add, dt::F16, 2048.0, 1.0) == 2048.0);       // 2049 ties to even
  REQUIRE(evf(Op::Add, dt::F16, 2048.0, 3.0) == 2052.0);       // 2051 ties to even (up)
  REQUIRE(evf(Op::Mul, dt::F16, 256.0, 256.0) == std::numeric_limits<double>::infinity());
  REQUIRE(evf(Op::Add, dt::BF16, 256.0, 1.0) == 256.0);
  REQUIRE(evf(Op::Fdiv, dt::F32, 1.0, 0.0) == std::numeric_limits<double>::infinity());
  REQUIRE(std::isnan(evf(Op::Fdiv, dt::F32, 0.0, 0.0)));
  REQUIRE(evf(Op::Sub, dt::F32, 0.0, 0.0) == 0.0);
  REQUIRE(std::signbit(evf(Op::Add, dt::F32, -0.0, -0.0)));
}

TEST_CASE("mulacc rounds once (a fused multiply-add)", "[eval]") {
  // a = b = 1 + 2^-23: a*b = 1 + 2^-22 + 2^-46 rounds to 1 + 2^-22 in f32; plus c = -(1 + 2^-22) that is 0 when
  // rounded twice and 2^-46 when fused.
  double a = 1 + std::ldexp(1.0, -23);
  double c = -(1 + std::ldexp(1.0, -22));
  REQUIRE(ev(Op::Mulacc, dt::F32, {Arg(a), Arg(a), Arg(c)})->getFloat() == std::ldexp(1.0, -46));
  REQUIRE(evf(Op::Add, dt::F32, evf(Op::Mul, dt::F32, a, a), c) == 0.0);
  // f64: the same with 2^-52, fused 2^-104
  double a64 = 1 + std::ldexp(1.0, -52);
  double c64 = -(1 + std::ldexp(1.0, -51));
  REQUIRE(ev(Op::Mulacc, dt::F64, {Arg(a64), Arg(a64), Arg(c64)})->getFloat() == std::ldexp(1.0, -104));
  // integers wrap as a multiply and an add
  REQUIRE(ev(Op::Mulacc, dt::I8, {Arg(int64_t(16)), Arg(int64_t(8)), Arg(int64_t(1))})->getInt() == -127);
}

TEST_CASE("max propagates NaN and orders signed zeros", "[eval]") {
  double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(std::isnan(evf(Op::Max, dt::F32, nan, 1.0)));
  REQUIRE(std::isnan(evf(Op::Max, dt::F32, 1.0, nan)));
  REQUIRE_FALSE(std::signbit(evf(Op::Max, dt::F32, -0.0, 0.0)));
  REQUIRE_FALSE(std::signbit(evf(Op::Max, dt::F32, 0.0, -0.0)));
  REQUIRE(ev(Op::Cmplt, dt::F32, {Arg(nan), Arg(1.0)})->getBool() == false);
  REQUIRE(ev(Op::Cmpne, dt::F32, {Arg(nan), Arg(nan)})->getBool() == true);
}

TEST_CASE("casts convert values", "[eval]") {
  REQUIRE(evalCast(Arg(-2.7), dt::F32, dt::I32)->getInt() == -2);
  REQUIRE_FALSE(evalCast(Arg(3e9), dt::F32, dt::I32));
  REQUIRE_FALSE(evalCast(Arg(std::numeric_limits<double>::quiet_NaN()), dt::F32, dt::I32));
  REQUIRE(evalCast(Arg(300), dt::I32, dt::U8)->getInt() == 44);
  REQUIRE(evalCast(Arg(-1), dt::I32, dt::U32)->getInt() == 4294967295);
  REQUIRE(evalCast(Arg(16777217), dt::I32, dt::F32)->getFloat() == 16777216.0);
  REQUIRE(evalCast(Arg(int64_t(-1)), dt::U64, dt::F64)->getFloat() == 18446744073709551616.0);
  REQUIRE(evalCast(Arg(0.5), dt::F32, dt::Bool)->getBool());
  REQUIRE(evalCast(Arg(true), dt::Bool, dt::F32)->getFloat() == 1.0);
  REQUIRE(evalCast(Arg(0.1), dt::F64, dt::F16)->getFloat() == 0.0999755859375);
}

TEST_CASE("bitcasts keep bits", "[eval]") {
  REQUIRE(evalBitcast(Arg(1.0), dt::F32, dt::I32)->getInt() == 0x3f800000);
  REQUIRE(evalBitcast(Arg(int64_t(0xbf800000)), dt::U32, dt::F32)->getFloat() == -1.0);
  REQUIRE(evalBitcast(Arg(1.0), dt::F16, dt::U16)->getInt() == 0x3c00);
  REQUIRE(evalBitcast(Arg(1.0), dt::BF16, dt::I16)->getInt() == 0x3f80);
  REQUIRE_FALSE(evalBitcast(Arg(1.0), dt::F32, dt::I64));
}
