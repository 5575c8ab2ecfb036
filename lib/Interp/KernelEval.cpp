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
// A kernel after lower-reduce (accumulators, `after`) has its meaning in the linear order: it is linearized and
// run as a list, where `range` starts a loop and `end` jumps back.
//
// Speed without changing meaning: nodes are numbered densely, and a computed value is reused until one of the
// ranges it depends on takes a new value (or, for values that read memory, until the next store).

#include "Interp/Internal.h"

#include "IR/Eval.h"
#include "IR/TensorCore.h"
#include "IR/UOp.h"
#include "Passes/Linearize.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

namespace tgc::interp {
namespace {

/// A value during kernel execution: lanes of data, or a pointer into a buffer.
struct Val {
  Arg scalar;            // lane 0
  std::vector<Arg> more; // lanes 1.. of a vector
  int buffer = -1;
  int64_t offset = 0;
  bool valid = true;

  size_t lanes() const { return 1 + more.size(); }
  const Arg &lane(size_t l) const { return l == 0 ? scalar : more[l - 1]; }
  void push(Arg a) {
    if (buffer < 0 && scalar.isNone() && more.empty())
      scalar = std::move(a);
    else
      more.push_back(std::move(a));
  }
};

bool rangeBefore(const UOp *a, const UOp *b) {
  int64_t ia = a->arg().isTuple() ? a->arg().getTuple()[0].getInt() : 0;
  int64_t ib = b->arg().isTuple() ? b->arg().getTuple()[0].getInt() : 0;
  if (ia != ib)
    return ia < ib;
  return UOp::structuralLess(a, b);
}

/// D = A * B + C of one warp from the fragments of its lanes (tc's layout): each D element is C plus the exact sum of
/// the products, rounded to f32 once.
std::vector<Val> warpMma(const TensorCore &tc, const std::vector<Val> &a, const std::vector<Val> &b,
                         const std::vector<Val> &c) {
  std::vector<double> A(size_t(tc.m * tc.k)), B(size_t(tc.k * tc.n)), C(size_t(tc.m * tc.n));
  for (int l = 0; l < tc.warp; ++l) {
    for (int j = 0; j < tc.aElems; ++j)
      A[size_t(tc.a(j).first.at(l) * tc.k + tc.a(j).second.at(l))] = toDouble(a[size_t(l)].lane(size_t(j)));
    for (int j = 0; j < tc.bElems; ++j)
      B[size_t(tc.b(j).first.at(l) * tc.n + tc.b(j).second.at(l))] = toDouble(b[size_t(l)].lane(size_t(j)));
    for (int j = 0; j < tc.cElems; ++j)
      C[size_t(tc.c(j).first.at(l) * tc.n + tc.c(j).second.at(l))] = toDouble(c[size_t(l)].lane(size_t(j)));
  }
  std::vector<Val> d(size_t(tc.warp));
  for (int l = 0; l < tc.warp; ++l) {
    for (int j = 0; j < tc.cElems; ++j) {
      int row = tc.c(j).first.at(l), col = tc.c(j).second.at(l);
      double sum = C[size_t(row * tc.n + col)];
      for (int kk = 0; kk < tc.k; ++kk)
        sum += A[size_t(row * tc.k + kk)] * B[size_t(kk * tc.n + col)];
      d[size_t(l)].push(fromDouble(sum, dt::F32));
    }
  }
  return d;
}

/// The tensor core of a wmma node, and its lane operand checked: a range or launch index counting the warp.
const TensorCore &wmmaShape(const UOp *u) {
  const TensorCore *tc = findTensorCore(u->arg().getString());
  const UOp *lane = u->src(3);
  bool counts = (lane->op() == Op::Range || lane->op() == Op::Special) && lane->src(0)->isConst() &&
                lane->src(0)->constInt() == tc->warp;
  if (!counts)
    fail(where(u) + " needs a lane operand that is a range or launch index of " + std::to_string(tc->warp) + " values");
  return *tc;
}

/// A define_var's value: the bound memory of its name, one i64 (Interpreter.cpp's kernel signature).
int64_t variableIn(const UOp *var, const std::vector<Memory> &buffers) {
  for (const Memory &m : buffers) {
    if (m.name != var->arg().getTuple()[0].getString() || m.count != 1 || m.elem != dt::I64)
      continue;
    int64_t v = 0;
    std::memcpy(&v, m.data, sizeof v);
    return v;
  }
  fail(where(var) + " has no value");
}

class Kernel {
public:
  int64_t variable(const UOp *u) { return variableIn(u, buffers_); }

