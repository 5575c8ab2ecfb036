//===- KernelEval.cpp - Executing kernel graphs -----------------*- C++ -*-===//
// Stores run once for every value of the loops around them; reduce folds its value over its own loops.
//===----------------------------------------------------------------------===//
//
// Semantics of a kernel graph (see docs/ops.md):
//  - sink(items...) runs its items in order; end(x, r...) runs x for every value of the ranges (first outermost);
//    a store runs for every value of the ranges its operands use that no enclosing end or reduce binds yet (in axis
//    id order); barrier/noop run their operands; endif(if(c, deps...)) runs deps where c is true.
//  - Values are evaluated with the current loop values; reduce(v, r...) folds v over every value of its ranges.
//  - index(b, i[, valid]) is a pointer; loads through an invalid one give the load's alt (or 0) and stores are
//    skipped. Every valid access is bounds-checked.

#include "Interp/Internal.h"

#include "IR/Eval.h"
#include "IR/UOp.h"
#include "Passes/Linearize.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tgc::interp {
namespace {

/// A value during kernel execution: lanes of data, or a pointer into a buffer.
struct Val {
  std::vector<Arg> lanes;
  int buffer = -1;
  int64_t offset = 0;
  bool valid = true;
};

using RangeSet = std::vector<const UOp *>; // sorted by axis id, then pointer-free structural order

bool rangeBefore(const UOp *a, const UOp *b) {
  int64_t ia = a->arg().isTuple() ? a->arg().getTuple()[0].getInt() : 0;
  int64_t ib = b->arg().isTuple() ? b->arg().getTuple()[0].getInt() : 0;
  if (ia != ib)
    return ia < ib;
  return UOp::structuralLess(a, b);
}

RangeSet merge(const RangeSet &a, const RangeSet &b) {
  RangeSet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), rangeBefore);
  return out;
}

RangeSet minus(const RangeSet &a, std::span<const UOp *const> drop) {
  RangeSet out;
  for (const UOp *r : a)
    if (std::find(drop.begin(), drop.end(), r) == drop.end())
      out.push_back(r);
  return out;
}

class Kernel {
public:
  Kernel(const UOp *sink, std::vector<Memory> &buffers) : sink_(sink), buffers_(buffers) {
    for (const UOp *u : toposort(sink))
      computeFree(u);
  }

  void run() {
    Env env;
    exec(sink_, env);
  }

  /// Run a linearized kernel: a small machine over the list, loops by jumping back from `end` to after `range`.
  void runLinear(const UOp *linear) {
    Env env;
    Memo memo;
    std::vector<std::pair<const UOp *, size_t>> loops; // range, its position
    auto list = linear->src();
    for (size_t pc = 0; pc < list.size(); ++pc) {
      const UOp *u = list[pc];
      switch (u->op()) {
      case Op::Range: {
        int64_t n = eval(u->src(0), env, memo).lanes[0].getInt();
        if (n <= 0) {
          pc = matchingEnd(list, pc);
          continue;
        }
        env[u] = 0;
        memo.values[u] = scalar(fromInt(0, u->dtype()));
        loops.emplace_back(u, pc);
        continue;
      }
      case Op::End: {
        if (loops.empty() || loops.back().first != u->src(1))
          fail(where(u) + " closes a loop that is not the innermost open one");
        const UOp *r = u->src(1);
        int64_t next = env[r] + 1;
        if (next < eval(r->src(0), env, memo).lanes[0].getInt()) {
          env[r] = next;
          memo.values[r] = scalar(fromInt(next, r->dtype()));
          pc = loops.back().second;
          continue;
        }
        env.erase(r);
        loops.pop_back();
        continue;
      }
      case Op::Store:
        storeWith(u, env, memo);
        continue;
      case Op::Sink:
      case Op::Barrier:
        continue;
      default:
        memo.values[u] = compute(u, env, memo);
      }
    }
    if (!loops.empty())
      fail(where(loops.back().first) + " is never closed");
  }

private:
  using Env = std::unordered_map<const UOp *, int64_t>;

  /// Ranges a node's value depends on that nothing inside it binds.
  void computeFree(const UOp *u) {
    RangeSet f;
    if (u->op() == Op::Range || u->op() == Op::Special)
      f.push_back(u);
    for (const UOp *s : u->src())
      f = merge(f, free_.at(s));
    if (u->op() == Op::Reduce || u->op() == Op::End)
      f = minus(f, u->src().subspan(1));
    free_[u] = f;
  }

  /// Run an effect (store, end, barrier, if, sink) in the loop environment `env`.
  void exec(const UOp *u, Env &env) {
    switch (u->op()) {
    case Op::Sink:
    case Op::Barrier:
    case Op::Noop:
      for (const UOp *s : u->src())
        exec(s, env);
      return;
    case Op::End:
      loop(u->src().subspan(1), env, [&](Env &e) { exec(u->src(0), e); });
      return;
    case Op::Endif:
      exec(u->src(0), env);
      return;
    case Op::If: {
      RangeSet open = unbound(free_.at(u->src(0)), env);
      loop(open, env, [&](Env &e) {
        Memo memo;
        if (eval(u->src(0), e, memo).lanes[0].getBool())
          for (const UOp *s : u->src().subspan(1))
            exec(s, e);
      });
      return;
    }
    case Op::Store:
      loop(unbound(free_.at(u), env), env, [&](Env &e) { store(u, e); });
      return;
    default:
      return; // values (define_global, ...) listed in a sink do nothing
    }
  }

