//===- NodeMap.h - A flat hash map keyed by UOp pointers --------*- C++ -*-===//
// Open addressing with linear probing: the rewrite engine's per-node bookkeeping without a heap node per entry.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tgc {

class UOp;

/// A map from nodes to small values. Entries are never removed (a caller that needs removal stores a state in V).
/// Slots hold the key and the value together, so a lookup is one multiply and, almost always, one cache line.
template <class V> class NodeMap {
public:
  explicit NodeMap(size_t expected = 16) { rehash(capacityFor(expected)); }

  /// The value of `key`, or null when it is absent. The pointer is valid until the next insertion.
  V *find(const UOp *key) {
    Slot &s = probe(key);
    return s.key ? &s.value : nullptr;
  }
  const V *find(const UOp *key) const { return const_cast<NodeMap *>(this)->find(key); }
  bool contains(const UOp *key) const { return find(key) != nullptr; }

  /// Adds (key, value) when key is absent. Returns the entry's value and whether it was added.
  std::pair<V *, bool> insert(const UOp *key, V value) {
    Slot *s = &probe(key);
    if (s->key)
      return {&s->value, false};
    if (2 * (size_ + 1) > slots_.size()) { // keep at most half the slots full
      rehash(slots_.size() * 2);
      s = &probe(key);
    }
    s->key = key;
    s->value = std::move(value);
    ++size_;
    return {&s->value, true};
  }

  /// The value of `key`, added as V() when absent.
  V &operator[](const UOp *key) { return *insert(key, V()).first; }

  size_t size() const { return size_; }

private:
  struct Slot {
    const UOp *key = nullptr;
    V value{};
  };

  static size_t capacityFor(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n)
      cap *= 2;
    return cap;
  }

  /// The slot of `key`, or the empty slot where it would go. Fibonacci hashing: the pointer times 2^64/phi, top bits.
  Slot &probe(const UOp *key) {
    size_t mask = slots_.size() - 1;
    size_t i = size_t((uint64_t(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ull) >> shift_);
    while (slots_[i].key && slots_[i].key != key)
      i = (i + 1) & mask;
    return slots_[i];
  }

  void rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot());
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2)
      --shift_;
    for (Slot &s : old)
      if (s.key)
        probe(s.key) = std::move(s);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned shift_ = 64;
};

} // namespace tgc