  Kernel(const UOp *root, std::vector<Memory> &buffers) : buffers_(buffers) {
    nodes_ = toposort(root);
    size_t n = nodes_.size();
    for (size_t i = 0; i < n; ++i)
      index_[nodes_[i]] = int(i);
    src_.resize(n);
    free_.resize(n);
    readsMemory_.assign(n, 0);
    for (size_t i = 0; i < n; ++i)
      analyze(int(i));
    value_.resize(n);
    stamp_.assign(n, 0);
    changed_.assign(n, 0);
    rangeValue_.assign(n, 0);
    bound_.assign(n, 0);
  }

  /// Run a kernel sink: its effects, recursively.
  void runGraph() { exec(int(nodes_.size()) - 1); }

  /// Run the effects node u depends on (the stores before a barrier).
  void runEffects(const UOp *u) { exec(index_.at(u)); }

  /// Run a linearized kernel: a small machine over the list, loops by jumping back from `end` to after `range`.
  void runLinear(const UOp *linear) {
    start(linear);
    if (resume())
      fail(where(atWmma() ? list_[pc_] : list_[pc_ - 1]) + " is " + (atWmma() ? "a wmma" : "a barrier") +
           ", but the kernel is not run as a launch of work-items");
  }

  /// Begin a run of a linearized kernel from its first op (values of an earlier run are forgotten).
  void start(const UOp *linear) {
    linear_ = true;
    list_ = linear->src();
    pc_ = 0;
    loops_.clear();
    std::fill(stamp_.begin(), stamp_.end(), 0);
    std::fill(bound_.begin(), bound_.end(), 0);
    for (auto &[special, value] : launch_)
      bind(special, value);
  }

  /// Run until a barrier (true: stopped just after it) or the end of the list (false).
  bool resume() {
    for (; pc_ < list_.size(); ++pc_) {
      size_t pc = pc_;
      int i = index_.at(list_[pc]);
      const UOp *u = nodes_[size_t(i)];
      switch (u->op()) {
      case Op::Range: {
        if (bound(value(src_[size_t(i)][0])) <= 0) {
          pc_ = matchingEnd(list_, pc);
          continue;
        }
        bind(i, 0);
        loops_.emplace_back(i, pc);
        continue;
      }
      case Op::End: {
        int r = index_.at(u->src(1));
        if (loops_.empty() || loops_.back().first != r)
          fail(where(u) + " closes a loop that is not the innermost open one");
        int64_t next = rangeValue_[size_t(r)] + 1;
        if (next < bound(value(src_[size_t(r)][0]))) {
          bind(r, next);
          pc_ = loops_.back().second;
          continue;
        }
        bound_[size_t(r)] = 0;
        loops_.pop_back();
        continue;
      }
      case Op::Store: store(i); continue;
      case Op::Barrier:
        if (!loops_.empty())
          fail(where(u) + " is inside the loop of " + where(nodes_[size_t(loops_.back().first)]));
        ++pc_;
        return true;
      case Op::Wmma: // the launch computes it for the whole warp (finishWmma)
        return true;
      case Op::Sink: continue;
      case Op::Noop:
        if (u->dtype().isVoid())
          continue; // a group of effects, each run where the list has it
        [[fallthrough]];
      default: value_[size_t(i)] = compute(i); stamp_[size_t(i)] = ++clock_;
      }
    }
    if (!loops_.empty())
      fail(where(nodes_[size_t(loops_.back().first)]) + " is never closed");
    return false;
  }

  /// Where the machine stopped (the op after the last barrier it passed, or the wmma it waits at).
  size_t position() const { return pc_; }

