//===- Rangeify.cpp - Tensor graphs to kernels over loop ranges -*- C++ -*-===//
// Movement ops become index arithmetic, elementwise and reduce chains fuse, and kernels split where values must
// go to memory. The result is a program: a sink of calls, each a kernel applied to buffers.
//===----------------------------------------------------------------------===//
//
// Every tensor that must exist in memory ("realized") gets a buffer and a kernel that computes it: one range per
// axis of size > 1, a store of its value at the flat index, and its value expression "lowered" at those ranges:
//   - movement ops map the index: permute reorders it, reshape flattens and unflattens it, expand uses 0 on
//     broadcast axes, shrink adds the offset, flip mirrors it, pad subtracts the offset and masks the load with
//     the bounds check (the value is 0 outside);
//   - elementwise ops lower their operands at the same index and combine them;
//   - reduce_axis gets new ranges for its reduced axes and becomes a `reduce` over them;
//   - an input, weight or realized tensor is a load from its buffer; an arange is start + i*step.
// What is realized (the kernel split rules, docs/passes.md):
//   1. every output's value, into the output's buffer (an output of an input, of a constant-free copy of another
//      realized tensor, gets a copy kernel);
//   2. every `contiguous`;
//   3. a reduce that would otherwise be recomputed: one lowered at an index that does not use every loop around
//      it (e.g. a row max broadcast back over its row, as in softmax), one lowered inside another reduce's loop
//      (a convolution over a convolution's output reads each of its values once per window tap), or at two
//      different indices (two
//      consumers, or one consumer reading it under two indexings). Such reduces are found by building all
//      kernels, realizing them, and building again until nothing changes; two indices in one kernel realize it at
//      once, before rule 4 would realize its operand instead;
//   4. an elementwise value read at two different indices of one kernel, one of them inside a reduce's loop (the
//      input of a convolution that a residual connection also reads), or at more than four: recomputing it in the
//      loop repeats its work for every step, and chains of such values grow kernels exponentially (tinygrad
//      realizes a node whose consumers index it differently). Rules 3 (recomputed reduces) and 4 act as soon as
//      the build meets them: the build of that kernel stops, the value is realized, and the kernel is built again;
//   5. a pad read inside a reduce's loop (a padded convolution): its bounds checks would run at every step of the
//      innermost loop. A pad of a computation is stored as regions: the computation's kernel writes the inside of
//      the padded buffer (unmasked) and one small kernel per padded side stores the zero border, so a convolution
//      of a convolution costs no copy; a pad of what is in memory is a plain copy to the inside and the same
//      border kernels (one masked copy when small). A pad filled with a constant, where(pad(true), pad(x), c)
//      (a max pool's -inf border), is stored the same way with borders c. Not a pad of a half value
//      cast to f32 (a half convolution: tensor cores read the halves);
//   6. an expensive elementwise value (exp2, log2, sin, sqrt, recip, fdiv, pow), or one whose own unstored
//      computation has 3 or more ALU ops (a layer norm's (x - mean) * rsqrt * w + b), read inside a reduce at an
//      index that ignores one of the loops around it (gelu before a matmul is recomputed for every output column):
//      computing it once into a buffer is cheaper. So is cheaper float arithmetic on what an input reaches when the
//      ignored loops repeat it 32 times or more (a squeeze-excitation's x * gate before a 1x1 convolution). Found
//      the same way as 3, once no reduce is left to realize;
//   7. a concat whose parts compute a reduce, or read inside a reduce's loop: lowered in a kernel, every part would
//      be computed at every element and selected (the branches of an inception block, each convolution run over
//      all channels). It is stored as regions, one kernel per part writing its slice of the concat's buffer.
//   8. expensive work on weights alone (a batch norm's gamma / sqrt(var + eps)) read by what an input reaches: a
//      kernel that runs once stores it, so convolutions' epilogues load a scale instead of a square root per
//      output element (and their outer loops may merge for threads: collapse-loops).
// A concat elsewhere is lowered in its consumer's kernel: each part read at the index shifted to its slice, masked
// to it, and selected.
// Rules 3 and 6 store a value together with its epilogue: the elementwise ops and reshapes over it up to the one
// node through which all of them are read (a matmul's bias and relu, a layer norm's rsqrt, softmax's 1/sum; of
// several nodes read from outside, the one the others are computed from: a SiLU read by a pool and by the scale
// after it) are computed once in the value's kernel, and that node is what is stored (`epilogueEnd`).

