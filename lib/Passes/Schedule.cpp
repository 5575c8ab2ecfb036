//===- Schedule.cpp - Ordering kernel calls ---------------------*- C++ -*-===//
// A sink of calls becomes a linear program in which every call runs after the calls that write what it reads.
//===----------------------------------------------------------------------===//
//
// Semantics of an unscheduled program (a sink of calls): a call that reads a buffer it does not write runs after
// every call that writes that buffer; calls writing the same buffer keep their order in the sink. Among calls that
// are ready, the one listed first in the sink goes first, so the order is deterministic. Buffers are reused only
// later, by plan-memory, which keeps this order.

#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>

namespace tgc {

namespace {

bool contains(const std::vector<const UOp *> &v, const UOp *u) { return std::find(v.begin(), v.end(), u) != v.end(); }

/// Must call j run after call i?
bool dependsOn(const CallAccess &i, const CallAccess &j, bool iListedFirst) {
  for (const UOp *w : i.writes) {
    if (contains(j.reads, w) && !contains(j.writes, w))
      return true; // read after write
    if (contains(j.writes, w) && iListedFirst)
      return true; // two writers keep their order
  }
  return false;
}

} // namespace

const UOp *runSchedule(const UOp *root, PassContext &pc) {
  if (root->op() == Op::Linear)
    return root; // already scheduled
  if (root->op() != Op::Sink) {
    pc.diags.error(Loc{pc.module.fileName, 0, 0}, "schedule needs a program whose root is a sink of calls");
    return nullptr;
  }
  std::vector<const UOp *> calls(root->src().begin(), root->src().end());
  size_t n = calls.size();
  std::vector<CallAccess> access;
  for (const UOp *c : calls)
    access.push_back(callAccess(c));
  std::vector<size_t> waitingFor(n, 0);
  std::vector<std::vector<size_t>> unblocks(n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j && dependsOn(access[i], access[j], i < j)) {
        unblocks[i].push_back(j);
        ++waitingFor[j];
      }
  std::vector<const UOp *> order;
  std::vector<bool> done(n, false);
  for (size_t step = 0; step < n; ++step) {
    size_t pick = 0;
    while (pick < n && (done[pick] || waitingFor[pick] != 0))
      ++pick;
    if (pick == n) {
      pc.diags.error(Loc{pc.module.fileName, 0, 0}, "the program's calls depend on each other in a cycle");
      return nullptr;
    }
    done[pick] = true;
    order.push_back(calls[pick]);
    for (size_t j : unblocks[pick])
      --waitingFor[j];
  }
  return root->ctx().make(Op::Linear, dt::Void, order);
}

} // namespace tgc