  /// Is the machine stopped at a wmma, waiting for the other lanes of its warp?
  bool atWmma() const { return pc_ < list_.size() && list_[pc_]->op() == Op::Wmma; }
  /// The wmma the machine waits at.
  const UOp *wmmaNode() const { return list_[pc_]; }
  /// Operand k of the wmma the machine waits at.
  Val wmmaOperand(size_t k) { return value(src_[size_t(index_.at(list_[pc_]))][k]); }
  /// Give the wmma the machine waits at its value and go past it.
  void finishWmma(Val v) {
    int i = index_.at(list_[pc_]);
    value_[size_t(i)] = std::move(v);
    stamp_[size_t(i)] = ++clock_;
    ++pc_;
  }

  /// The launch index values this work-item runs with (special node -> value), bound at every start.
  void setLaunch(const std::vector<std::pair<const UOp *, int64_t>> &values) {
    launch_.clear();
    for (auto &[u, v] : values)
      if (auto it = index_.find(u); it != index_.end())
        launch_.emplace_back(it->second, v);
  }

  /// Bind the launch indices for a run of the kernel's graph (runGraph).
  void bindLaunch() {
    for (auto &[special, value] : launch_)
      bind(special, value);
  }

  /// Local buffers shared by the work-items of a group: define_local -> memory.
  void shareLocals(std::unordered_map<const UOp *, Memory> *locals) { locals_ = locals; }

private:
  void analyze(int i) {
    const UOp *u = nodes_[size_t(i)];
    std::vector<int> f;
    if (u->op() == Op::Range || u->op() == Op::Special)
      f.push_back(i);
    bool mem = u->op() == Op::Load;
    for (const UOp *s : u->src()) {
      int si = index_.at(s);
      src_[size_t(i)].push_back(si);
      f.insert(f.end(), free_[size_t(si)].begin(), free_[size_t(si)].end());
      mem = mem || readsMemory_[size_t(si)];
    }
    if (u->op() == Op::Reduce || u->op() == Op::End)
      for (size_t k = 1; k < u->numSrc(); ++k)
        std::erase(f, index_.at(u->src(k)));
    auto before = [&](int a, int b) { return rangeBefore(nodes_[size_t(a)], nodes_[size_t(b)]); };
    std::sort(f.begin(), f.end(), before);
    f.erase(std::unique(f.begin(), f.end()), f.end());
    free_[size_t(i)] = std::move(f);
    readsMemory_[size_t(i)] = mem;
  }

  // --- values -----------------------------------------------------------------------------------------------------

  const Val &value(int i) {
    if (linear_) {
      if (!stamp_[size_t(i)])
        fail(where(nodes_[size_t(i)]) + " is used before it is computed");
      return value_[size_t(i)];
    }
    if (!fresh(i)) {
      Val v = compute(i);
      value_[size_t(i)] = std::move(v);
      stamp_[size_t(i)] = ++clock_;
    }
    return value_[size_t(i)];
  }

  /// Is the cached value still right: computed after its ranges last changed (and after the last store)?
  bool fresh(int i) {
    uint64_t s = stamp_[size_t(i)];
    if (s == 0 || (readsMemory_[size_t(i)] && lastStore_ >= s))
      return false;
    for (int r : free_[size_t(i)])
      if (changed_[size_t(r)] >= s)
        return false;
    return true;
  }

  void bind(int r, int64_t v) {
    rangeValue_[size_t(r)] = v;
    bound_[size_t(r)] = 1;
    changed_[size_t(r)] = ++clock_;
    value_[size_t(r)] = scalar(fromInt(v, nodes_[size_t(r)]->dtype()));
    stamp_[size_t(r)] = ++clock_;
  }

  int64_t bound(const Val &v) { return v.scalar.getInt(); }

  static Val scalar(Arg a) {
    Val v;
    v.scalar = std::move(a);
    return v;
  }