#include "IR/Infer.h"
#include "IR/Rewrite.h"
#include "IR/SymbolicDims.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"
#include "Passes/SimplifyRules.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tgc {
namespace {

using Index = std::vector<const UOp *>;

/// How a reduce was used while building the kernels of one round.
struct ReduceUse {
  std::set<std::pair<int, Index>> positions; // (kernel, index)
  bool recomputed = false;                   // lowered somewhere its index ignores an enclosing loop
  bool recomputedInReduce = false;           // ... inside a reduce's loop
  int64_t factor = 1;                        // most iterations of ignored loops around one use inside a reduce
  bool costly = false;                       // an elementwise value rule 6 stores whenever it is recomputed
};

/// An arange with integer start and step: rangeify lowers it as start + i*step (decompose leaves it).
bool isIndexArange(const UOp *u) {
  if (u->op() != Op::Arange)
    return false;
  const auto &t = u->arg().getTuple();
  return t[0].isInt() && t[2].isInt();
}

/// Rule 6: arithmetic as cheap as one multiply is stored when the loops of the reduce that reads it compute each
/// of its elements this many times (for one element, every multiply-add would also pay the multiply).
constexpr int64_t kRecomputeFactor = 32;
/// What a loop over a variable dimension counts for there.
constexpr int64_t kVariableTrips = 64;

/// Elementwise ops costly enough that recomputing them for every step of a reduce loop costs more than a buffer
/// (Ops.def's Cost flag).
bool isExpensive(Op op) { return isCostly(op); }

struct Buffers {
  std::map<const UOp *, const UOp *> of;        // tensor node -> buffer
  std::map<const UOp *, const UOp *> variables; // define_var -> the i64 buffer its value is passed in
  /// simplifyExpression of the index expressions reshapes make: Rangeify's cache, shared by every round.
  std::unordered_map<const UOp *, const UOp *> *simplified = nullptr;
};

/// How a kernel gets the value it stores (KernelBuilder::build).
enum class Root { Compute, Load, Read };

/// Where a kernel stores: element i of its value goes to element i + offset of a buffer of shape `full` (a part of
/// a concat, the inside of a pad, or a pad's zero border).
struct Region {
  const UOp *value;
  Shape full;
  std::vector<int64_t> offset;
};

/// Thrown while building when a value must be realized at once (rule 4).
struct RealizeFirst {
  const UOp *node;
};

/// The constant a filled pad's border holds (its where's third operand), or nullptr.
const UOp *fillOf(const UOp *where) {
  const UOp *c = where->src(2);
  while (opGroup(c->op()) == OpGroup::Movement)
    c = c->src(0);
  return c->op() == Op::Const ? c : nullptr;
}

/// The pad of `node` when node is a pad filled with a constant, decompose's where(pad(true), pad(x), c) with the
/// same padding (a max pool's -inf border); else nullptr. Rule 5 stores it whole, borders c, so the loop that
/// reads it has neither a bounds check nor a select.
const UOp *filledPad(const UOp *node) {
  if (node->op() != Op::Where || node->hasDimVars())
    return nullptr;
  const UOp *mask = node->src(0);
  const UOp *pad = node->src(1);
  if (mask->op() != Op::Pad || pad->op() != Op::Pad || mask->arg() != pad->arg() || !fillOf(node))
    return nullptr;
  const UOp *inside = mask->src(0);
  bool allTrue = inside->op() == Op::Const && inside->dtype().isBool() && inside->arg() == Arg(true);
  return allTrue ? pad : nullptr;
}

/// Builds one kernel.
class KernelBuilder {
public:
  KernelBuilder(Context &ctx, int kernelId, const Buffers &buffers, std::map<const UOp *, ReduceUse> &uses)
      : ctx_(ctx), kernelId_(kernelId), buffers_(buffers), uses_(uses) {}

  /// The call that stores `value` into `out`: computed from its operands (`Root::Compute`, `value` is what `out`
  /// holds), loaded (`Root::Load`, a copy), or read as an operand is (`Root::Read`: loaded if stored, else
  /// computed). Element i of `value` goes to element i + at->offset of `out` when `at` is given (a region).
  const UOp *build(const UOp *value, const UOp *out, Root how, const Region *at = nullptr) {
    Shape shape = value->shapeVec();
    Index idx;
    for (size_t a = 0; a < shape.size(); ++a) {
      if (shape[a] == 1 && !value->dimVar(a)) {
        idx.push_back(constIndex(0));
        continue;
      }
      const UOp *r = newRange(sizeOf(value, a), "loop");
      outRanges_.push_back(r);
      idx.push_back(r);
    }
    active_ = outRanges_;
    const UOp *v = how == Root::Load      ? load(value, idx, trueConst())
                   : how == Root::Compute ? compute(value, idx, trueConst())
                                          : walk(value, idx, trueConst(), true);
    params_.insert(params_.begin(), out);
    const UOp *dg = ctx_.make(Op::DefineGlobal, out->dtype(), {}, Arg(0));
    const UOp *ptr = ctx_.make(Op::Index, out->dtype(), {dg, at ? placedIndex(idx, *at) : flatIndex(idx, shape)});
    const UOp *effect = ctx_.make(Op::Store, dt::Void, {ptr, v});
    if (!outRanges_.empty()) {
      std::vector<const UOp *> endSrc = {effect};
      endSrc.insert(endSrc.end(), outRanges_.begin(), outRanges_.end());
      effect = ctx_.make(Op::End, dt::Void, endSrc);
    }
    const UOp *sink = ctx_.make(Op::Sink, dt::Void, {effect}, Arg(name(shape)));
    std::vector<const UOp *> callSrc = {sink};
    callSrc.insert(callSrc.end(), params_.begin(), params_.end());
    for (const UOp *v : kernelVariables(sink)) // after the buffers, by name (the renderers' convention)
      callSrc.push_back(buffers_.variables.at(v));
    return ctx_.make(Op::Call, dt::Void, callSrc, Arg(name(shape)));
  }

private:
  const UOp *constIndex(int64_t v) { return ctx_.constInt(dt::Index, v); }
  const UOp *trueConst() { return ctx_.constInt(dt::Bool, 1); }
  const UOp *add(const UOp *a, const UOp *b) { return ctx_.alu(Op::Add, {a, b}); }
  const UOp *mul(const UOp *a, int64_t c) { return ctx_.alu(Op::Mul, {a, constIndex(c)}); }
  const UOp *both(const UOp *a, const UOp *b) {
    if (a->isConst())
      return a->constInt() ? b : a;
    return b->isConst() && b->constInt() ? a : ctx_.alu(Op::And, {a, b});
  }

  /// The trip count of axis a of a tensor: its variable, or its static size.
  const UOp *sizeOf(const UOp *tensor, size_t a) {
    const UOp *v = tensor->dimVar(a);
    return v ? v : constIndex(tensor->shape()[a]);
  }

  const UOp *newRange(const UOp *size, const char *kind) {
    return ctx_.make(Op::Range, dt::Index, {size}, Arg::tuple({Arg(nextAxis_++), Arg(kind)}));
  }

  std::string name(const Shape &shape) {
    std::string s = reduceSizes_.empty() ? "E" : "r";
    for (int64_t d : shape)
      if (d > 1)
        s += "_" + std::to_string(d);
    for (int64_t d : reduceSizes_)
      s += "_" + std::to_string(d);
    return s;
  }

  /// The flat index in a region's buffer of element idx of the region.
  const UOp *placedIndex(const Index &idx, const Region &at) {
    Index in;
    for (size_t a = 0; a < idx.size(); ++a)
      in.push_back(at.offset[a] ? add(idx[a], constIndex(at.offset[a])) : idx[a]);
    return flatIndex(in, at.full);
  }