  RangeSet unbound(const RangeSet &rs, const Env &env) {
    RangeSet out;
    for (const UOp *r : rs)
      if (!env.count(r))
        out.push_back(r);
    return out;
  }

  template <typename F> void loop(std::span<const UOp *const> ranges, Env &env, F body) {
    if (ranges.empty()) {
      body(env);
      return;
    }
    const UOp *r = ranges[0];
    Memo memo;
    Val end = eval(r->src(0), env, memo);
    int64_t n = end.lanes[0].getInt();
    for (int64_t i = 0; i < n; ++i) {
      env[r] = i;
      loop(ranges.subspan(1), env, body);
    }
    env.erase(r);
  }

  struct Memo {
    std::unordered_map<const UOp *, Val> values;
  };

  void store(const UOp *u, Env &env) {
    Memo memo;
    storeWith(u, env, memo);
  }

  void storeWith(const UOp *u, Env &env, Memo &memo) {
    Val p = eval(u->src(0), env, memo);
    if (u->numSrc() == 3 && !eval(u->src(2), env, memo).lanes[0].getBool())
      return;
    if (!p.valid)
      return;
    Val v = eval(u->src(1), env, memo);
    Memory &m = checked(p, u);
    for (size_t l = 0; l < v.lanes.size(); ++l)
      writeElem(m.data + (p.offset + int64_t(l)) * elemBytes(m.elem), m.elem, v.lanes[l]);
  }

  size_t matchingEnd(std::span<const UOp *const> list, size_t pc) {
    for (size_t i = pc + 1; i < list.size(); ++i)
      if (list[i]->op() == Op::End && list[i]->src(1) == list[pc])
        return i;
    fail(where(list[pc]) + " has no end");
  }

  /// Registers and local buffers live as long as the kernel run.
  int registerBuffer(const UOp *u) {
    auto it = regIndex_.find(u);
    if (it != regIndex_.end())
      return it->second;
    int64_t n = u->arg().getTuple()[1].getInt();
    DType e = u->dtype().pointee();
    regStore_.push_back(std::vector<uint8_t>(size_t(n * elemBytes(e)), 0x7f));
    buffers_.push_back({regStore_.back().data(), n * e.lanes(), e.element(), "register " + std::to_string(u->arg().getTuple()[0].getInt())});
    int idx = int(buffers_.size() - 1);
    regIndex_.emplace(u, idx);
    return idx;
  }

  Memory &checked(const Val &p, const UOp *u) {
    if (p.buffer < 0 || size_t(p.buffer) >= buffers_.size())
      fail(where(u) + " uses a buffer that was not bound");
    Memory &m = buffers_[size_t(p.buffer)];
    int64_t lanes = u->op() == Op::Load ? u->dtype().lanes() : u->src(1)->dtype().lanes();
    if (p.offset < 0 || p.offset + lanes > m.count)
      fail(where(u) + " accesses element " + std::to_string(p.offset) + " of " + m.name + ", which has " +
           std::to_string(m.count));
    return m;
  }

  Val eval(const UOp *u, Env &env, Memo &memo) {
    auto it = memo.values.find(u);
    if (it != memo.values.end())
      return it->second;
    Val v = compute(u, env, memo);
    memo.values.emplace(u, v);
    return v;
  }

  Val scalar(Arg a) { return Val{{std::move(a)}}; }

  Val compute(const UOp *u, Env &env, Memo &memo) {
    switch (u->op()) {
    case Op::Const:
      return scalar(u->arg());
    case Op::Range:
    case Op::Special: {
      auto it = env.find(u);
      if (it == env.end())
        fail(where(u) + " is used outside its loop");
      return scalar(fromInt(it->second, u->dtype()));
    }
    case Op::DefineGlobal: {
      Val p;
      p.buffer = int(u->arg().getInt());
      return p;
    }
    case Op::Index:
      return index(u, env, memo);
    case Op::Load:
      return load(u, env, memo);
    case Op::Reduce:
      return reduce(u, env);
    case Op::Vectorize: {
      Val v;
      for (const UOp *s : u->src())
        v.lanes.push_back(eval(s, env, memo).lanes[0]);
      return v;
    }
    case Op::Gep: {
      Val x = eval(u->src(0), env, memo);
      Val v;
      for (int64_t l : u->arg().intTuple())
        v.lanes.push_back(x.lanes[size_t(l)]);
      return v;
    }
    case Op::Noop:
    case Op::After:
      return u->numSrc() ? eval(u->src(0), env, memo) : Val{};
    case Op::DefineReg:
    case Op::DefineLocal: {
      Val p;
      p.buffer = registerBuffer(u);
      return p;
    }
    default:
      break;
    }
    if (group::elementwise().contains(u->op()))
      return alu(u, env, memo);
    fail(where(u) + " cannot be evaluated in a kernel");
  }

