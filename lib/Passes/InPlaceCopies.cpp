//===- InPlaceCopies.cpp - Copies that memory placement makes free -*- C++ -*-===//
// A call `B[o + i] = S[i]` for every element i of a temporary S: S placed at B + o makes it a no-op. Copies link
// buffers into blocks with fixed offsets; a block is kept only where every byte has one producer.
//===----------------------------------------------------------------------===//
//
// DenseNet's exporter concatenates all earlier features again in every layer: layer k's input is a buffer that
// k copy calls fill from x0, f1, ..., fk. Placed as one block (every concat at the block's start, each feature at
// its channel offset), every copy writes what is already there and is dropped: the features are written once, by
// the convolutions that compute them.
//
// A copy S -> B at element offset o is a candidate when
//  - its kernel is one store of one load, `store(index(B, e + o), load(index(S, e)))`, e a sum of ranges times
//    constants that enumerates 0 .. |S|-1 once (strides 1, n1, n1*n2, ... over the ranges' sizes); no variables;
//  - S and B are temporaries of one dtype, no skipped call writes either, and B's part [o, o + |S|) is inside it;
//  - every writer of S runs before the copy and every reader of B after it, and no other call stores into that
//    part of B (the bounds of their store indices say so): after the copy, that part of B is S, for good.
// Candidates in program order join buffers into blocks (a weighted union-find: offset(S) = offset(B) + o); a copy
// whose two buffers already sit at those offsets is dropped too, and one at other offsets is kept (with its block
// then undone, below). A block is kept when the bytes its members produce themselves (a member's range less the
// parts copies into it cover) never overlap, so every byte has one producer whichever member it is read as, and
// when every member starts aligned as the others (64 bytes: kernels assume it for vector and streaming stores).

#include "Passes/InPlaceCopies.h"

#include "IR/Rewrite.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <optional>
#include <set>