  const UOp *flatIndex(const Index &idx, const Shape &shape) {
    const UOp *flat = constIndex(0);
    int64_t stride = 1;
    for (size_t a = shape.size(); a-- > 0;) {
      if (shape[a] != 1)
        flat = add(flat, mul(idx[a], stride));
      stride *= shape[a];
    }
    return flat;
  }

  /// A reshape's operand index. Each run of axes whose sizes multiply to the same product on both sides maps on its
  /// own: an axis that keeps its size keeps its index, a merge or split flattens and unflattens only its run (the
  /// other runs' terms are multiples of the run's size and drop out). Symbolic and empty shapes take the whole flat
  /// index. Simplified now, so an index that only seems to use a range ((c + 8i)//8) does not count as using it.
  Index reshapeIndex(const UOp *node, const Index &idx) {
    Shape os = node->shapeVec();
    Shape xs = node->src(0)->shapeVec();
    auto symbolic = [](const UOp *t) { return std::ranges::any_of(t->dimVars(), [](const UOp *v) { return v; }); };
    std::vector<size_t> outAxes;
    std::vector<size_t> inAxes;
    Index in(xs.size(), nullptr);
    for (size_t a = 0; a < os.size(); ++a)
      if (os[a] != 1)
        outAxes.push_back(a);
    for (size_t a = 0; a < xs.size(); ++a) {
      if (xs[a] != 1)
        inAxes.push_back(a);
      else
        in[a] = constIndex(0);
    }
    bool whole = symbolic(node) || symbolic(node->src(0)) || node->numel() == 0;
    size_t i = 0;
    size_t j = 0;
    while (!whole && i < outAxes.size() && j < inAxes.size()) {
      size_t i0 = i;
      size_t j0 = j;
      int64_t po = os[outAxes[i++]];
      int64_t pi = xs[inAxes[j++]];
      while (po != pi && !whole) {
        if (po < pi && i < outAxes.size())
          po *= os[outAxes[i++]];
        else if (pi < po && j < inAxes.size())
          pi *= xs[inAxes[j++]];
        else
          whole = true;
      }
      if (i - i0 == 1 && j - j0 == 1) {
        in[inAxes[j0]] = idx[outAxes[i0]];
        continue;
      }
      Index at; // the run's index over its result axes
      Shape outDims;
      Shape inDims;
      for (size_t k = i0; k < i; ++k) {
        at.push_back(idx[outAxes[k]]);
        outDims.push_back(os[outAxes[k]]);
      }
      for (size_t k = j0; k < j; ++k)
        inDims.push_back(xs[inAxes[k]]);
      Index mapped = unflatten(flatIndex(at, outDims), inDims);
      for (size_t k = j0; k < j; ++k)
        in[inAxes[k]] = simplified(mapped[k - j0]);
    }
    if (whole || i != outAxes.size() || j != inAxes.size()) {
      in = unflatten(flatIndex(idx, os), xs);
      for (const UOp *&e : in)
        e = simplified(e);
    }
    return in;
  }

  /// Index of every element of `shape` (row-major) from a flat index.
  Index unflatten(const UOp *flat, const Shape &shape) {
    Index out(shape.size());
    int64_t stride = 1;
    for (size_t a = shape.size(); a-- > 0;) {
      out[a] = shape[a] == 1
                   ? constIndex(0)
                   : ctx_.alu(Op::Mod, {ctx_.alu(Op::Idiv, {flat, constIndex(stride)}), constIndex(shape[a])});
      stride *= shape[a];
    }
    return out;
  }

  int slotOf(const UOp *buffer) {
    for (size_t i = 0; i < params_.size(); ++i)
      if (params_[i] == buffer)
        return int(i) + 1;
    params_.push_back(buffer);
    return int(params_.size());
  }

  const UOp *load(const UOp *node, const Index &idx, const UOp *valid) {
    const UOp *buf = buffers_.of.at(node);
    const UOp *dg = ctx_.make(Op::DefineGlobal, buf->dtype(), {}, Arg(slotOf(buf)));
    std::vector<const UOp *> src = {dg, flatIndex(idx, node->shapeVec())};
    if (!(valid->isConst() && valid->constInt()))
      src.push_back(valid);
    const UOp *ptr = ctx_.make(Op::Index, buf->dtype(), src);
    return ctx_.make(Op::Load, node->dtype(), {ptr});
  }

  // Lowering walks the tensor graph from the stored value to the leaves. Chains can be arbitrarily deep, so the
  // walk keeps its own stack: a frame per node being lowered, its operands requested one at a time in operand
  // order (the order decides range ids, so outputs stay deterministic), combined when all are lowered.
  struct Frame {
    const UOp *node = nullptr;
    Index idx;
    const UOp *valid = nullptr;
    bool memoize = true;             // reached through lower(): record the result for (node, idx, valid)
    size_t next = 0;                 // operands requested so far
    std::vector<const UOp *> done;   // their lowered values
    Index in;                        // single-operand ops: the operand's index
    const UOp *inValid = nullptr;    // ... and its mask
    const UOp *inside = nullptr;     // pad: the in-bounds condition
    std::vector<const UOp *> parts;  // concat: the condition that the index is in operand i's slice
    std::vector<const UOp *> ranges; // reduce: its new ranges (active while its operand is lowered)
    size_t outer = 0;                // reduce: the active ranges around it
  };

  /// The value of `node` at `idx`, computed from its operands even when it has a buffer.
  const UOp *compute(const UOp *node, const Index &idx, const UOp *valid) { return walk(node, idx, valid, false); }

  const UOp *walk(const UOp *node, const Index &idx, const UOp *valid, bool memoize) {
    std::vector<Frame> stack;
    if (const UOp *r = enter(stack, node, idx, valid, memoize))
      return r;
    while (true) {
      Frame &f = stack.back();
      if (f.next < numOperands(f)) {
        size_t i = f.next++;
        const UOp *x = f.node->src(i);
        const UOp *r = nullptr;
        if (isSingleOperand(f.node->op()))
          r = enter(stack, x, f.in, f.inValid, true);
        else if (f.node->op() == Op::Concat)
          r = enter(stack, x, partIndex(f, i), both(f.valid, f.parts[i]), true);
        else
          r = enter(stack, x, x->rank() == 0 ? Index{} : f.idx, f.valid, true);
        if (r)
          stack.back().done.push_back(r); // answered at once: no frame was pushed
        continue;
      }
      const UOp *r = finish(f);
      if (f.memoize)
        memo_.emplace(std::make_tuple(f.node, f.idx, f.valid), r);
      stack.pop_back();
      if (stack.empty())
        return r;
      stack.back().done.push_back(r);
    }
  }

