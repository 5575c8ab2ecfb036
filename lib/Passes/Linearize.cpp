//===- Linearize.cpp - A kernel's graph to an ordered list ------*- C++ -*-===//
// Orders a kernel's nodes into the flat list a renderer walks: `range` opens a loop, `end` closes it, every other
// node appears after its operands, inside exactly the loops it depends on (so loop-invariant work is hoisted).
//===----------------------------------------------------------------------===//
//
// Each node's context is the set of ranges it depends on (an `end` removes the ranges it closes), ordered by
// rangeNestsBefore (output loops outside reduce loops, then axis id). At each loop level the nodes of that level and
// the loops nested in it are sorted topologically, loops taken as units that start with their `range` and finish with
// the `end` that closes it. Ties keep the order of a depth-first walk from the sink, so the result is deterministic. An
// `end` over several ranges is first split into nested single-range ends.

#include "Passes/Linearize.h"

#include "IR/NodeIdMap.h"
#include "IR/NodeMap.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <bit>
#include <queue>

namespace tgc {
namespace {

int nestingRank(const UOp *r) {
  const std::string &kind = rangeKind(r);
  if (kind == "block")
    return -1;
  return kind == "reduce" || kind == "unroll" ? 1 : 0;
}

bool rangeOrder(const UOp *a, const UOp *b) { return rangeNestsBefore(a, b); }

/// end(x, r0, ..., rk) -> end(...end(end(x, rk), rk-1)..., r0): one range per end, rk nested in rk-1 ... in r0
/// (whatever order the end lists them in).
const UOp *nestEnd(const UOp *e) {
  std::vector<const UOp *> ranges(e->src().begin() + 1, e->src().end());
  std::stable_sort(ranges.begin(), ranges.end(), rangeOrder);
  Context &ctx = e->ctx();
  const UOp *x = e->src(0);
  for (size_t i = ranges.size(); i-- > 0;)
    x = ctx.make(Op::End, dt::Void, {x, ranges[i]});
  return x;
}

bool closesSeveral(const UOp *u) { return u->op() == Op::End && u->numSrc() > 2; }

/// The kernel with every end that closes several ranges nested (`order`: its nodes, operands first).
const UOp *splitEnds(const UOp *sink, const std::vector<const UOp *> &order) {
  ScratchNodeIdMap<const UOp *> now(sink->ctx()); // the nodes that changed: what they became
  std::vector<const UOp *> src;
  for (const UOp *u : order) {
    src.clear();
    bool changed = false;
    for (const UOp *s : u->src()) {
      const UOp *const *r = now->find(s);
      src.push_back(r ? *r : s);
      changed = changed || r;
    }
    const UOp *v = changed ? u->ctx().withSrc(u, src) : u;
    if (closesSeveral(v))
      v = nestEnd(v);
    if (v != u)
      now->insert(u, v);
  }
  const UOp *const *r = now->find(sink);
  return r ? *r : sink;
}

} // namespace

bool rangeNestsBefore(const UOp *a, const UOp *b) {
  int ra = nestingRank(a), rb = nestingRank(b);
  if (ra != rb)
    return ra < rb;
  if (rangeId(a) != rangeId(b))
    return rangeId(a) < rangeId(b);
  return UOp::structuralLess(a, b);
}

namespace {

/// Sets of the kernel's ranges, one row of `words` 64-bit words per node: bit i stands for the i-th range in nesting
/// order.
class RangeSets {
public:
  RangeSets(size_t rows, size_t words) : words_(words), bits_(rows * words) {}
  uint64_t *row(size_t i) { return bits_.data() + i * words_; }
  const uint64_t *row(size_t i) const { return bits_.data() + i * words_; }
  size_t words() const { return words_; }

private:
  size_t words_;
  std::vector<uint64_t> bits_;
};

bool testBit(const uint64_t *row, size_t b) { return row[b / 64] >> (b % 64) & 1; }
void setBit(uint64_t *row, size_t b) { row[b / 64] |= uint64_t(1) << (b % 64); }
void clearBit(uint64_t *row, size_t b) { row[b / 64] &= ~(uint64_t(1) << (b % 64)); }
void orInto(uint64_t *to, const uint64_t *from, size_t words) {
  for (size_t w = 0; w < words; ++w)
    to[w] |= from[w];
}

/// The index of the k-th set bit of a row (k from 0), or SIZE_MAX when it has k or fewer.
size_t nthMember(const uint64_t *row, size_t words, size_t k) {
  for (size_t w = 0; w < words; ++w) {
    uint64_t x = row[w];
    size_t count = size_t(std::popcount(x));
    if (k >= count) {
      k -= count;
      continue;
    }
    for (; k > 0; --k)
      x &= x - 1;
    return w * 64 + size_t(std::countr_zero(x));
  }
  return SIZE_MAX;
}

class Linearizer {
public:
  Linearizer(const UOp *sink, std::vector<const UOp *> order)
      : sink_(sink), order_(std::move(order)), position_(sink->ctx()) {
    for (size_t i = 0; i < order_.size(); ++i)
      position_->insert(order_[i], i);
    for (const UOp *u : order_)
      if (u->op() == Op::Range)
        ranges_.push_back(u);
    std::sort(ranges_.begin(), ranges_.end(), rangeOrder);
    for (size_t i = 0; i < ranges_.size(); ++i)
      bit_.insert(ranges_[i], i);
    size_t words = (ranges_.size() + 63) / 64;
    RangeSets raw = rawContexts(words);
    RangeSets closure = rangeClosures(raw);
    // a node is inside the loops of its ranges' closures
    loops_ = RangeSets(order_.size(), words);
    for (size_t i = 0; i < order_.size(); ++i) {
      uint64_t *row = loops_.row(i);
      forEachMember(raw.row(i), words, [&](size_t r) { orInto(row, closure.row(r), words); });
      if (order_[i]->op() == Op::End)
        clearEnded(order_[i], row);
    }
  }