namespace tgc {
namespace {

struct Copy {
  size_t call;
  const UOp *src;
  const UOp *dst;
  int64_t offset; // elements
};

int64_t elements(const UOp *b) { return b->arg().getTuple()[1].getInt(); }

/// e as a sum of ranges times constants plus a constant; false when it is anything else.
bool affine(const UOp *e, int64_t scale, std::map<const UOp *, int64_t> &coef, int64_t &constant) {
  switch (e->op()) {
  case Op::Const: constant += scale * e->constInt(); return true;
  case Op::Range:
    if (!e->src(0)->isConst())
      return false;
    coef[e] += scale;
    return true;
  case Op::Add: return affine(e->src(0), scale, coef, constant) && affine(e->src(1), scale, coef, constant);
  case Op::Mul:
    if (e->src(1)->isConst())
      return affine(e->src(0), scale * e->src(1)->constInt(), coef, constant);
    if (e->src(0)->isConst())
      return affine(e->src(1), scale * e->src(0)->constInt(), coef, constant);
    return false;
  default: return false;
  }
}

/// Whether e, over the ranges that end at `end`, takes every value 0 .. n-1 exactly once.
bool enumerates(const UOp *e, const UOp *end, int64_t n) {
  std::map<const UOp *, int64_t> coef;
  int64_t constant = 0;
  if (!affine(e, 1, coef, constant) || constant != 0)
    return false;
  std::vector<std::pair<int64_t, int64_t>> axes; // stride, size
  for (size_t i = 1; i < end->numSrc(); ++i) {
    const UOp *r = end->src(i);
    if (r->op() != Op::Range || !r->src(0)->isConst())
      return false;
    auto it = coef.find(r);
    if (rangeSize(r) > 1 && it == coef.end())
      return false; // a range the index ignores: S would be read more than once
    axes.push_back({it == coef.end() ? 0 : it->second, rangeSize(r)});
  }
  if (coef.size() != axes.size())
    return false;
  std::sort(axes.begin(), axes.end());
  int64_t next = 1;
  for (auto [stride, size] : axes) {
    if (size == 1)
      continue;
    if (stride != next)
      return false;
    next *= size;
  }
  return next == n;
}

/// The copy call `call` is, when its kernel is one store of one load that copies a whole buffer.
std::optional<Copy> asCopy(const UOp *call, size_t index) {
  const UOp *kernel = call->src(0);
  if (kernel->op() != Op::Sink || kernel->numSrc() != 1 || !kernelVariables(kernel).empty())
    return std::nullopt;
  const UOp *end = kernel->src(0);
  if (end->op() != Op::End || end->src(0)->op() != Op::Store)
    return std::nullopt;
  const UOp *store = end->src(0);
  const UOp *to = store->src(0);
  const UOp *load = store->src(1);
  if (load->op() != Op::Load || load->numSrc() != 1)
    return std::nullopt;
  const UOp *from = load->src(0);
  for (const UOp *ix : {to, from})
    if (ix->op() != Op::Index || ix->numSrc() != 2 || ix->src(0)->op() != Op::DefineGlobal)
      return std::nullopt;
  const UOp *src = slotBuffer(call, from);
  const UOp *dst = slotBuffer(call, to);
  if (!src || !dst || src == dst || !isTempBuffer(src) || !isTempBuffer(dst) || src->dtype() != dst->dtype())
    return std::nullopt;
  const UOp *e = from->src(1);
  int64_t offset = 0;
  const UOp *out = to->src(1);
  if (out != e) {
    if (out->op() != Op::Add)
      return std::nullopt;
    const UOp *c = out->src(0) == e ? out->src(1) : out->src(1) == e ? out->src(0) : nullptr;
    if (!c || !c->isConst())
      return std::nullopt;
    offset = c->constInt();
  }
  if (offset < 0 || offset + elements(src) > elements(dst) || !enumerates(e, end, elements(src)))
    return std::nullopt;
  return Copy{index, src, dst, offset};
}

/// The element bounds of the stores of `call` into buffer b; nullopt when one has no known bounds.
std::optional<std::pair<int64_t, int64_t>> storeBounds(const UOp *call, const UOp *b) {
  int64_t lo = INT64_MAX;
  int64_t hi = INT64_MIN;
  for (const UOp *n : toposort(call->src(0))) {
    if (n->op() != Op::Store || slotBuffer(call, n->src(0)) != b)
      continue;
    const UOp *ix = n->src(0)->src(1);
    if (!ix->hasRange())
      return std::nullopt;
    lo = std::min(lo, ix->vmin());
    hi = std::max(hi, ix->vmax());
  }
  return std::pair(lo, hi);
}

/// Weighted union-find: each buffer's block root and its byte offset from the root.
struct Blocks {
  std::map<const UOp *, std::pair<const UOp *, int64_t>> parent;

