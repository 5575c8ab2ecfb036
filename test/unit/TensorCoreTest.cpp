//===- TensorCoreTest.cpp - The mma fragment layout against the PTX ISA ---*- C++ -*-===//
// The table in IR/TensorCore.cpp, checked element by element against the PTX ISA's figures for mma.m16n8k16.
//===----------------------------------------------------------------------===//

#include "IR/TensorCore.h"

#include <catch2/catch.hpp>
#include <set>
#include <utility>

using namespace tgc;

namespace {

using Coord = std::pair<int, int>;

Coord at(std::pair<FragCoord, FragCoord> c, int lane) { return {c.first.at(lane), c.second.at(lane)}; }

} // namespace

TEST_CASE("m16n8k16 fragments are the PTX ISA's", "[tensorcore]") {
  const TensorCore &tc = defaultTensorCore();
  REQUIRE(findTensorCore("m16n8k16") != nullptr);
  REQUIRE(findTensorCore("m16n8k8") == nullptr);
  REQUIRE(tc.m == 16);
  REQUIRE(tc.n == 8);
  REQUIRE(tc.k == 16);
  // Written out from the PTX ISA ("Matrix Fragments for mma.m16n8k16 with floating point type") for lane 5:
  // groupID = 1, threadID_in_group = 1.
  const Coord a5[8] = {{1, 2}, {1, 3}, {9, 2}, {9, 3}, {1, 10}, {1, 11}, {9, 10}, {9, 11}};
  const Coord b5[4] = {{2, 1}, {3, 1}, {10, 1}, {11, 1}};
  const Coord c5[4] = {{1, 2}, {1, 3}, {9, 2}, {9, 3}};
  for (int j = 0; j < 8; ++j)
    CHECK(at(tc.a(j), 5) == a5[j]);
  for (int j = 0; j < 4; ++j) {
    CHECK(at(tc.b(j), 5) == b5[j]);
    CHECK(at(tc.c(j), 5) == c5[j]);
  }
  // lane 30: groupID 7, threadID_in_group 2
  CHECK(at(tc.a(7), 30) == Coord{15, 13});
  CHECK(at(tc.b(3), 30) == Coord{13, 7});
  CHECK(at(tc.c(2), 30) == Coord{15, 4});
}

TEST_CASE("every matrix element is in exactly one lane's fragment", "[tensorcore]") {
  const TensorCore &tc = defaultTensorCore();
  std::set<Coord> a, b, c;
  for (int l = 0; l < tc.warp; ++l) {
    for (int j = 0; j < tc.aElems; ++j)
      a.insert(at(tc.a(j), l));
    for (int j = 0; j < tc.bElems; ++j)
      b.insert(at(tc.b(j), l));
    for (int j = 0; j < tc.cElems; ++j)
      c.insert(at(tc.c(j), l));
  }
  REQUIRE(a.size() == size_t(tc.m * tc.k));
  REQUIRE(b.size() == size_t(tc.k * tc.n));
  REQUIRE(c.size() == size_t(tc.m * tc.n));
  REQUIRE(a.rbegin()->first == tc.m - 1);
  REQUIRE(b.rbegin()->first == tc.k - 1);
  REQUIRE(c.rbegin()->second <= tc.n - 1);
}
