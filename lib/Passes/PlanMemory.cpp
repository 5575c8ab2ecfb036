//===- PlanMemory.cpp - Reusing temporary buffers ---------------*- C++ -*-===//
// Places every temporary buffer of a linear program at an offset in one arena, reusing the memory of buffers whose
// last reader has run. Inputs, weights and outputs keep their own memory.
//===----------------------------------------------------------------------===//
//
// A temporary is live from the first call that uses it to the last; a later buffer may take its place only in a
// call after that. Temporaries are placed in order of first use, each at the lowest 64-byte-aligned offset that does
// not overlap a buffer live at the same time (first fit). The interpreter runs temporaries inside the arena at these
// offsets, so --check-semantics catches any overlap of live buffers. A temporary written by a call that depends on
// the weights alone (weightOnlyCalls) is live through the whole program: the runtime runs that call on the first
// run only, and later runs read what it left. Such calls are tagged {tag = "once"} for the runtime.
//
// A padded buffer (rangeify's regions: one call writes the inside, calls that read nothing store the zero border)
// keeps its border the same way: its memory is reserved for the whole program, so the border calls run once and
// later runs write only the inside. Padded buffers whose border calls are the same kernels (same shape, padding and
// dtype) and whose uses do not overlap share one such reservation: their borders are the same bytes. Without it the
// border calls ran every run, each touching a cache line at both ends of every row (6% of MobileNetV2's time).
//
// Where temporaries are views into one arena (TargetDesc::arenaViews: CPU targets without AddressSanitizer), a call
// that copies a whole temporary into part of another is dropped where the source can live in that part
// (InPlaceCopies.h): such buffers are placed together as one block.

#include "Passes/InPlaceCopies.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "IR/Rewrite.h"

