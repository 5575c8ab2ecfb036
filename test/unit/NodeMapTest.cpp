//===- NodeMapTest.cpp - The flat map keyed by UOp pointers ----*- C++ -*-===//
// Insertion, lookup, growth past many rehashes, that an existing key keeps its value; the id-indexed map and its pool.
//===----------------------------------------------------------------------===//

#include "IR/NodeIdMap.h"
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

TEST_CASE("a node id map forgets everything on reset and grows for nodes made after it", "[nodemap]") {
  Context ctx;
  const UOp *a = ctx.constInt(dt::I32, 1);
  const UOp *b = ctx.constInt(dt::I32, 2);
  NodeIdMap<int> map;
  map.reset(ctx.numNodes());
  REQUIRE(map.insert(a, 10).second);
  REQUIRE(!map.insert(a, 11).second);
  REQUIRE(*map.find(a) == 10);
  REQUIRE(!map.find(b));
  const UOp *later = ctx.constInt(dt::I32, 3); // an id past the table's size
  REQUIRE(!map.find(later));
  REQUIRE(map.insert(later, 30).second);
  REQUIRE(*map.find(later) == 30);
  REQUIRE(*map.find(a) == 10); // kept through the growth
  map.reset(ctx.numNodes());
  REQUIRE(!map.find(a));
  REQUIRE(!map.find(later));
  REQUIRE(map.insert(a, 12).second);
  REQUIRE(*map.find(a) == 12);
}

TEST_CASE("scratch node id maps held at once are distinct and come back empty", "[nodemap]") {
  Context ctx;
  const UOp *a = ctx.constInt(dt::I32, 1);
  {
    ScratchNodeIdMap<int> outer(ctx);
    outer->insert(a, 1);
    {
      ScratchNodeIdMap<int> inner(ctx); // a nested user gets another table
      REQUIRE(!inner->find(a));
      inner->insert(a, 2);
    }
    REQUIRE(*outer->find(a) == 1);
  }
  ScratchNodeIdMap<int> again(ctx); // the pooled table, reset
  REQUIRE(!again->find(a));
}