  std::vector<const UOp *> run() {
    std::vector<const UOp *> nodes;
    for (const UOp *u : order_)
      if (u != sink_)
        nodes.push_back(u);
    emit(0, nodes);
    return out_;
  }

private:
  template <class F> static void forEachMember(const uint64_t *row, size_t words, F f) {
    for (size_t w = 0; w < words; ++w)
      for (uint64_t x = row[w]; x; x &= x - 1)
        f(w * 64 + size_t(std::countr_zero(x)));
  }

  void clearEnded(const UOp *end, uint64_t *row) const {
    for (size_t k = 1; k < end->numSrc(); ++k)
      if (const size_t *b = bit_.find(end->src(k)))
        clearBit(row, *b);
  }

  /// Per node: the ranges it depends on, minus those an end closes.
  RangeSets rawContexts(size_t words) const {
    RangeSets raw(order_.size(), words);
    for (size_t i = 0; i < order_.size(); ++i) {
      const UOp *u = order_[i];
      uint64_t *row = raw.row(i);
      if (u->op() == Op::Range)
        setBit(row, *bit_.find(u));
      for (const UOp *s : u->src())
        orInto(row, raw.row(*position_->find(s)), words);
      if (u->op() == Op::End)
        clearEnded(u, row);
    }
    return raw;
  }

  /// Per range: itself and every range open where it is closed, transitively (a node using a range is inside all of
  /// those loops too).
  RangeSets rangeClosures(const RangeSets &raw) const {
    size_t words = raw.words();
    std::vector<const uint64_t *> parents(ranges_.size(), nullptr);
    for (size_t i = 0; i < order_.size(); ++i)
      if (order_[i]->op() == Op::End)
        for (size_t k = 1; k < order_[i]->numSrc(); ++k)
          if (const size_t *b = bit_.find(order_[i]->src(k)); b && !parents[*b])
            parents[*b] = raw.row(i);
    RangeSets closure(ranges_.size(), words);
    std::vector<size_t> work;
    for (size_t r0 = 0; r0 < ranges_.size(); ++r0) {
      uint64_t *row = closure.row(r0);
      work.push_back(r0);
      while (!work.empty()) {
        size_t r = work.back();
        work.pop_back();
        if (testBit(row, r))
          continue;
        setBit(row, r);
        if (parents[r])
          forEachMember(parents[r], words, [&](size_t p) { work.push_back(p); });
      }
    }
    return closure;
  }

  /// The loop an item at nesting depth `depth` belongs to, or null for a node of that level itself.
  const UOp *loopOf(const UOp *u, size_t depth) const {
    size_t r = nthMember(loops_.row(*position_->find(u)), loops_.words(), depth);
    if (r != SIZE_MAX)
      return ranges_[r];
    return u->op() == Op::End ? u->src(1) : nullptr; // an end at this level belongs to the loop it closes
  }