  Val compute(int i) {
    const UOp *u = nodes_[size_t(i)];
    const std::vector<int> &s = src_[size_t(i)];
    switch (u->op()) {
    case Op::Const: {
      Val v = scalar(u->arg());
      for (uint16_t l = 1; l < u->dtype().lanes(); ++l)
        v.push(u->arg());
      return v;
    }
    case Op::Range:
    case Op::Special:
      if (!bound_[size_t(i)])
        fail(where(u) + " is used outside its loop");
      return scalar(fromInt(rangeValue_[size_t(i)], u->dtype()));
    case Op::DefineGlobal: {
      Val p;
      p.buffer = int(u->arg().getInt());
      return p;
    }
    case Op::DefineVar: return scalar(fromInt(variable(u), u->dtype()));
    case Op::DefineReg:
    case Op::DefineLocal: {
      Val p;
      p.buffer = registerBuffer(u);
      return p;
    }
    case Op::Index: {
      Val p = value(s[0]);
      p.offset += value(s[1]).scalar.getInt();
      if (s.size() == 3)
        p.valid = p.valid && value(s[2]).scalar.getBool();
      return p;
    }
    case Op::Load: return load(i);
    case Op::Reduce: return reduce(i);
    case Op::Wmma: return wmma(i);
    case Op::Vectorize: {
      Val v;
      for (int k : s)
        v.push(value(k).scalar);
      return v;
    }
    case Op::Gep: {
      const Val &x = value(s[0]);
      Val v;
      for (int64_t l : u->arg().intTuple())
        v.push(x.lane(size_t(l)));
      return v;
    }
    case Op::Noop:
    case Op::After: return s.empty() ? Val{} : value(s[0]);
    default: break;
    }
    if (group::elementwise().contains(u->op()))
      return alu(i);
    fail(where(u) + " cannot be evaluated in a kernel");
  }

  Val load(int i) {
    const UOp *u = nodes_[size_t(i)];
    const std::vector<int> &s = src_[size_t(i)];
    Val p = value(s[0]);
    bool gated = s.size() == 3;
    if ((gated && !value(s[2]).scalar.getBool()) || !p.valid) {
      if (gated)
        return value(s[1]);
      Val zero;
      for (uint16_t l = 0; l < u->dtype().lanes(); ++l)
        zero.push(fromInt(0, u->dtype().element()));
      return zero;
    }
    Memory &m = checked(p, u, u->dtype().lanes());
    Val v;
    for (int64_t l = 0; l < u->dtype().lanes(); ++l)
      v.push(readElem(m.data + (p.offset + l) * elemBytes(m.elem), m.elem));
    return v;
  }

  Val reduce(int i) {
    const UOp *u = nodes_[size_t(i)];
    Op op = u->arg().getOp();
    DType e = u->dtype().element();
    std::vector<Arg> acc(u->dtype().lanes(), reduceIdentity(op, e));
    std::vector<int> ranges(src_[size_t(i)].begin() + 1, src_[size_t(i)].end());
    bool empty = true;
    loop(ranges, 0, [&] {
      empty = false;
      const Val &v = value(src_[size_t(i)][0]);
      for (size_t l = 0; l < acc.size(); ++l) {
        Arg pair[2] = {acc[l], v.lane(l)};
        acc[l] = *evalAlu(op, e, e, pair);
      }
    });
    Val out;
    for (Arg &a : acc)
      out.push(empty ? emptyReduceValue(op, e) : std::move(a));
    return out;
  }

  /// A wmma in a kernel graph: the operands of the other lanes are this node's operands with the lane index set to
  /// their lane (graphs keep no state per work-item, so that is what the other lanes hold). A warp's result is
  /// kept for its other lanes, keyed by the other ranges' values (and, when the operands read memory the kernel
  /// writes, by the last store).
  Val wmma(int i) {
    const UOp *u = nodes_[size_t(i)];
    const std::vector<int> &s = src_[size_t(i)];
    const TensorCore &tc = wmmaShape(u);
    int lane = s[3];
    int64_t mine = bound(value(lane));
    WarpCache &cache = warps_[i];
    if (cache.readsOwnStores < 0)
      cache.readsOwnStores = readsOwnStores(u);
    std::vector<int64_t> key = {cache.readsOwnStores ? int64_t(lastStore_) : 0};
    for (int r : free_[size_t(i)])
      if (r != lane)
        key.push_back(rangeValue_[size_t(r)]);
    if (auto hit = cache.results.find(key); hit != cache.results.end())
      return hit->second[size_t(mine)];
    std::vector<Val> a(size_t(tc.warp)), b(size_t(tc.warp)), c(size_t(tc.warp));
    for (int l = 0; l < tc.warp; ++l) {
      bind(lane, l);
      a[size_t(l)] = value(s[0]);
      b[size_t(l)] = value(s[1]);
      c[size_t(l)] = value(s[2]);
    }
    bind(lane, mine);
    if (cache.results.size() >= 4096) // the lanes of a warp come one after the other: older warps are done
      cache.results.clear();
    return cache.results.emplace(std::move(key), warpMma(tc, a, b, c)).first->second[size_t(mine)];
  }