  /// An arange at index i: start + i*step in index arithmetic, cast once to its dtype (as the interpreter computes
  /// it; decompose leaves only aranges with integer start and step).
  const UOp *arangeAt(const UOp *node, const UOp *i) {
    const auto &t = node->arg().getTuple();
    return ctx_.cast(add(mul(i, t[2].getInt()), constIndex(t[0].getInt())), node->dtype());
  }

  /// What rule 6 weighs of an elementwise value's own computation (down to loads, constants and stored values).
  struct Work {
    int ops = 0;        // ALU ops, casts and selects not counted
    bool index = false; // it reads an arange, or was too large to look through (a one-hot mask: index work)
  };

  const Work &workOf(const UOp *node) {
    auto [it, fresh] = work_.try_emplace(node);
    if (!fresh)
      return it->second;
    Work &w = it->second;
    std::vector<const UOp *> work = {node};
    std::unordered_set<const UOp *> seen = {node};
    while (!work.empty()) {
      const UOp *u = work.back();
      work.pop_back();
      w.index = w.index || u->op() == Op::Arange || seen.size() >= 32;
      bool alu = group::elementwise().contains(u->op());
      if (w.index || (!alu && opGroup(u->op()) != OpGroup::Movement))
        continue; // a load, a constant, a reduce (stored by rule 3)
      if (u != node && buffers_.of.count(u))
        continue;
      w.ops += alu && opGroup(u->op()) != OpGroup::Cast && u->op() != Op::Where;
      for (const UOp *src : u->src())
        if (seen.insert(src).second)
          work.push_back(src);
    }
    return w;
  }

  /// An elementwise value with kCostlyOps or more ALU ops, e.g. a layer norm's (x - mean) * rsqrt * w + b: rule 6
  /// stores it rather than recompute it inside a reduce.
  bool isCostly(const UOp *node) {
    constexpr int kCostlyOps = 3;
    return group::elementwise().contains(node->op()) && workOf(node).ops >= kCostlyOps;
  }

  /// Float arithmetic (not a select or cast) on values, no index work: rule 6 stores it when a reduce's loop
  /// recomputes it many times (a squeeze-excitation's x * gate read by a 1x1 convolution, once per output channel).
  bool isArithmetic(const UOp *node) {
    Op op = node->op();
    if (!group::elementwise().contains(op) || op == Op::Where || opGroup(op) == OpGroup::Cast)
      return false;
    return node->dtype().isFloat() && workOf(node).ops >= 1 && !workOf(node).index;
  }

  static bool isSingleOperand(Op op) {
    return op == Op::Contiguous || op == Op::Copy || op == Op::ReduceAxis || opGroup(op) == OpGroup::Movement;
  }

  size_t numOperands(const Frame &f) const { return f.node->op() == Op::Const ? 0 : f.node->numSrc(); }

  /// Starts lowering `node`: returns its value when known at once (memoized, loaded, constant), else pushes a
  /// frame with its operands' indices prepared.
  const UOp *enter(std::vector<Frame> &stack, const UOp *node, Index idx, const UOp *valid, bool memoize) {
    // idx is a copy: it may be an operand index of a frame on `stack`, which the push below can move
    if (memoize) {
      bool stored = buffers_.of.count(node);
      bool costly = isExpensive(node->op()) || isCostly(node);
      if (!stored && (node->op() == Op::ReduceAxis || costly || (insideReduce() && isArithmetic(node))))
        noteUse(node, idx, costly); // every use counts, also one the memo answers
      if (group::elementwise().contains(node->op()) && !stored)
        noteIndex(node, idx);
      if (node->op() == Op::Pad && !stored && insideReduce() && !keepsMask(node))
        throw RealizeFirst{node}; // rule 5
      if (!stored && insideReduce() && filledPad(node))
        throw RealizeFirst{node}; // rule 5, a pad filled with a constant
      if (node->op() == Op::Concat && !stored && (insideReduce() || computesReduce(node)))
        throw RealizeFirst{node}; // rule 7
      auto it = memo_.find(std::make_tuple(node, idx, valid));
      if (it != memo_.end())
        return it->second;
      if (stored) {
        const UOp *r = load(node, idx, valid);
        memo_.emplace(std::make_tuple(node, idx, valid), r);
        return r;
      }
    }
    Op op = node->op();
    if (op == Op::Const || op == Op::Arange) {
      const UOp *r = op == Op::Const ? ctx_.make(Op::Const, node->dtype(), {}, node->arg()) : arangeAt(node, idx[0]);
      if (memoize)
        memo_.emplace(std::make_tuple(node, idx, valid), r);
      return r;
    }
    if (op != Op::Contiguous && op != Op::Copy && op != Op::ReduceAxis && op != Op::Concat &&
        opGroup(op) != OpGroup::Movement && !group::elementwise().contains(op))
      internalError("rangeify: cannot lower '" + std::string(opName(op)) + "' (run decompose first)");
    stack.emplace_back();
    stack.back().node = node;
    stack.back().idx = idx;
    stack.back().valid = valid;
    stack.back().memoize = memoize;
    Frame &f = stack.back();
    f.in = idx;
    f.inValid = valid;
    if (op == Op::ReduceAxis)
      openReduce(f);
    else if (op == Op::Concat)
      openConcat(f);
    else if (opGroup(op) == OpGroup::Movement)
      moveIndex(f);
    return nullptr;
  }

