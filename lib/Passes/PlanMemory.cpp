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

#include "Passes/Pass.h"
#include "Passes/ProgramInfo.h"

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

bool isTemp(const UOp *b) { return b->op() == Op::Buffer && b->arg().getTuple()[2].getString() == "temp"; }

} // namespace

const UOp *runPlanMemory(const UOp *root, PassContext &pc) {
  if (root->op() != Op::Linear) {
    pc.diags.error(Loc{pc.module.fileName, 0, 0}, "plan-memory needs a scheduled program (run 'schedule' first)");
    return nullptr;
  }
  std::map<const UOp *, Interval> live;
  std::vector<bool> once = weightOnlyCalls(root);
  for (size_t i = 0; i < root->numSrc(); ++i) {
    const UOp *call = root->src(i);
    for (size_t k = 1; k < call->numSrc(); ++k) {
      const UOp *b = call->src(k);
      if (!isTemp(b))
        continue;
      int64_t bytes =
          b->arg().getTuple()[1].getInt() * (b->dtype().pointee().isBool() ? 1 : b->dtype().pointee().itemSize());
      auto [it, fresh] = live.emplace(b, Interval{b, int64_t(i), int64_t(i), bytes});
      it->second.last = int64_t(i);
    }
  }
  // what a run-once call writes is read by every later run: live through the whole program
  for (size_t i = 0; i < root->numSrc(); ++i) {
    if (!once[i])
      continue;
    for (const UOp *b : callAccess(root->src(i)).writes) {
      live.at(b).first = 0;
      live.at(b).last = int64_t(root->numSrc());
    }
  }
  std::vector<Interval> temps;
  for (auto &[b, iv] : live)
    temps.push_back(iv);
  std::sort(temps.begin(), temps.end(), [](const Interval &a, const Interval &b) {
    if (a.first != b.first)
      return a.first < b.first;
    return a.buffer->arg().getTuple()[0].getInt() < b.buffer->arg().getTuple()[0].getInt();
  });
  int64_t before = 0, arena = 0;
  std::vector<const Interval *> placed;
  for (Interval &t : temps) {
    before += alignUp(t.bytes);
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
  std::unordered_map<const UOp *, const UOp *> replace;
  Context &ctx = root->ctx();
  for (const Interval &t : temps) {
    Arg::Tuple a = t.buffer->arg().getTuple();
    a[5] = Arg(t.offset);
    replace[t.buffer] = ctx.withArg(t.buffer, Arg(a));
  }
  pc.stats["plan-memory.temporary-bytes-unplanned"] += before;
  pc.stats["plan-memory.temporary-bytes-planned"] += arena;
  const UOp *out = substitute(root, replace);
  std::vector<const UOp *> calls(out->src().begin(), out->src().end());
  for (size_t i = 0; i < calls.size(); ++i) {
    if (once[i]) {
      calls[i] = ctx.withTag(calls[i], Arg(std::string(kRunOnceTag)));
      pc.stats["plan-memory.run-once-calls"] += 1;
    }
  }
  return ctx.withArg(ctx.withSrc(out, calls), Arg(arena));
}

} // namespace tgc
