//===- NodeMapTest.cpp - The flat map keyed by UOp pointers ----*- C++ -*-===//
// Insertion, lookup, growth past many rehashes, and that an existing key keeps its value.
//===----------------------------------------------------------------------===//

#include "IR/NodeMap.h"
#include "IR/UOp.h"

#include <catch2/catch.hpp>

using namespace tgc;

TEST_CASE("a node map finds what was inserted and nothing else", "[nodemap]") {
  Context ctx;
  std::vector<const UOp *> nodes;
  for (int i = 0; i < 5000; ++i)
    nodes.push_back(ctx.constInt(dt::I32, i));
  NodeMap<int> map; // starts at 16 slots: 5000 keys rehash it nine times
  for (int i = 0; i < 5000; i += 2)
    REQUIRE(map.insert(nodes[size_t(i)], i).second);
  REQUIRE(map.size() == 2500);
  for (int i = 0; i < 5000; ++i) {
    const int *v = map.find(nodes[size_t(i)]);
    if (i % 2 == 0) {
      REQUIRE(v);
      REQUIRE(*v == i);
    } else {
      REQUIRE(!v);
    }
  }
}

TEST_CASE("inserting an existing key keeps its value", "[nodemap]") {
  Context ctx;
  const UOp *a = ctx.constInt(dt::I32, 1);
  NodeMap<const UOp *> map;
  REQUIRE(map.insert(a, a).second);
  auto [v, fresh] = map.insert(a, nullptr);
  REQUIRE(!fresh);
  REQUIRE(*v == a);
  map[a] = nullptr;
  REQUIRE(map.contains(a));
  REQUIRE(*map.find(a) == nullptr);
  REQUIRE(map[ctx.constInt(dt::I32, 2)] == nullptr); // operator[] adds a default value
  REQUIRE(map.size() == 2);
}