  /// The value of a frame whose operands are all lowered.
  const UOp *finish(Frame &f) {
    Op op = f.node->op();
    if (op == Op::Contiguous || op == Op::Copy)
      return f.done[0];
    if (op == Op::ReduceAxis) {
      active_.resize(f.outer);
      if (f.ranges.empty())
        return f.done[0];
      std::vector<const UOp *> src = {f.done[0]};
      src.insert(src.end(), f.ranges.begin(), f.ranges.end());
      return ctx_.make(Op::Reduce, f.node->dtype(), src, f.node->arg().getTuple()[0]);
    }
    if (op == Op::Pad && !f.inside->isConst())
      return ctx_.alu(Op::Where, {f.inside, f.done[0], ctx_.constInt(f.node->dtype(), 0)});
    if (op == Op::Concat) {
      const UOp *v = f.done.back();
      for (size_t i = f.done.size() - 1; i-- > 0;)
        v = ctx_.alu(Op::Where, {f.parts[i], f.done[i], v});
      return v;
    }
    if (opGroup(op) == OpGroup::Movement)
      return f.done[0];
    return ctx_.make(op, f.node->dtype(), f.done, f.node->arg());
  }

  /// A movement op: the index (and mask) at which its operand is read.
  void moveIndex(Frame &f) {
    const UOp *node = f.node;
    const Index &idx = f.idx;
    Shape xs = node->src(0)->shapeVec();
    Index &in = f.in;
    in.assign(xs.size(), nullptr);
    switch (node->op()) {
    case Op::Reshape: in = reshapeIndex(node, idx); break;
    case Op::Permute: {
      std::vector<int64_t> order = node->arg().intTuple();
      for (size_t a = 0; a < order.size(); ++a)
        in[size_t(order[a])] = idx[a];
      break;
    }
    case Op::Expand:
      for (size_t a = 0; a < xs.size(); ++a)
        in[a] = xs[a] == 1 ? constIndex(0) : idx[a];
      break;
    case Op::Shrink:
      for (size_t a = 0; a < xs.size(); ++a)
        in[a] = add(idx[a], constIndex(node->arg().getTuple()[a].getTuple()[0].getInt()));
      break;
    case Op::Flip:
      in = idx;
      for (int64_t a : node->arg().intTuple())
        in[size_t(a)] = add(mul(idx[size_t(a)], -1), constIndex(xs[size_t(a)] - 1));
      break;
    case Op::Pad: {
      const UOp *inside = trueConst();
      for (size_t a = 0; a < xs.size(); ++a) {
        int64_t before = node->arg().getTuple()[a].getTuple()[0].getInt();
        int64_t after = node->arg().getTuple()[a].getTuple()[1].getInt();
        in[a] = add(idx[a], constIndex(-before));
        if (before > 0)
          inside = both(inside, ctx_.alu(Op::Cmplt, {constIndex(before - 1), idx[a]}));
        if (after > 0)
          inside = both(inside, ctx_.alu(Op::Cmplt, {idx[a], constIndex(before + xs[a])}));
      }
      f.inside = inside;
      f.inValid = both(f.valid, inside);
      break;
    }
    default: internalError("rangeify: not a movement op");
    }
  }

  /// A concat: each operand is read where the index is in its slice of the axis, shifted to the slice's start.
  /// The last operand's condition only masks its loads; the select takes it wherever no earlier one is taken.
  void openConcat(Frame &f) {
    size_t axis = size_t(f.node->arg().getInt());
    const UOp *i = f.idx[axis];
    int64_t total = f.node->shape()[axis];
    int64_t offset = 0;
    for (const UOp *x : f.node->src()) {
      int64_t end = offset + x->shape()[axis];
      const UOp *inside = trueConst();
      if (offset > 0)
        inside = both(inside, ctx_.alu(Op::Cmplt, {constIndex(offset - 1), i}));
      if (end < total)
        inside = both(inside, ctx_.alu(Op::Cmplt, {i, constIndex(end)}));
      f.parts.push_back(inside);
      offset = end;
    }
  }

  /// The index at which a concat reads operand `part`.
  Index partIndex(const Frame &f, size_t part) {
    size_t axis = size_t(f.node->arg().getInt());
    int64_t offset = 0;
    for (size_t k = 0; k < part; ++k)
      offset += f.node->src(k)->shape()[axis];
    Index in = f.idx;
    in[axis] = add(in[axis], constIndex(-offset));
    return in;
  }

  /// Whether lowering `node` would run a reduce's loop (one not in a buffer): rule 7 then writes a concat's parts
  /// in kernels of their own, so no part is computed over the other parts' slices.
  bool computesReduce(const UOp *node) {
    auto [it, fresh] = reduces_.try_emplace(node, false);
    if (!fresh)
      return it->second;
    std::vector<const UOp *> work = {node};
    std::unordered_set<const UOp *> seen = {node};
    bool found = false;
    while (!work.empty() && !found) {
      const UOp *u = work.back();
      work.pop_back();
      found = seen.size() > 256; // a computation this long is worth a kernel of its own anyway
      if (u != node && buffers_.of.count(u))
        continue;
      found = found || u->op() == Op::ReduceAxis;
      for (const UOp *src : u->src())
        if (seen.insert(src).second)
          work.push_back(src);
    }
    return it->second = found;
  }

  /// A reduce: new ranges for its reduced axes, active while its operand is lowered.
  void openReduce(Frame &f) {
    const UOp *x = f.node->src(0);
    Shape xs = x->shapeVec();
    for (int64_t a : f.node->arg().getTuple()[1].intTuple()) {
      if (xs[size_t(a)] == 1 && !x->dimVar(size_t(a)))
        continue;
      const UOp *r = newRange(sizeOf(x, size_t(a)), "reduce");
      reduceSizes_.push_back(xs[size_t(a)]);
      f.ranges.push_back(r);
      f.in[size_t(a)] = r;
    }
    f.outer = active_.size();
    active_.insert(active_.end(), f.ranges.begin(), f.ranges.end());
  }

  const UOp *simplified(const UOp *e) {
    auto [it, fresh] = buffers_.simplified->try_emplace(e, nullptr);
    if (fresh)
      it->second = simplifyExpression(e);
    return it->second;
  }