  std::pair<const UOp *, int64_t> find(const UOp *b) {
    auto it = parent.find(b);
    if (it == parent.end())
      return {b, 0};
    auto [root, off] = find(it->second.first);
    it->second = {root, off + it->second.second};
    return it->second;
  }
};

/// The copies that may be dropped one by one: S is complete before the copy, B is read only after it, nobody else
/// stores into the copied part, and neither is written by a skipped call.
std::vector<Copy> candidateCopies(const UOp *linear, const std::vector<bool> &skip) {
  size_t n = linear->numSrc();
  std::map<const UOp *, std::vector<size_t>> writers;
  std::map<const UOp *, std::vector<size_t>> readers;
  std::set<const UOp *> skipped;
  for (size_t i = 0; i < n; ++i) {
    CallAccess access = callAccess(linear->src(i));
    for (const UOp *b : access.writes) {
      writers[b].push_back(i);
      if (skip[i])
        skipped.insert(b);
    }
    for (const UOp *b : access.reads)
      readers[b].push_back(i);
  }
  auto safe = [&](const Copy &c) {
    if (skipped.count(c.src) || skipped.count(c.dst))
      return false;
    for (size_t w : writers[c.src])
      if (w >= c.call)
        return false;
    for (size_t r : readers[c.dst])
      if (r <= c.call)
        return false;
    for (size_t w : writers[c.dst]) {
      if (w == c.call)
        continue;
      std::optional<std::pair<int64_t, int64_t>> bounds = storeBounds(linear->src(w), c.dst);
      if (!bounds || !(bounds->second < c.offset || bounds->first >= c.offset + elements(c.src)))
        return false;
    }
    return true;
  };
  std::vector<Copy> copies;
  for (size_t i = 0; i < n; ++i)
    if (!skip[i])
      if (std::optional<Copy> c = asCopy(linear->src(i), i); c && safe(*c))
        copies.push_back(*c);
  return copies;
}

/// Whether the bytes the members of a block produce themselves (not copied into them) never overlap, at the members'
/// block offsets; `covered`: per buffer, the byte ranges copies fill.
bool ownBytesDisjoint(const std::vector<std::pair<const UOp *, int64_t>> &members,
                      std::map<const UOp *, std::vector<std::pair<int64_t, int64_t>>> &covered) {
  std::vector<std::pair<int64_t, int64_t>> own;
  for (auto [b, off] : members) {
    std::vector<std::pair<int64_t, int64_t>> parts = covered[b];
    std::sort(parts.begin(), parts.end());
    int64_t at = 0;
    int64_t size = elements(b) * bufferElementBytes(b);
    for (auto [lo, hi] : parts) {
      if (lo > at)
        own.push_back({off + at, off + lo});
      at = std::max(at, hi);
    }
    if (at < size)
      own.push_back({off + at, off + size});
  }
  std::sort(own.begin(), own.end());
  for (size_t i = 1; i < own.size(); ++i)
    if (own[i].first < own[i - 1].second)
      return false;
  return true;
}

} // namespace

InPlaceCopies findInPlaceCopies(const UOp *linear, const std::vector<bool> &skip, int64_t align) {
  InPlaceCopies result;
  result.dropped.assign(linear->numSrc(), false);
  std::vector<Copy> copies = candidateCopies(linear, skip);

  // join blocks: offset(src) = offset(dst) + offset * element bytes
  Blocks blocks;
  std::vector<const Copy *> joined;
  std::set<const UOp *> conflicted; // roots of blocks with a copy between two members at other offsets
  for (const Copy &c : copies) {
    auto [rs, ds] = blocks.find(c.src);
    auto [rd, dd] = blocks.find(c.dst);
    int64_t want = dd + c.offset * bufferElementBytes(c.dst);
    if (rs == rd) {
      if (ds == want)
        joined.push_back(&c);
      else
        conflicted.insert(rs);
      continue;
    }
    blocks.parent[rs] = {rd, want - ds};
    joined.push_back(&c);
  }

  // per block: members, offsets, and the bytes each member produces itself
  std::map<const UOp *, std::vector<std::pair<const UOp *, int64_t>>> members; // root -> (buffer, offset)
  std::set<const UOp *> all;
  for (auto &[b, link] : blocks.parent) {
    all.insert(b);
    all.insert(blocks.find(b).first);
  }
  for (const UOp *b : all)
    members[blocks.find(b).first].push_back({b, blocks.find(b).second});
  std::map<const UOp *, std::vector<std::pair<int64_t, int64_t>>> covered; // buffer -> copied-into byte ranges
  for (const Copy *c : joined) {
    int64_t at = c->offset * bufferElementBytes(c->dst);
    covered[c->dst].push_back({at, at + elements(c->src) * bufferElementBytes(c->src)});
  }
  for (auto &[root, list] : members) {
    bool ok = !conflicted.count(root) && ownBytesDisjoint(list, covered);
    int64_t low = 0;
    int64_t high = 0;
    for (auto [b, off] : list) {
      low = std::min(low, off);
      high = std::max(high, off + elements(b) * bufferElementBytes(b));
    }
    for (auto [b, off] : list)
      ok = ok && (off - low) % align == 0; // kernels assume aligned buffers (vector and streaming stores)
    if (!ok)
      continue;
    const UOp *base = nullptr;
    for (auto [b, off] : list) {
      result.placed[b] = {nullptr, off - low};
      if (off == low && (!base || elements(b) > elements(base)))
        base = b;
    }
    for (auto [b, off] : list)
      result.placed[b].first = base;
    result.blockBytes[base] = high - low;
  }
  for (const Copy *c : joined)
    if (result.placed.count(c->src))
      result.dropped[c->call] = true;
  return result;
}

} // namespace tgc