  void emit(size_t depth, const std::vector<const UOp *> &nodes) {
    // items: a node of this level, or a loop (keyed by its range)
    NodeMap<size_t> itemOf(nodes.size()); // node -> item index
    std::vector<std::vector<const UOp *>> items;
    std::vector<const UOp *> loopRange;
    NodeMap<size_t> loopItem;
    for (const UOp *u : nodes) {
      const UOp *loop = loopOf(u, depth);
      if (!loop) {
        itemOf.insert(u, items.size());
        items.push_back({u});
        loopRange.push_back(nullptr);
        continue;
      }
      auto [item, fresh] = loopItem.insert(loop, items.size());
      if (fresh) {
        items.push_back({});
        loopRange.push_back(loop);
      }
      items[*item].push_back(u);
      itemOf.insert(u, *item);
    }
    size_t n = items.size();
    std::vector<std::vector<size_t>> deps(n);
    std::vector<size_t> priority(n, SIZE_MAX);
    for (size_t i = 0; i < n; ++i) {
      for (const UOp *u : items[i]) {
        priority[i] = std::min(priority[i], *position_->find(u));
        for (const UOp *s : u->src())
          if (const size_t *item = itemOf.find(s); item && *item != i)
            deps[i].push_back(*item);
      }
      std::sort(deps[i].begin(), deps[i].end());
      deps[i].erase(std::unique(deps[i].begin(), deps[i].end()), deps[i].end());
    }
    // Kahn's algorithm, the ready item with the lowest priority first (priorities are distinct positions)
    std::vector<std::vector<size_t>> users(n);
    std::vector<size_t> waiting(n);
    for (size_t i = 0; i < n; ++i) {
      waiting[i] = deps[i].size();
      for (size_t d : deps[i])
        users[d].push_back(i);
    }
    using Ready = std::pair<size_t, size_t>; // (priority, item)
    std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
    for (size_t i = 0; i < n; ++i)
      if (waiting[i] == 0)
        ready.push({priority[i], i});
    for (size_t step = 0; step < n; ++step) {
      if (ready.empty())
        internalError("linearize: the kernel's loops are not properly nested");
      size_t pick = ready.top().second;
      ready.pop();
      for (size_t u : users[pick])
        if (--waiting[u] == 0)
          ready.push({priority[u], u});
      if (!loopRange[pick]) {
        out_.push_back(items[pick][0]);
        continue;
      }
      emitLoop(depth, loopRange[pick], items[pick]);
    }
  }

  void emitLoop(size_t depth, const UOp *range, const std::vector<const UOp *> &nodes) {
    std::vector<const UOp *> body, ends;
    for (const UOp *u : nodes) {
      if (u == range)
        continue;
      if (u->op() == Op::End && u->src(1) == range)
        ends.push_back(u);
      else
        body.push_back(u);
    }
    out_.push_back(range);
    emit(depth + 1, body);
    out_.insert(out_.end(), ends.begin(), ends.end());
  }

  const UOp *sink_;
  std::vector<const UOp *> order_;    // the kernel's nodes, operands first
  ScratchNodeIdMap<size_t> position_; // node -> its index in order_
  std::vector<const UOp *> ranges_;   // the kernel's ranges in nesting order (rangeNestsBefore)
  NodeMap<size_t> bit_;               // range -> its index in ranges_
  RangeSets loops_{0, 0};             // per node (by position): the loops around it
  std::vector<const UOp *> out_;
};

} // namespace

const UOp *linearizeKernel(const UOp *sink) {
  std::vector<const UOp *> order = toposort(sink);
  const UOp *split = sink;
  if (std::any_of(order.begin(), order.end(), closesSeveral)) {
    split = splitEnds(sink, order);
    order = toposort(split);
  }
  std::vector<const UOp *> list = Linearizer(split, std::move(order)).run();
  return sink->ctx().make(Op::Linear, dt::Void, list, sink->arg());
}

const UOp *runLinearize(const UOp *root, PassContext &pc) {
  return mapKernels(root, [&](const UOp *k) -> const UOp * {
    if (k->op() != Op::Sink)
      return nullptr; // linearized already
    pc.stats["linearize.kernels"] += 1;
    return linearizeKernel(k);
  });
}

} // namespace tgc