  Val index(const UOp *u, Env &env, Memo &memo) {
    Val p = eval(u->src(0), env, memo);
    Val i = eval(u->src(1), env, memo);
    p.offset += i.lanes[0].getInt();
    if (u->numSrc() == 3)
      p.valid = p.valid && eval(u->src(2), env, memo).lanes[0].getBool();
    return p;
  }

  Val load(const UOp *u, Env &env, Memo &memo) {
    Val p = eval(u->src(0), env, memo);
    bool gated = u->numSrc() == 3;
    if ((gated && !eval(u->src(2), env, memo).lanes[0].getBool()) || !p.valid) {
      if (gated)
        return eval(u->src(1), env, memo);
      Val zero;
      zero.lanes.assign(u->dtype().lanes(), fromInt(0, u->dtype().element()));
      return zero;
    }
    Memory &m = checked(p, u);
    Val v;
    for (int64_t l = 0; l < u->dtype().lanes(); ++l)
      v.lanes.push_back(readElem(m.data + (p.offset + l) * elemBytes(m.elem), m.elem));
    return v;
  }

  Arg identity(Op op, DType d) {
    if (op == Op::Add)
      return fromInt(0, d);
    if (op == Op::Mul)
      return fromInt(1, d);
    return d.isFloat() ? Arg(-std::numeric_limits<double>::infinity()) : Arg(dtypeMin(d));
  }

  /// Fold the value over every value of the reduce's ranges, each iteration with a fresh memo.
  Val reduce(const UOp *u, Env &env) {
    Op op = u->arg().getOp();
    DType e = u->dtype().element();
    Val acc;
    acc.lanes.assign(u->dtype().lanes(), identity(op, e));
    loop(u->src().subspan(1), env, [&](Env &inner) {
      Memo memo;
      Val v = eval(u->src(0), inner, memo);
      for (size_t l = 0; l < acc.lanes.size(); ++l) {
        Arg pair[2] = {acc.lanes[l], v.lanes[l]};
        acc.lanes[l] = *evalAlu(op, e, e, pair);
      }
    });
    return acc;
  }

  Val alu(const UOp *u, Env &env, Memo &memo) {
    std::vector<Val> src;
    for (const UOp *s : u->src())
      src.push_back(eval(s, env, memo));
    DType in = (u->op() == Op::Where ? u->src(1) : u->src(0))->dtype().element();
    DType out = u->dtype().element();
    Val v;
    std::vector<Arg> args(src.size());
    for (size_t l = 0; l < src[u->op() == Op::Where ? 1 : 0].lanes.size(); ++l) {
      for (size_t k = 0; k < src.size(); ++k)
        args[k] = src[k].lanes[src[k].lanes.size() == 1 ? 0 : l];
      std::optional<Arg> r;
      if (u->op() == Op::Cast)
        r = evalCast(args[0], in, out);
      else if (u->op() == Op::Bitcast)
        r = evalBitcast(args[0], in, out);
      else
        r = evalAlu(u->op(), out, in, args);
      if (!r)
        fail("undefined result of " + where(u) + " on " + args[0].str() +
             (args.size() > 1 ? ", " + args[1].str() : ""));
      v.lanes.push_back(*r);
    }
    return v;
  }

  const UOp *sink_;
  std::vector<Memory> &buffers_;
  std::unordered_map<const UOp *, RangeSet> free_;
  std::deque<std::vector<uint8_t>> regStore_;
  std::unordered_map<const UOp *, int> regIndex_;
};

bool needsLinearOrder(const UOp *sink) {
  for (const UOp *u : toposort(sink))
    if (u->op() == Op::After || u->op() == Op::DefineReg || u->op() == Op::DefineLocal)
      return true;
  return false;
}

} // namespace

void runKernel(const UOp *kernel, std::vector<Memory> &buffers) {
  std::vector<Memory> bound = buffers; // registers get appended for this run only
  if (kernel->op() == Op::Linear) {
    Kernel(kernel, bound).runLinear(kernel);
  } else if (needsLinearOrder(kernel)) {
    // accumulators and orderings have their meaning in the linear order: run the linearized kernel
    const UOp *linear = linearizeKernel(kernel);
    Kernel(linear, bound).runLinear(linear);
  } else {
    Kernel(kernel, bound).run();
  }
}

int64_t kernelBufferSize(const UOp *sink, int64_t slot) {
  int64_t size = 0;
  for (const UOp *u : toposort(sink)) {
    if (u->op() != Op::Index || u->src(0)->op() != Op::DefineGlobal || u->src(0)->arg().getInt() != slot)
      continue;
    if (!u->src(1)->hasRange())
      fail(where(u) + " has an index of unknown range, so its buffer's size is unknown");
    size = std::max(size, u->src(1)->vmax() + u->dtype().lanes());
  }
  return size;
}

} // namespace tgc::interp