  /// Do the operands of u load from memory that the kernel stores to?
  bool readsOwnStores(const UOp *u) {
    std::vector<const UOp *> stored, loaded;
    auto memoryOf = [](const UOp *access) {
      const UOp *p = access->src(0);
      while (p->op() == Op::Index || p->op() == Op::After)
        p = p->src(0);
      return p;
    };
    for (const UOp *n : nodes_)
      if (n->op() == Op::Store)
        stored.push_back(memoryOf(n));
    for (const UOp *n : toposort(u))
      if (n->op() == Op::Load)
        loaded.push_back(memoryOf(n));
    for (const UOp *l : loaded)
      if (std::find(stored.begin(), stored.end(), l) != stored.end())
        return true;
    return false;
  }

  Val alu(int i) {
    const UOp *u = nodes_[size_t(i)];
    const std::vector<int> &s = src_[size_t(i)];
    DType in = (u->op() == Op::Where ? u->src(1) : u->src(0))->dtype().element();
    DType out = u->dtype().element();
    size_t lanes = u->dtype().lanes();
    Arg args[3];
    Val v;
    for (size_t l = 0; l < lanes; ++l) {
      for (size_t k = 0; k < s.size(); ++k) {
        const Val &x = value(s[k]);
        args[k] = x.lane(x.lanes() == 1 ? 0 : l);
      }
      std::span<const Arg> a(args, s.size());
      std::optional<Arg> r;
      if (u->op() == Op::Cast)
        r = evalCast(a[0], in, out);
      else if (u->op() == Op::Bitcast)
        r = evalBitcast(a[0], in, out);
      else
        r = evalAlu(u->op(), out, in, a);
      if (!r)
        fail("undefined result of " + where(u) + " on " + a[0].str() + (a.size() > 1 ? ", " + a[1].str() : ""));
      v.push(std::move(*r));
    }
    return v;
  }

  // --- effects ----------------------------------------------------------------------------------------------------

  void exec(int i) {
    const UOp *u = nodes_[size_t(i)];
    const std::vector<int> &s = src_[size_t(i)];
    switch (u->op()) {
    case Op::Sink:
    case Op::Barrier:
    case Op::Noop:
      for (int k : s)
        exec(k);
      return;
    case Op::End: {
      std::vector<int> ranges(s.begin() + 1, s.end());
      loop(ranges, 0, [&] { exec(s[0]); });
      return;
    }
    case Op::Endif: exec(s[0]); return;
    case Op::If:
      loop(unbound(free_[size_t(s[0])]), 0, [&] {
        if (value(s[0]).scalar.getBool())
          for (size_t k = 1; k < s.size(); ++k)
            exec(s[k]);
      });
      return;
    case Op::Store: loop(unbound(free_[size_t(i)]), 0, [&] { store(i); }); return;
    default: return; // values (define_global, ...) listed in a sink do nothing
    }
  }

  std::vector<int> unbound(const std::vector<int> &rs) {
    std::vector<int> out;
    for (int r : rs)
      if (!bound_[size_t(r)])
        out.push_back(r);
    return out;
  }

  template <typename F> void loop(const std::vector<int> &ranges, size_t k, F body) {
    if (k == ranges.size()) {
      body();
      return;
    }
    int r = ranges[k];
    int64_t n = bound(value(src_[size_t(r)][0]));
    for (int64_t v = 0; v < n; ++v) {
      bind(r, v);
      loop(ranges, k + 1, body);
    }
    bound_[size_t(r)] = 0;
    changed_[size_t(r)] = ++clock_;
  }