  /// Rule 4: the distinct indices an elementwise value is lowered at in this kernel, and whether one is inside a
  /// reduce's loop.
  void noteIndex(const UOp *node, const Index &idx) {
    auto &[seen, inLoop] = indices_[node];
    seen.insert(idx);
    inLoop = inLoop || insideReduce();
    if (seen.size() > 4 || (seen.size() > 1 && inLoop))
      throw RealizeFirst{node};
  }

  /// Pads rule 5 leaves in the loop: of a constant, and of an f16/bf16 value cast to f32 (decompose's form of a
  /// half convolution: realizing it would store f32, and tensor cores need the half values).
  static bool keepsMask(const UOp *pad) {
    const UOp *x = pad->src(0);
    while (opGroup(x->op()) == OpGroup::Movement)
      x = x->src(0);
    if (x->op() == Op::Const) // a padded constant is the bounds check itself (the mask of a max pool's -inf)
      return true;
    if (x->op() != Op::Cast)
      return false;
    Scalar from = x->src(0)->dtype().scalar();
    return from == Scalar::F16 || from == Scalar::BF16;
  }

  bool insideReduce() const {
    for (const UOp *r : active_)
      if (r->arg().getTuple()[1].getString() == "reduce")
        return true;
    return false;
  }

  /// Record where a fused reduce is used, and whether that recomputes it.
  void noteUse(const UOp *node, const Index &idx, bool costly) {
    ReduceUse &u = uses_[node];
    u.costly = costly;
    u.positions.insert({kernelId_, idx});
    std::unordered_set<const UOp *> used;
    for (const UOp *i : idx)
      for (const UOp *n : toposort(i))
        if (n->op() == Op::Range)
          used.insert(n);
    bool inReduce = false;
    bool recomputed = false;
    int64_t factor = 1;
    for (const UOp *r : active_) {
      inReduce = inReduce || r->arg().getTuple()[1].getString() == "reduce";
      if (used.count(r))
        continue;
      recomputed = true;
      factor *= r->src(0)->isConst() ? r->src(0)->constInt() : kVariableTrips;
    }
    u.recomputed = u.recomputed || recomputed;
    u.recomputedInReduce = u.recomputedInReduce || (recomputed && inReduce);
    if (inReduce)
      u.factor = std::max(u.factor, factor);
    // rule 3, at once; also for a second index in this kernel, before rule 4 stores the reduce's operand instead
    if (node->op() == Op::ReduceAxis && (recomputed || inReduce || readTwiceHere(u)))
      throw RealizeFirst{node};
  }

  /// Whether this kernel lowers a reduce at two different indices (two slices of a matmul's result summed).
  bool readTwiceHere(const ReduceUse &u) const {
    auto here = [&](const auto &p) { return p.first == kernelId_; };
    return std::ranges::count_if(u.positions, here) > 1;
  }

  Context &ctx_;
  int kernelId_;
  const Buffers &buffers_;
  std::map<const UOp *, ReduceUse> &uses_;
  std::vector<const UOp *> params_; // buffers in slot order (slot 0 is the output, added last)
  std::vector<const UOp *> outRanges_;
  std::vector<const UOp *> active_;
  std::vector<int64_t> reduceSizes_;
  int64_t nextAxis_ = 0;
  std::map<std::tuple<const UOp *, Index, const UOp *>, const UOp *> memo_;
  std::unordered_map<const UOp *, Work> work_;    // workOf's answers
  std::unordered_map<const UOp *, bool> reduces_; // computesReduce's answers
  std::map<const UOp *, std::pair<std::set<Index>, bool>> indices_;
};

class Rangeify {
public:
  Rangeify(const UOp *root, std::map<std::string, int64_t> &stats)
      : root_(root), ctx_(root->ctx()), order_(toposort(root)), stats_(stats) {
    for (const UOp *u : order_) {
      bool varies = u->op() == Op::Input || u->op() == Op::DefineVar;
      for (const UOp *s : u->src()) {
        users_[s].push_back(u);
        varies = varies || varying_.count(s);
      }
      if (varies)
        varying_.insert(u);
    }
  }

  const UOp *run() {
    for (const UOp *u : order_)
      if (u->op() == Op::Contiguous)
        realized_.insert(u);
    for (const UOp *o : root_->src())
      realized_.insert(o->src(0));
    realizeWeightWork();
    while (true) {
      stats_["rangeify.rounds"] += 1;
      std::map<const UOp *, ReduceUse> uses;
      const UOp *program = buildAll(uses);
      if (!program)
        continue; // rule 4 realized values while building: build again
      // reduces first: realizing one can end the recomputation of an expensive value read inside it
      bool changed = false;
      for (auto &[r, use] : uses)
        if (r->op() == Op::ReduceAxis && (use.recomputed || use.positions.size() > 1))
          changed = realize(r) || changed;
      if (changed)
        continue;
      std::set<const UOp *> expensive;
      for (auto &[r, use] : uses)
        if (r->op() != Op::ReduceAxis && use.recomputedInReduce &&
            (use.costly || (use.factor >= kRecomputeFactor && varying_.count(r))))
          expensive.insert(r);
      for (const UOp *r : outermost(expensive))
        changed = realize(r) || changed;
      if (!changed)
        return program;
    }
  }

private:
  /// Rule 8: expensive work on weights alone (a batch norm's gamma / sqrt(var + eps)) read by what varies from run
  /// to run is stored, by a kernel that runs once, rather than computed at every element of every call.
  void realizeWeightWork() {
    for (const UOp *u : order_) {
      if (!varying_.count(u))
        continue;
      for (const UOp *s : u->src()) {
        while (opGroup(s->op()) == OpGroup::Movement)
          s = s->src(0);
        if (!varying_.count(s) && !realized_.count(s) && expensiveOnWeights(s))
          realized_.insert(s);
      }
    }
  }

  /// Whether `v`, computed from weights and constants alone, has an expensive op and reads a weight.
  static bool expensiveOnWeights(const UOp *v) {
    if (v->op() == Op::Weight || v->op() == Op::Const)
      return false;
    bool expensive = false;
    bool weight = false;
    for (const UOp *u : toposort(v)) {
      expensive = expensive || isExpensive(u->op());
      weight = weight || u->op() == Op::Weight;
    }
    return expensive && weight;
  }

