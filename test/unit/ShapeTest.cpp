//===- ShapeTest.cpp - Shape inference of tensor-level ops ------*- C++ -*-===//
// Every movement op's shape rule, scalar broadcasting, and the error for each kind of mismatch.
//===----------------------------------------------------------------------===//

#include "IR/Infer.h"

#include <catch2/catch.hpp>

using namespace tgc;

namespace {

struct Fixture {
  Context ctx;
  const UOp *x = ctx.make(Op::Input, dt::F32, {}, Arg("x"), Shape{2, 3, 4});

  InferredShape infer(Op op, Arg arg, std::optional<Shape> declared = std::nullopt) {
    const UOp *src[] = {x};
    return inferShape(op, dt::F32, src, arg, declared);
  }
};

} // namespace

TEST_CASE_METHOD(Fixture, "movement ops infer their shapes", "[shape]") {
  REQUIRE(infer(Op::Permute, Arg::ints({2, 0, 1})).shape == Shape{4, 2, 3});
  REQUIRE(infer(Op::Pad, Arg::tuple({Arg::ints({1, 1}), Arg::ints({0, 0}), Arg::ints({2, 0})})).shape ==
          Shape{4, 3, 6});
  REQUIRE(infer(Op::Shrink, Arg::tuple({Arg::ints({0, 1}), Arg::ints({1, 3}), Arg::ints({0, 4})})).shape ==
          Shape{1, 2, 4});
  REQUIRE(infer(Op::Flip, Arg::ints({0, 2})).shape == Shape{2, 3, 4});
  REQUIRE(infer(Op::Reshape, Arg(), Shape{6, 4}).shape == Shape{6, 4});
  REQUIRE(infer(Op::ReduceAxis, Arg::tuple({Arg(Op::Add), Arg::ints({1})})).shape == Shape{2, 1, 4});
}

TEST_CASE_METHOD(Fixture, "expand broadcasts axes of size 1", "[shape]") {
  const UOp *r = ctx.make(Op::Reshape, dt::F32, {x}, Arg(), Shape{2, 1, 12});
  const UOp *src[] = {r};
  REQUIRE(inferShape(Op::Expand, dt::F32, src, Arg(), Shape{2, 5, 12}).shape == Shape{2, 5, 12});
  REQUIRE_THAT(inferShape(Op::Expand, dt::F32, src, Arg(), Shape{3, 5, 12}).error,
               Catch::Contains("axis 0 is neither equal nor 1"));
  REQUIRE_THAT(inferShape(Op::Expand, dt::F32, src, Arg(), Shape{2, 5}).error, Catch::Contains("ranks differ"));
}

TEST_CASE_METHOD(Fixture, "bad movement args are errors", "[shape]") {
  REQUIRE_THAT(infer(Op::Reshape, Arg(), Shape{5, 5}).error, Catch::Contains("element counts differ"));
  REQUIRE_THAT(infer(Op::Reshape, Arg()).error, Catch::Contains("needs its result shape"));
  REQUIRE_THAT(infer(Op::Permute, Arg::ints({0, 0, 1})).error, Catch::Contains("permutation"));
  REQUIRE_THAT(infer(Op::Permute, Arg::ints({0, 1})).error, Catch::Contains("permutation"));
  REQUIRE_THAT(infer(Op::Pad, Arg::tuple({Arg::ints({-1, 0}), Arg::ints({0, 0}), Arg::ints({0, 0})})).error,
               Catch::Contains("non-negative"));
  REQUIRE_THAT(infer(Op::Shrink, Arg::tuple({Arg::ints({0, 3}), Arg::ints({0, 3}), Arg::ints({0, 4})})).error,
               Catch::Contains("do not fit axis 0"));
  REQUIRE_THAT(infer(Op::Flip, Arg::ints({3})).error, Catch::Contains("distinct axes"));
  REQUIRE_THAT(infer(Op::ReduceAxis, Arg::ints({1})).error, Catch::Contains("[add|mul|max, [axes]]"));
}

TEST_CASE_METHOD(Fixture, "declared shapes are checked", "[shape]") {
  REQUIRE_THAT(infer(Op::Permute, Arg::ints({2, 0, 1}), Shape{2, 3, 4}).error,
               Catch::Contains("the type gives shape [2, 3, 4] but 'permute' produces [4, 2, 3]"));
  REQUIRE_THAT(infer(Op::Reshape, Arg(), Shape{int64_t(1) << 40, int64_t(1) << 40}).error,
               Catch::Contains("too many elements"));
}

TEST_CASE_METHOD(Fixture, "elementwise ops broadcast rank-0 operands only", "[shape]") {
  const UOp *s = ctx.constant(dt::F32, 1.0, Shape{});
  const UOp *ok[] = {x, s};
  REQUIRE(inferShape(Op::Add, dt::F32, ok, Arg(), std::nullopt).shape == Shape{2, 3, 4});
  const UOp *y = ctx.make(Op::Input, dt::F32, {}, Arg("y"), Shape{2, 3, 5});
  const UOp *bad[] = {x, y};
  REQUIRE_THAT(inferShape(Op::Add, dt::F32, bad, Arg(), std::nullopt).error,
               Catch::Contains("different shapes [2, 3, 4] and [2, 3, 5]"));
  const UOp *k = ctx.constant(dt::F32, 1.0);
  const UOp *mixed[] = {x, k};
  REQUIRE_THAT(inferShape(Op::Add, dt::F32, mixed, Arg(), std::nullopt).error, Catch::Contains("mixes"));
}

TEST_CASE("inputs need a declared shape; kernel ops have none", "[shape]") {
  Context ctx;
  REQUIRE_THAT(inferShape(Op::Input, dt::F32, {}, Arg("x"), std::nullopt).error, Catch::Contains("needs a shape"));
  REQUIRE_THAT(inferShape(Op::DefineGlobal, dt::F32.ptr(), {}, Arg(0), Shape{4}).error,
               Catch::Contains("has no tensor shape here"));
  REQUIRE_FALSE(inferShape(Op::DefineGlobal, dt::F32.ptr(), {}, Arg(0), std::nullopt).shape);
}