namespace tgc {

namespace {

constexpr int64_t kAlign = 64;

int64_t alignUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct Interval {
  const UOp *buffer;
  int64_t first;
  int64_t last;
  int64_t bytes;
  int64_t offset = 0;
};

int64_t bufferId(const UOp *b) { return b->arg().getTuple()[0].getInt(); }

/// Per call: the temporary whose part it stores constants into while other calls write the rest (the zero border of
/// a padded buffer), or nullptr: it reads no buffer, writes one temporary, and has no variable sizes.
std::vector<const UOp *> borderBuffers(const UOp *linear, const std::vector<bool> &once) {
  std::map<const UOp *, int> writers;
  std::vector<CallAccess> access;
  for (const UOp *call : linear->src()) {
    access.push_back(callAccess(call));
    for (const UOp *b : access.back().writes)
      ++writers[b];
  }
  std::vector<const UOp *> border(linear->numSrc(), nullptr);
  for (size_t i = 0; i < access.size(); ++i) {
    const CallAccess &a = access[i];
    if (!once[i] && a.reads.empty() && a.writes.size() == 1 && isTempBuffer(a.writes[0]) && writers[a.writes[0]] > 1 &&
        kernelVariables(linear->src(i)->src(0)).empty())
      border[i] = a.writes[0];
  }
  return border;
}

/// Each temporary's interval of calls (first to last use) and size; what a run-once call writes is read by every
/// later run, so it is live through the whole program.
std::map<const UOp *, Interval> liveIntervals(const UOp *linear, const std::vector<bool> &once) {
  std::map<const UOp *, Interval> live;
  for (size_t i = 0; i < linear->numSrc(); ++i) {
    const UOp *call = linear->src(i);
    for (size_t k = 1; k < call->numSrc(); ++k) {
      const UOp *b = call->src(k);
      if (!isTempBuffer(b))
        continue;
      int64_t bytes = b->arg().getTuple()[1].getInt() * bufferElementBytes(b);
      auto [it, fresh] = live.emplace(b, Interval{b, int64_t(i), int64_t(i), bytes});
      it->second.last = int64_t(i);
    }
  }
  for (size_t i = 0; i < linear->numSrc(); ++i) {
    if (!once[i])
      continue;
    for (const UOp *b : callAccess(linear->src(i)).writes) {
      live.at(b).first = 0;
      live.at(b).last = int64_t(linear->numSrc());
    }
  }
  return live;
}

/// Padded buffers keep their borders: grouped by their border kernels, each group's buffers take reservations in
/// order of first use, one reusing a reservation whose last buffer's uses have ended. Returns padded buffer -> the
/// buffer whose reservation it takes; a buffer that takes its own is made live through the whole program.
std::map<const UOp *, const UOp *> shareBorderReservations(const UOp *linear, const std::vector<const UOp *> &border,
                                                           std::map<const UOp *, Interval> &live) {
  std::map<const UOp *, std::vector<const UOp *>> borderKernels; // per padded buffer
  for (size_t i = 0; i < linear->numSrc(); ++i)
    if (border[i])
      borderKernels[border[i]].push_back(linear->src(i)->src(0));
  std::map<std::pair<std::vector<const UOp *>, int64_t>, std::vector<Interval *>> groups;
  for (auto &[b, kernels] : borderKernels) {
    std::sort(kernels.begin(), kernels.end());
    groups[{kernels, live.at(b).bytes}].push_back(&live.at(b));
  }
  std::map<const UOp *, const UOp *> sharesWith;
  for (auto &[key, members] : groups) {
    std::sort(members.begin(), members.end(), [](const Interval *a, const Interval *b) {
      return std::pair(a->first, bufferId(a->buffer)) < std::pair(b->first, bufferId(b->buffer));
    });
    std::vector<std::pair<const UOp *, int64_t>> reservations; // first buffer, last use so far
    for (Interval *m : members) {
      auto free =
          std::find_if(reservations.begin(), reservations.end(), [&](const auto &r) { return r.second < m->first; });
      if (free == reservations.end()) {
        reservations.push_back({m->buffer, m->last});
        continue;
      }
      sharesWith[m->buffer] = free->first;
      free->second = m->last;
    }
  }
  for (auto &[b, kernels] : borderKernels) {
    if (sharesWith.count(b))
      continue;
    live.at(b).first = 0;
    live.at(b).last = int64_t(linear->numSrc());
  }
  return sharesWith;
}

/// First fit in order of first use: each interval gets the lowest aligned offset that overlaps no interval placed
/// before it whose uses have not ended. Returns the arena's size.
int64_t placeFirstFit(std::vector<Interval> &temps) {
  int64_t arena = 0;
  std::vector<const Interval *> placed;
  for (Interval &t : temps) {
    std::vector<const Interval *> busy;
    for (const Interval *p : placed)
      if (p->last >= t.first)
        busy.push_back(p);
    std::sort(busy.begin(), busy.end(), [](const Interval *a, const Interval *b) { return a->offset < b->offset; });
    int64_t offset = 0;
    for (const Interval *p : busy) {
      if (offset + t.bytes <= p->offset)
        break;
      offset = std::max(offset, alignUp(p->offset + p->bytes));
    }
    t.offset = offset;
    arena = std::max(arena, alignUp(offset + t.bytes));
    placed.push_back(&t);
  }
  return arena;
}

} // namespace

const UOp *runPlanMemory(const UOp *root, PassContext &pc) {
  if (root->op() != Op::Linear) {
    pc.diags.error(Loc{pc.module.fileName, 0, 0}, "plan-memory needs a scheduled program (run 'schedule' first)");
    return nullptr;
  }
  std::vector<bool> once = weightOnlyCalls(root);
  std::map<const UOp *, Interval> live = liveIntervals(root, once);
  std::vector<const UOp *> border = borderBuffers(root, once);
  std::map<const UOp *, const UOp *> sharesWith = shareBorderReservations(root, border, live);
  // copies whose source can sit where it is copied to: each block of such buffers is placed as one
  std::vector<bool> skip(root->numSrc());
  for (size_t i = 0; i < skip.size(); ++i)
    skip[i] = once[i] || border[i];
  // (only where temporaries are views into one arena: TargetDesc::arenaViews)
  InPlaceCopies inPlace = pc.target.arenaViews ? findInPlaceCopies(root, skip, kAlign)
                                               : InPlaceCopies{std::vector<bool>(root->numSrc(), false), {}, {}};
  for (auto &[b, where] : inPlace.placed) {
    Interval &block = live.at(where.first);
    block.first = std::min(block.first, live.at(b).first);
    block.last = std::max(block.last, live.at(b).last);
  }
  for (auto &[base, bytes] : inPlace.blockBytes)
    live.at(base).bytes = bytes;
  std::vector<Interval> temps;
  for (auto &[b, iv] : live)
    if (!sharesWith.count(b) && (!inPlace.placed.count(b) || inPlace.placed.at(b).first == b))
      temps.push_back(iv);
  std::sort(temps.begin(), temps.end(), [](const Interval &a, const Interval &b) {
    if (a.first != b.first)
      return a.first < b.first;
    return bufferId(a.buffer) < bufferId(b.buffer);
  });
  int64_t arena = placeFirstFit(temps);
  int64_t before = 0;
  for (const Interval &t : temps)
    before += alignUp(t.bytes);
  std::unordered_map<const UOp *, const UOp *> replace;
  Context &ctx = root->ctx();
  std::map<const UOp *, int64_t> offsets;
  for (const Interval &t : temps)
    offsets[t.buffer] = t.offset;
  for (auto &[b, first] : sharesWith)
    offsets[b] = offsets.at(first);
  for (auto &[b, where] : inPlace.placed)
    offsets[b] = offsets.at(where.first) + where.second;
  for (auto &[b, offset] : offsets) {
    Arg::Tuple a = b->arg().getTuple();
    a[5] = Arg(offset);
    replace[b] = ctx.withArg(b, Arg(a));
  }
  pc.stats["plan-memory.temporary-bytes-unplanned"] += before;
  pc.stats["plan-memory.temporary-bytes-planned"] += arena;
  const UOp *out = substitute(root, replace);
  std::vector<const UOp *> calls;
  for (size_t i = 0; i < out->numSrc(); ++i) {
    if (inPlace.dropped[i]) {
      pc.stats["plan-memory.copies-in-place"] += 1;
      continue;
    }
    calls.push_back(out->src(i));
    if (once[i] || border[i]) {
      calls.back() = ctx.withTag(calls.back(), Arg(std::string(kRunOnceTag)));
      pc.stats["plan-memory.run-once-calls"] += 1;
    }
    if (border[i])
      pc.stats["plan-memory.kept-border-calls"] += 1;
  }
  return ctx.withArg(ctx.withSrc(out, calls), Arg(arena));
}

} // namespace tgc