  /// Realizes `v` (rules 3 and 6) together with its epilogue: the elementwise work on it up to where it leaves
  /// through one node. False when that is realized already.
  bool realize(const UOp *v) { return realized_.insert(epilogueEnd(v)).second; }

  /// Where the elementwise work on `v` ends: the node through which all of it is read, when there is one. Storing
  /// that node instead of `v` computes the epilogue once (a matmul's bias and activation, a layer norm's rsqrt)
  /// instead of in every kernel, and at every loop step, that reads `v`. The work is `v` and the elementwise ops
  /// and reshapes over it (a matmul's reduce is reshaped before its bias is added); it is read elsewhere through
  /// a consumer that is not such a node, or as a stored value. A weight-only `v` (run once) keeps its own buffer when
  /// the end reads an input.
  const UOp *epilogueEnd(const UOp *v) {
    const size_t limit = 64; // a long residual stream is not searched
    std::vector<const UOp *> work = {v};
    std::unordered_set<const UOp *> seen = {v};
    std::vector<const UOp *> exits; // epilogue nodes read from outside it
    while (!work.empty()) {
      const UOp *u = work.back();
      work.pop_back();
      bool leaves = u != v && realized_.count(u);
      for (const UOp *c : leaves ? std::vector<const UOp *>{} : users_[u]) {
        bool epilogue = c->op() == Op::Reshape || (group::elementwise().contains(c->op()) && sameShape(c, u));
        leaves = leaves || !epilogue;
        if (epilogue && seen.insert(c).second)
          work.push_back(c);
      }
      if (seen.size() > limit)
        return v;
      if (leaves)
        exits.push_back(u);
    }
    // the exit every other exit is computed from (a SiLU read by a pool and by the scale after it)
    const UOp *end = nullptr;
    for (const UOp *e : exits)
      if (std::ranges::all_of(exits, [&](const UOp *x) { return x == e || reaches(e, x, seen); }))
        end = e;
    if (!end || (!varying_.count(v) && varying_.count(end)))
      return v;
    return end;
  }

  /// Whether `to` is computed from `from` through users within `within`.
  bool reaches(const UOp *from, const UOp *to, const std::unordered_set<const UOp *> &within) {
    std::vector<const UOp *> work = {from};
    std::unordered_set<const UOp *> seen = {from};
    while (!work.empty()) {
      const UOp *u = work.back();
      work.pop_back();
      if (u == to)
        return true;
      for (const UOp *c : users_[u])
        if (within.count(c) && seen.insert(c).second)
          work.push_back(c);
    }
    return false;
  }

  /// Whether `v` is a computation, not a view of what is in memory (a stored tensor, an input, a constant).
  bool computes(const UOp *v) const {
    while (opGroup(v->op()) == OpGroup::Movement && !realized_.count(v))
      v = v->src(0);
    return !realized_.count(v) && v->op() != Op::Input && v->op() != Op::Weight && v->op() != Op::Const;
  }

  static bool sameShape(const UOp *a, const UOp *b) {
    return std::ranges::equal(a->shape(), b->shape()) && std::ranges::equal(a->dimVars(), b->dimVars());
  }

  /// The nodes of `set` that no other node of it computes from: storing those ends the recomputation of the rest.
  static std::vector<const UOp *> outermost(const std::set<const UOp *> &set) {
    std::set<const UOp *> inner;
    for (const UOp *u : set)
      for (const UOp *s : toposort(u))
        if (s != u && set.count(s))
          inner.insert(s);
    std::vector<const UOp *> out;
    for (const UOp *u : set)
      if (!inner.count(u))
        out.push_back(u);
    return out;
  }

  /// A pad of what is in memory whose inside has fewer elements is one masked copy (one kernel, not 1 + slabs).
  static constexpr int64_t kMinCopiedInside = 4096;

  /// The regions a realized concat or pad is written in, one kernel each; none when it is computed as a whole.
  /// A concat's parts go to their slices (no part is computed over another's slice, no copy of a part computed for
  /// it). A pad of a computation goes to the inside, which kernels storing zeros surround, one slab per padded
  /// side: the producer of a padded convolution's input writes the padded buffer itself; a pad of what is in memory
  /// already is a plain copy to the inside (vector loads and stores, no masks) and the slabs, or when small one
  /// masked copy. Shapes must be static.
  std::vector<Region> regionsOf(const UOp *u) {
    std::vector<Region> regions;
    const UOp *filled = filledPad(u); // a pad filled with a constant: the pad's regions, borders of that constant
    const UOp *pad = filled ? filled : u;
    if ((u->op() != Op::Concat && pad->op() != Op::Pad) || u->hasDimVars())
      return regions;
    if (pad->op() == Op::Pad && !computes(pad->src(0)) && pad->src(0)->numel() < kMinCopiedInside)
      return regions;
    Shape full = u->shapeVec();
    std::vector<int64_t> zero(full.size(), 0);
    if (u->op() == Op::Concat) {
      size_t axis = size_t(u->arg().getInt());
      int64_t offset = 0;
      for (const UOp *part : u->src()) {
        std::vector<int64_t> at = zero;
        at[axis] = offset;
        offset += part->shape()[axis];
        if (part->numel() > 0)
          regions.push_back(Region{part, full, at});
      }
      return regions;
    }
    std::vector<int64_t> before;
    std::vector<int64_t> after;
    for (const Arg &p : pad->arg().getTuple()) {
      before.push_back(p.getTuple()[0].getInt());
      after.push_back(p.getTuple()[1].getInt());
      if (before.back() < 0 || after.back() < 0)
        return regions;
    }
    if (u->numel() == 0 || pad->src(0)->numel() == 0)
      return regions;
    regions.push_back(Region{pad->src(0), full, before});
    Arg border = filled ? fillOf(u)->arg() : Arg();
    // slab a (one per padded side of axis a): the inside along the axes before a, the side along a, all of the
    // axes after a. The slabs and the inside tile the padded shape.
    Shape inner = pad->src(0)->shapeVec();
    for (size_t a = 0; a < full.size(); ++a) {
      for (int side = 0; side < 2; ++side) {
        int64_t size = side == 0 ? before[a] : after[a];
        if (size == 0)
          continue;
        Shape shape = full;
        std::vector<int64_t> at = zero;
        for (size_t b = 0; b < a; ++b) {
          shape[b] = inner[b];
          at[b] = before[b];
        }
        shape[a] = size;
        at[a] = side == 0 ? 0 : before[a] + inner[a];
        const UOp *value =
            filled ? ctx_.make(Op::Const, u->dtype(), {}, border, shape) : ctx_.constant(u->dtype(), 0.0, shape);
        regions.push_back(Region{value, full, at});
      }
    }
    return regions;
  }