  void store(int i) {
    const UOp *u = nodes_[size_t(i)];
    const std::vector<int> &s = src_[size_t(i)];
    Val p = value(s[0]);
    if (s.size() == 3 && !value(s[2]).scalar.getBool())
      return;
    if (!p.valid)
      return;
    const Val &v = value(s[1]);
    Memory &m = checked(p, u, int64_t(v.lanes()));
    for (size_t l = 0; l < v.lanes(); ++l)
      writeElem(m.data + (p.offset + int64_t(l)) * elemBytes(m.elem), m.elem, v.lane(l));
    lastStore_ = ++clock_;
  }

  Memory &checked(const Val &p, const UOp *u, int64_t lanes) {
    if (p.buffer < 0 || size_t(p.buffer) >= buffers_.size())
      fail(where(u) + " uses a buffer that was not bound");
    Memory &m = buffers_[size_t(p.buffer)];
    if (p.offset < 0 || p.offset + lanes > m.count)
      fail(where(u) + " accesses element " + std::to_string(p.offset) + " of " + m.name + ", which has " +
           std::to_string(m.count));
    return m;
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
    bool local = u->op() == Op::DefineLocal;
    std::string name = (local ? "local buffer " : "register ") + std::to_string(u->arg().getTuple()[0].getInt());
    if (local && locals_) {
      auto [at, fresh] = locals_->try_emplace(u, Memory{});
      if (fresh) {
        regStore_.push_back(std::vector<uint8_t>(size_t(n * elemBytes(e)), 0x7f));
        at->second = {regStore_.back().data(), n * e.lanes(), e.element(), name};
      }
      buffers_.push_back(at->second);
    } else {
      regStore_.push_back(std::vector<uint8_t>(size_t(n * elemBytes(e)), 0x7f));
      buffers_.push_back({regStore_.back().data(), n * e.lanes(), e.element(), name});
    }
    int idx = int(buffers_.size() - 1);
    regIndex_.emplace(u, idx);
    return idx;
  }

