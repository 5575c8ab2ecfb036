//===- ProgramEval.cpp - Executing programs ---------------------*- C++ -*-===//
// Buffers are allocated (temporaries placed in one arena as the memory plan says), then each call runs its kernel.
//===----------------------------------------------------------------------===//
//
// Temporaries and outputs start filled with a poison byte pattern, so a kernel that reads memory no kernel wrote,
// or a memory plan that lets two live buffers overlap, gives wrong results that --check-semantics reports.

#include "Interp/Internal.h"

#include "IR/UOp.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <unordered_map>

namespace tgc::interp {
namespace {

constexpr uint8_t kPoison = 0x7f;

struct BufferInfo {
  int64_t id;
  int64_t elements;
  std::string kind;
  std::string name;
  Shape shape;
  int64_t offset;
};

BufferInfo readBuffer(const UOp *b) {
  const auto &t = b->arg().getTuple();
  Shape shape = t[2].getString() == "variable" ? Shape{} : bufferShape(t[4]);
  return {t[0].getInt(), t[1].getInt(), t[2].getString(), t[3].getString(), shape, t[5].getInt()};
}

/// Calls in an order that respects their buffers: a call runs once every buffer it reads has been written.
std::vector<const UOp *> orderCalls(const UOp *root) {
  if (root->op() == Op::Linear)
    return {root->src().begin(), root->src().end()};
  std::vector<const UOp *> pending(root->src().begin(), root->src().end());
  std::unordered_map<const UOp *, std::vector<std::pair<const UOp *, bool>>> uses; // call -> (buffer, written)
  for (const UOp *c : pending)
    for (size_t i = 1; i < c->numSrc(); ++i) {
      bool written = false;
      for (const UOp *n : toposort(c->src(0)))
        if (n->op() == Op::Store && n->src(0)->op() == Op::Index && n->src(0)->src(0)->arg() == Arg(int64_t(i - 1)))
          written = true;
      uses[c].emplace_back(c->src(i), written);
    }
  std::unordered_map<const UOp *, int> writersLeft;
  for (const UOp *c : pending)
    for (auto &[b, w] : uses[c])
      writersLeft[b] += w;
  std::vector<const UOp *> order;
  while (!pending.empty()) {
    auto ready = std::find_if(pending.begin(), pending.end(), [&](const UOp *c) {
      for (auto &[b, w] : uses[c])
        if (!w && writersLeft[b] > 0)
          return false;
      return true;
    });
    if (ready == pending.end())
      fail("the program's calls read buffers in a cycle");
    for (auto &[b, w] : uses[*ready])
      writersLeft[b] -= w;
    order.push_back(*ready);
    pending.erase(ready);
  }
  return order;
}

} // namespace

void runProgram(const UOp *root, const ArrayMap &leaves, ArrayMap &outputs) {
  std::unordered_map<const UOp *, std::vector<uint8_t>> own;
  std::unordered_map<const UOp *, uint8_t *> base;
  std::vector<uint8_t> arena;
  std::vector<const UOp *> buffers;
  for (const UOp *u : toposort(root))
    if (u->op() == Op::Buffer)
      buffers.push_back(u);
  int64_t arenaSize = 0;
  for (const UOp *b : buffers) {
    BufferInfo info = readBuffer(b);
    if (info.elements > kMaxInterpElements)
      fail("buffer " + std::to_string(info.id) + " is too large for the interpreter");
    if (info.offset >= 0)
      arenaSize = std::max(arenaSize, info.offset + info.elements * elemBytes(b->dtype().pointee()));
  }
  arena.assign(size_t(arenaSize), kPoison);
  for (const UOp *b : buffers) {
    BufferInfo info = readBuffer(b);
    DType e = b->dtype().pointee();
    size_t bytes = size_t(info.elements * elemBytes(e));
    if (info.offset >= 0) {
      base[b] = arena.data() + info.offset;
      continue;
    }
    std::vector<uint8_t> &mem = own[b];
    if (info.kind == "input" || info.kind == "weight" || info.kind == "variable") {
      auto it = leaves.find(info.name);
      if (it == leaves.end() || it->second.data.size() != bytes)
        fail("no data of the right size for " + info.kind + " \"" + info.name + "\"");
      mem = it->second.data;
    } else {
      mem.assign(bytes, kPoison);
    }
    base[b] = mem.data();
  }
  for (const UOp *call : orderCalls(root)) {
    std::vector<Memory> bound;
    for (size_t i = 1; i < call->numSrc(); ++i) {
      const UOp *b = call->src(i);
      BufferInfo info = readBuffer(b);
      std::string name = info.kind == "variable" ? info.name // define_var finds its value by name
                                                 : "buffer " + std::to_string(info.id) +
                                                       (info.name.empty() ? "" : " \"" + info.name + "\"");
      bound.push_back({base.at(b), info.elements, b->dtype().pointee(), name});
    }
    runKernel(call->src(0), bound);
  }
  for (const UOp *b : buffers) {
    BufferInfo info = readBuffer(b);
    if (info.kind != "output")
      continue;
    rt::Array a;
    a.type = *elemTypeOf(b->dtype().pointee());
    a.shape = info.shape;
    a.data.assign(base.at(b), base.at(b) + info.elements * elemBytes(b->dtype().pointee()));
    outputs[info.name] = std::move(a);
  }
}

} // namespace tgc::interp