  const UOp *buffer(int64_t id, const UOp *node, const std::string &kind, const std::string &name) {
    int64_t n = node->numel();
    Arg arg = Arg::tuple(
        {Arg(id), Arg(n), Arg(kind), Arg(name), kind == "temp" ? Arg::ints({}) : bufferShapeArg(node), Arg(-1)});
    return ctx_.make(Op::Buffer, node->dtype().ptr(), {}, arg);
  }

  /// The i64 buffer a variable's value is passed in; its "shape" is the variable's bounds [lo, hi].
  const UOp *variableBuffer(int64_t id, const UOp *var) {
    Arg arg = Arg::tuple(
        {Arg(id), Arg(int64_t(1)), Arg("variable"), Arg(varName(var)), Arg::ints({varMin(var), varMax(var)}), Arg(-1)});
    return ctx_.make(Op::Buffer, dt::I64.ptr(), {}, arg);
  }

  /// All kernels of the program, or nullptr when rule 4 realized more values on the way.
  const UOp *buildAll(std::map<const UOp *, ReduceUse> &uses) {
    Buffers bufs;
    bufs.simplified = &simplified_;
    int64_t id = 0;
    for (const UOp *u : order_)
      if (u->op() == Op::Input || u->op() == Op::Weight)
        bufs.of[u] = buffer(id++, u, u->op() == Op::Input ? "input" : "weight", u->arg().getString());
    for (const UOp *v : shapeVariables(root_))
      bufs.variables[v] = variableBuffer(id++, v);
    // each output gets a buffer; its value is realized there unless it is already in memory
    std::vector<std::pair<const UOp *, const UOp *>> copies; // (value, output buffer)
    std::map<const UOp *, const UOp *> outputBuffer;
    for (const UOp *o : root_->src()) {
      const UOp *b = buffer(id++, o, "output", o->arg().getString());
      const UOp *v = o->src(0);
      if (bufs.of.count(v))
        copies.emplace_back(v, b);
      else
        bufs.of[v] = b;
    }
    for (const UOp *u : order_)
      if (realized_.count(u) && !bufs.of.count(u))
        bufs.of[u] = buffer(id++, u, "temp", "");
    std::vector<const UOp *> calls;
    int kernel = 0;
    std::vector<const UOp *> grown; // realized while building this round
    auto buildKernel = [&](const UOp *u, const Region *at) {
      while (true) {
        try {
          stats_["rangeify.kernel-builds"] += 1;
          KernelBuilder kb(ctx_, kernel, bufs, uses);
          return at ? kb.build(at->value, bufs.of.at(u), Root::Read, at) : kb.build(u, bufs.of.at(u), Root::Compute);
        } catch (const RealizeFirst &r) { // realize it and build this kernel again; the round is redone after
          const UOp *v = r.node->op() == Op::ReduceAxis ? epilogueEnd(r.node) : r.node;
          if (realized_.count(v)) // its epilogue is stored already, yet this kernel recomputes it: store it too
            v = r.node;
          realized_.insert(v);
          bufs.of[v] = buffer(id++, v, "temp", "");
          grown.push_back(v);
        }
      }
    };
    auto buildKernels = [&](const UOp *u) {
      std::vector<Region> regions = regionsOf(u);
      if (regions.empty()) {
        calls.push_back(buildKernel(u, nullptr));
        ++kernel;
      }
      for (const Region &r : regions) {
        calls.push_back(buildKernel(u, &r));
        ++kernel;
      }
    };
    for (const UOp *u : order_)
      if (realized_.count(u) && u->op() != Op::Input && u->op() != Op::Weight)
        buildKernels(u);
    if (!grown.empty()) {
      // The round is redone. Build the kernels of the values it realized (passed before they were realized) now,
      // so what those must realize in turn is found in this round, not one round per level of a nest of reduces.
      for (size_t i = 0; i < grown.size(); ++i)
        buildKernels(grown[i]);
      return nullptr;
    }
    for (auto [v, b] : copies) {
      KernelBuilder kb(ctx_, kernel++, bufs, uses);
      calls.push_back(kb.build(v, b, Root::Load));
    }
    return ctx_.make(Op::Sink, dt::Void, calls);
  }

  const UOp *root_;
  Context &ctx_;
  std::vector<const UOp *> order_;
  std::set<const UOp *> realized_;
  std::unordered_map<const UOp *, std::vector<const UOp *>> users_;
  std::unordered_set<const UOp *> varying_; // what depends on an input or a variable (not computed once)
  std::unordered_map<const UOp *, const UOp *> simplified_;
  std::map<std::string, int64_t> &stats_;
};

} // namespace

const UOp *runRangeify(const UOp *root, PassContext &pc) {
  if (root->op() != Op::Sink) {
    pc.diags.error(Loc{pc.module.fileName, 0, 0}, "rangeify needs a tensor graph whose root is a sink of outputs");
    return nullptr;
  }
  for (const UOp *u : toposort(root)) {
    if (group::composite().contains(u->op()) && !isIndexArange(u) && u->op() != Op::Concat) {
      pc.diags.error(Loc{pc.module.fileName, 0, 0}, "rangeify needs primitive ops; run 'decompose' first (found '" +
                                                        std::string(opName(u->op())) + "')");
      return nullptr;
    }
  }
  return Rangeify(root, pc.stats).run();
}

} // namespace tgc