  std::vector<Memory> &buffers_;
  std::vector<const UOp *> nodes_;
  std::unordered_map<const UOp *, int> index_;
  std::vector<std::vector<int>> src_;
  std::vector<std::vector<int>> free_;
  std::vector<char> readsMemory_;
  std::vector<Val> value_;
  std::vector<uint64_t> stamp_;
  std::vector<uint64_t> changed_;
  std::vector<int64_t> rangeValue_;
  std::vector<char> bound_;
  uint64_t clock_ = 1;
  uint64_t lastStore_ = 0;
  bool linear_ = false;
  std::span<const UOp *const> list_;
  size_t pc_ = 0;
  std::vector<std::pair<int, size_t>> loops_; // open loops: range, its position
  std::vector<std::pair<int, int64_t>> launch_;
  struct WarpCache {
    int readsOwnStores = -1; // unknown yet
    /// the other ranges' values (and the last store, if it matters) -> each lane's result
    std::map<std::vector<int64_t>, std::vector<Val>> results;
  };
  std::unordered_map<int, WarpCache> warps_; // wmma node -> the warps computed so far
  std::unordered_map<const UOp *, Memory> *locals_ = nullptr;
  std::deque<std::vector<uint8_t>> regStore_;
  std::unordered_map<const UOp *, int> regIndex_;
};

/// Accumulators (define_reg, after lower-reduce) have their meaning in the linear order.
bool needsLinearOrder(const UOp *sink) {
  for (const UOp *u : toposort(sink))
    if (u->op() == Op::DefineReg)
      return true;
  return false;
}

/// The launch of a GPU kernel: its special nodes and their extents, work-group indices then work-item indices.
struct Launch {
  std::vector<const UOp *> groupIdx, localIdx; // by dimension
  std::map<const UOp *, int64_t> extent;       // of each launch index
  int64_t groups = 1, items = 1;
};

Launch launchOf(const UOp *kernel, const std::vector<Memory> &buffers) {
  Launch l;
  for (const UOp *u : toposort(kernel)) {
    if (u->op() != Op::Special)
      continue;
    const std::string &name = u->arg().getString();
    const UOp *n = u->src(0);
    bool known = n->isConst() || n->op() == Op::DefineVar; // a grid dimension may run to a variable
    int64_t size = !known ? -1 : n->isConst() ? n->constInt() : variableIn(n, buffers);
    if (size < 0)
      fail(where(u) + " needs a constant (or variable), non-negative extent");
    l.extent[u] = size;
    bool local = name.rfind("lidx", 0) == 0;
    if (!local && name.rfind("gidx", 0) != 0)
      fail(where(u) + " names launch index '" + name + "', which is neither gidxN nor lidxN");
    (local ? l.localIdx : l.groupIdx).push_back(u);
  }
  auto byName = [](const UOp *a, const UOp *b) { return a->arg().getString() < b->arg().getString(); };
  std::sort(l.groupIdx.begin(), l.groupIdx.end(), byName);
  std::sort(l.localIdx.begin(), l.localIdx.end(), byName);
  for (const UOp *u : l.groupIdx)
    l.groups *= l.extent.at(u);
  for (const UOp *u : l.localIdx)
    l.items *= l.extent.at(u);
  return l;
}

/// Index values of flat position `flat` over the extents of `idx` (the first fastest, like dimension x).
void unflatten(int64_t flat, const std::vector<const UOp *> &idx, const Launch &l,
               std::vector<std::pair<const UOp *, int64_t>> &out) {
  for (const UOp *u : idx) {
    int64_t n = l.extent.at(u);
    out.emplace_back(u, flat % n);
    flat /= n;
  }
}

std::string describe(const std::vector<std::pair<const UOp *, int64_t>> &values) {
  std::string s;
  for (auto &[u, v] : values)
    s += (s.empty() ? "" : ", ") + u->arg().getString() + "=" + std::to_string(v);
  return s;
}

/// Every work-item waits at the same wmma: compute it for each warp (32 consecutive work-items, their lane
/// operands 0..31) and let them go on.
template <typename At> void warpMmas(std::vector<std::unique_ptr<Kernel>> &items, const Launch &l, int64_t g, At &at) {
  const TensorCore &tc = wmmaShape(items[0]->wmmaNode());
  if (l.items % tc.warp != 0)
    fail("a wmma needs whole warps: " + std::to_string(l.items) + " work-items per group");
  for (int64_t w = 0; w < l.items; w += tc.warp) {
    std::vector<Val> a, b, c;
    for (int64_t i = w; i < w + tc.warp; ++i) {
      Kernel &k = *items[size_t(i)];
      if (k.wmmaOperand(3).scalar.getInt() != i - w)
        fail(where(k.wmmaNode()) + " in work-item " + describe(at(g, i)) + " has lane " +
             std::to_string(k.wmmaOperand(3).scalar.getInt()) + ", expected " + std::to_string(i - w) +
             " (the lane must be lidx0, of the warp's size)");
      a.push_back(k.wmmaOperand(0));
      b.push_back(k.wmmaOperand(1));
      c.push_back(k.wmmaOperand(2));
    }
    std::vector<Val> d = warpMma(tc, a, b, c);
    for (int64_t i = w; i < w + tc.warp; ++i)
      items[size_t(i)]->finishWmma(std::move(d[size_t(i - w)]));
  }
}

/// Runs group g's work-items in lockstep from barrier to barrier (and wmma to wmma, where a warp computes together):
/// each runs until it stops, and all must stop at the same op or all finish, else a "barrier divergence" error names
/// two that differ.
template <typename At>
void runInLockstep(const UOp *kernel, const UOp *list, std::vector<std::unique_ptr<Kernel>> &items, const Launch &l,
                   int64_t g, At &at) {
  for (int64_t i = 0; i < l.items; ++i) {
    items[size_t(i)]->setLaunch(at(g, i));
    items[size_t(i)]->start(list);
  }
  for (bool running = true; running;) {
    std::optional<size_t> barrierAt;
    for (int64_t i = 0; i < l.items; ++i) {
      bool stopped = false;
      try {
        stopped = items[size_t(i)]->resume();
      } catch (InterpError &e) {
        fail(e.message + " (work-item " + describe(at(g, i)) + ")");
      }
      std::optional<size_t> here = stopped ? std::optional<size_t>(items[size_t(i)]->position()) : std::nullopt;
      if (here && items[size_t(i)]->atWmma()) // barrier stops and wmma stops never compare equal
        here = *here + (size_t(1) << 40);
      if (i == 0) {
        barrierAt = here;
      } else if (here != barrierAt) {
        std::string a = barrierAt ? "reached the barrier before op " + std::to_string(*barrierAt) : "finished";
        std::string b = here ? "reached the barrier before op " + std::to_string(*here) : "finished";
        fail("barrier divergence in kernel '" + (kernel->arg().isString() ? kernel->arg().getString() : "") +
             "': work-item " + describe(at(g, 0)) + " " + a + " while work-item " + describe(at(g, i)) + " " + b);
      }
    }
    running = barrierAt.has_value();
    if (running && items[0]->atWmma())
      warpMmas(items, l, g, at);
  }
}

/// Run a kernel as a GPU launch: every work-item of every work-group, local memory shared within a group. A
/// kernel with barriers runs its work-items in lockstep from barrier to barrier; all must reach the same barrier.
void runLaunch(const UOp *kernel, const Launch &l, std::vector<Memory> &buffers) {
  bool linear = kernel->op() == Op::Linear || needsLinearOrder(kernel);
  const UOp *list = !linear || kernel->op() == Op::Linear ? kernel : linearizeKernel(kernel);
  bool barriers = false;
  for (const UOp *u : toposort(list))
    barriers = barriers || u->op() == Op::Barrier || (linear && u->op() == Op::Wmma);
  std::vector<const UOp *> phases; // a kernel graph: the barriers in data order, each ending a phase
  if (!linear) {
    for (const UOp *u : toposort(list))
      if (u->op() == Op::Barrier)
        phases.push_back(u);
    barriers = false;
  }
  std::vector<std::unique_ptr<Kernel>> items;
  std::vector<std::vector<Memory>> memory(barriers ? size_t(l.items) : 1, buffers);
  for (auto &m : memory)
    items.push_back(std::make_unique<Kernel>(list, m));
  std::unordered_map<const UOp *, Memory> locals;
  for (auto &k : items)
    k->shareLocals(&locals);
  std::vector<std::pair<const UOp *, int64_t>> values;
  auto at = [&](int64_t g, int64_t i) {
    values.clear();
    unflatten(g, l.groupIdx, l, values);
    unflatten(i, l.localIdx, l, values);
    return values;
  };
  for (int64_t g = 0; g < l.groups; ++g) {
    for (const UOp *b : phases) {
      for (int64_t i = 0; i < l.items; ++i) {
        Kernel &k = *items[0];
        k.setLaunch(at(g, i));
        k.bindLaunch();
        try {
          k.runEffects(b);
        } catch (InterpError &e) {
          fail(e.message + " (work-item " + describe(values) + ")");
        }
      }
    }
    if (!barriers) {
      for (int64_t i = 0; i < l.items; ++i) {
        Kernel &k = *items[0];
        k.setLaunch(at(g, i));
        try {
          if (linear)
            k.runLinear(list);
          else {
            k.bindLaunch();
            k.runGraph();
          }
        } catch (InterpError &e) {
          fail(e.message + " (work-item " + describe(values) + ")");
        }
      }
      continue;
    }
    runInLockstep(kernel, list, items, l, g, at);
  }
}

} // namespace

void runKernel(const UOp *kernel, std::vector<Memory> &buffers) {
  std::vector<Memory> bound = buffers; // registers get appended for this run only
  Launch l = launchOf(kernel, buffers);
  if (!l.groupIdx.empty() || !l.localIdx.empty()) {
    runLaunch(kernel, l, bound);
    return;
  }
  if (kernel->op() == Op::Linear) {
    Kernel(kernel, bound).runLinear(kernel);
  } else if (needsLinearOrder(kernel)) {
    // accumulators and orderings have their meaning in the linear order: run the linearized kernel
    const UOp *linear = linearizeKernel(kernel);
    Kernel(linear, bound).runLinear(linear);
  } else {
    Kernel(kernel, bound).runGraph();
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
