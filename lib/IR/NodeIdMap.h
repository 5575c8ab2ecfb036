//===- NodeIdMap.h - A map from one context's nodes, indexed by node id -*- C++ -*-===//
// A lookup is one array access, no hashing; reset() forgets every entry in O(1) by starting a new epoch.
//===----------------------------------------------------------------------===//
//
// Node ids count up from 0 in their Context, so a table indexed by id is dense. The rewrite engine keeps one per
// running rewrite (reset per call) and the context keeps one per memo. Keys must all come from one context.

#pragma once

#include "IR/UOp.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace tgc {

template <class V> class NodeIdMap {
public:
  /// Forgets every entry; `numNodes` (the context's node count) sizes the table once for the common case.
  void reset(size_t numNodes) {
    if (++epoch_ == 0) { // wrapped: an old stamp could equal a new epoch
      for (Slot &s : slots_)
        s.stamp = 0;
      epoch_ = 1;
    }
    if (slots_.size() < numNodes)
      slots_.resize(numNodes);
  }

  /// The value of `key`, or null when it is absent. The pointer is valid until the next insertion.
  V *find(const UOp *key) {
    uint32_t id = key->id();
    return id < slots_.size() && slots_[id].stamp == epoch_ ? &slots_[id].value : nullptr;
  }
  const V *find(const UOp *key) const { return const_cast<NodeIdMap *>(this)->find(key); }
  bool contains(const UOp *key) const { return find(key) != nullptr; }

  /// Adds (key, value) when key is absent. Returns the entry's value and whether it was added.
  std::pair<V *, bool> insert(const UOp *key, V value) {
    uint32_t id = key->id();
    if (id >= slots_.size())
      slots_.resize(std::max<size_t>(size_t(id) + 1, 2 * slots_.size()));
    Slot &s = slots_[id];
    if (s.stamp == epoch_)
      return {&s.value, false};
    s.stamp = epoch_;
    s.value = std::move(value);
    return {&s.value, true};
  }

private:
  struct Slot {
    uint32_t stamp = 0; // the entry is present when its stamp is the current epoch
    V value{};
  };

  std::vector<Slot> slots_; // by node id: a lookup touches one cache line
  uint32_t epoch_ = 1;
};

/// An empty NodeIdMap for the lifetime of this object, taken from a pool of this thread's: the tables are reused
/// from call to call (a reset is O(1)) where a fresh table would be allocated and grown. One per nesting depth, so
/// a user may hold one while a function it calls takes another.
template <class V> class ScratchNodeIdMap {
public:
  explicit ScratchNodeIdMap(const Context &ctx) {
    if (depth_ == pool_.size())
      pool_.push_back(std::make_unique<NodeIdMap<V>>());
    map_ = pool_[depth_].get();
    map_->reset(ctx.numNodes());
    ++depth_; // taken only once the reset succeeded
  }
  ~ScratchNodeIdMap() { --depth_; }
  ScratchNodeIdMap(const ScratchNodeIdMap &) = delete;
  ScratchNodeIdMap &operator=(const ScratchNodeIdMap &) = delete;

  NodeIdMap<V> &operator*() { return *map_; }
  NodeIdMap<V> *operator->() { return map_; }
  const NodeIdMap<V> &operator*() const { return *map_; }
  const NodeIdMap<V> *operator->() const { return map_; }

private:
  NodeIdMap<V> *map_;
  inline static thread_local std::vector<std::unique_ptr<NodeIdMap<V>>> pool_;
  inline static thread_local size_t depth_ = 0;
};

} // namespace tgc
