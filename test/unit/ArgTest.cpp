//===- ArgTest.cpp - Arg equality, order and canonical text -----*- C++ -*-===//
// Args compare structurally; floats by bit pattern; printing is the shortest text that reads back.
//===----------------------------------------------------------------------===//

#include "IR/Arg.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

using namespace tgc;

TEST_CASE("args compare by kind and value", "[arg]") {
  REQUIRE(Arg(int64_t(1)) == Arg(1));
  REQUIRE(Arg(1) != Arg(1.0));
  REQUIRE(Arg(true) != Arg(1));
  REQUIRE(Arg("x") == Arg(std::string("x")));
  REQUIRE(Arg(dt::F32) != Arg(dt::F16));
  REQUIRE(Arg(Op::Add) != Arg(Op::Mul));
  REQUIRE(Arg::tuple({1, 2}) == Arg::ints({1, 2}));
  REQUIRE(Arg::tuple({1, 2}) != Arg::tuple({2, 1}));
  REQUIRE(Arg() == Arg());
}

TEST_CASE("float args compare by bits", "[arg]") {
  REQUIRE(Arg(0.0) != Arg(-0.0));
  double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE(Arg(nan) == Arg(-nan));
  REQUIRE(Arg(nan).hash() == Arg(-nan).hash());
  REQUIRE(Arg(0.0).hash() != Arg(-0.0).hash());
}

TEST_CASE("args print canonically", "[arg]") {
  REQUIRE(Arg(3).str() == "3");
  REQUIRE(Arg(-3).str() == "-3");
  REQUIRE(Arg(1.0).str() == "1.0");
  REQUIRE(Arg(0.1).str() == "0.1");
  REQUIRE(Arg(-0.0).str() == "-0.0");
  REQUIRE(Arg(1e300).str() == "1e+300");
  REQUIRE(Arg(std::numeric_limits<double>::infinity()).str() == "inf");
  REQUIRE(Arg(-std::numeric_limits<double>::infinity()).str() == "-inf");
  REQUIRE(Arg(std::numeric_limits<double>::quiet_NaN()).str() == "nan");
  REQUIRE(Arg(true).str() == "true");
  REQUIRE(Arg("a\"b\n").str() == "\"a\\\"b\\n\"");
  REQUIRE(Arg(dt::F32.vec(4)).str() == "f32x4");
  REQUIRE(Arg(dt::F32.ptr(AddrSpace::Local)).str() == "ptr<f32, local>");
  REQUIRE(Arg(Op::Max).str() == "max");
  REQUIRE(Arg::tuple({Arg(Op::Add), Arg::ints({0, 2})}).str() == "[add, [0, 2]]");
}

TEST_CASE("formatFloat prints float precision", "[arg]") {
  REQUIRE(formatFloat(0.1f) == "0.1");
  REQUIRE(formatDouble(double(0.1f)) == "0.10000000149011612");
}

TEST_CASE("arg order is total and deterministic", "[arg]") {
  REQUIRE(Arg::compare(Arg(1), Arg(2)) < 0);
  REQUIRE(Arg::compare(Arg(2), Arg(1)) > 0);
  REQUIRE(Arg::compare(Arg::ints({1, 2}), Arg::ints({1, 2, 0})) < 0);
  REQUIRE(Arg::compare(Arg("a"), Arg("a")) == 0);
}
