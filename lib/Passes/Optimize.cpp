//===- Optimize.cpp - Choosing upcast and unroll actions per kernel -*- C++ -*-===//
// Hand-written heuristics (tinygrad's hand_coded_optimizations, for CPUs): vector lanes where accesses are
// contiguous, a register tile where a load is reused, within the target's lane budget.
//===----------------------------------------------------------------------===//
//
// For each kernel, from the strides of its global loads and stores along each range (the change of the address when
// that range goes from 0 to 1, the others at 0):
//  1. reuse: if the kernel reduces, upcast the loop axes (not the one chosen in 2) along which some load has
//     stride 0, innermost first, by up to 4 each and then up to 16 while the lanes fit (a register tile: each
//     loaded value is used by several lanes, and enough independent accumulators hide the add latency);
//  2. lanes: upcast the loop axis with store stride 1 along which every load has stride 0 or 1 by up to the
//     vector width (preferring one that fills a whole vector; in a kernel without nested reduces, an axis along which
//     only the loads at every reduce step are contiguous (a residual added after the reduce is read once per output,
//     like the store), when it fills a vector and no store-contiguous axis does: a convolution over
//     channel-last weights (pack-conv) gets its lanes along the output channels, not along a width of 20); in a reduce
//     kernel to TargetDesc::panelLanes (up to 4 vector widths), before the tile, when the operand read along the lanes
//     (reduce x lanes-axis elements) fits TargetDesc::l2OperandBytes or when the kernel has one reduce and those lanes
//     leave at least two panels (then 3 applies), or to 2 vector widths in a convolution's window whose output
//     channels nest outside the pixels when the panel of those lanes (reduce x lanes) fits 2 x l2OperandBytes;
//     else with the lanes the tile of 1 left over (a 16 x 2048 x 64 matmul on AVX-512: 16 x 16, not 4 x 64); if there
//     is none, unroll the reduce axis along which every load has stride 0 or 1 (and one stride 1) by up to the vector
//     width; before that, a loop axis with store stride 1 along which every load has stride 0 to 2 (a stride-2 pool's
//     output width: coalesce reads those lanes through spans).
//  3. blocks: when that operand does not fit L2, block the lanes axis (`block`) so that one block of panels,
//     reduce x block elements, does: the blocks become the outermost loop and every row tile reuses the block
//     from L2 (with pack-matmul's panel layout, a 1024^3 f32 matmul on AVX2: upcast:0:4,upcast:1:16,block:1:4).
//     Likewise a loop axis that steps through the panels (a matmul whose output is [tokens, heads, 64]) when it
//     nests inside an axis that rereads them: blocks of it become the outermost loop. And where the outermost loop
//     of a tiled kernel rereads an operand larger than L2 (a 1x1 convolution's input, once per block of channels),
//     the next loop along which that operand moves becomes the outermost one (sweepBlock).
// Amounts are powers of two that divide the range, or its largest divisor where that fills less than half the
// limit (fillAmount: 7 or 14 on 7x7 and 14x14 maps); the accumulator lanes of a reduce kernel fill at most half the
// target's vector registers (AVX-512 f32: 256 lanes in 16 of 32 zmm registers, e.g. a 16 x 16 matmul tile), and
// no tile in a kernel of nested reduce ops, where lanes multiply the inner reduces. The reuse action is applied
// first so that the contiguous axis gets the higher id, which makes it the fastest lane and its accesses coalesce
// without shuffles. Explicit actions (--opts) replace the heuristics; --opts=none disables them. Chosen actions are
// reported as remarks on the module (tgc --debug=3).

#include "IR/Rewrite.h"
#include "IR/TensorCore.h"
#include "Passes/OptAction.h"
#include "Passes/Pass.h"
#include "Passes/ProgramQueries.h"
#include "Passes/SimplifyRules.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <map>
#include <unordered_map>

namespace tgc {
namespace {

using Values = std::unordered_map<const UOp *, int64_t>;

/// The integer value of one node of index arithmetic from its operands' values; nullopt when it is not plain
/// arithmetic of ranges and constants.
std::optional<int64_t> evalNode(const UOp *u, const Values &values,
                                const std::unordered_map<const UOp *, int64_t> &known) {
  if (u->isConst() && u->dtype().isInt())
    return u->constInt();
  if (u->op() == Op::Range) {
    auto it = values.find(u);
    return it == values.end() ? 0 : it->second;
  }
  if (u->numSrc() != 2 || !u->dtype().isInt())
    return std::nullopt;
  auto ia = known.find(u->src(0)), ib = known.find(u->src(1));
  if (ia == known.end() || ib == known.end())
    return std::nullopt;
  int64_t a = ia->second, b = ib->second;
  auto wrap = [](uint64_t v) { return int64_t(v); }; // index arithmetic wraps; never signed overflow here
  bool divisible = b != 0 && !(b == -1 && a == std::numeric_limits<int64_t>::min());
  switch (u->op()) {
  case Op::Add: return wrap(uint64_t(a) + uint64_t(b));
  case Op::Sub: return wrap(uint64_t(a) - uint64_t(b));
  case Op::Mul: return wrap(uint64_t(a) * uint64_t(b));
  case Op::Idiv: return divisible ? std::optional<int64_t>(a / b) : std::nullopt;
  case Op::Mod: return divisible ? std::optional<int64_t>(a % b) : std::nullopt;
  case Op::Floordiv: return divisible ? std::optional<int64_t>(simplify::floorDiv(a, b)) : std::nullopt;
  case Op::Floormod: return divisible ? std::optional<int64_t>(simplify::floorMod(a, b)) : std::nullopt;
  case Op::Max: return std::max(a, b);
  default: return std::nullopt;
  }
}

/// The integer value of index arithmetic u with the given range values (unlisted ranges 0); nullopt when u is not
/// plain arithmetic of ranges and constants. Operands first, without recursion.
std::optional<int64_t> evalIndex(const UOp *u, const Values &values) {
  std::unordered_map<const UOp *, int64_t> known;
  for (const UOp *n : toposort(u))
    if (std::optional<int64_t> v = evalNode(n, values, known))
      known[n] = *v;
  auto it = known.find(u);
  return it == known.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

/// Address change when r goes from 0 to 1; nullopt when unknown.
std::optional<int64_t> strideOf(const UOp *idx, const UOp *r) {
  std::optional<int64_t> a = evalIndex(idx, {}), b = evalIndex(idx, {{r, 1}});
  if (!a || !b)
    return std::nullopt;
  return int64_t(uint64_t(*b) - uint64_t(*a));
}

struct KernelFacts {
  std::vector<const UOp *> loops;   // "loop" ranges with constant sizes, by id
  std::vector<const UOp *> reduces; // "reduce" ranges with constant sizes, by id
  std::vector<const UOp *> loads;   // index expressions of global loads
  std::vector<const UOp *> stores;  // index expressions of global stores
  int elemBytes = 4;                // of the first stored value
  int reduceOps = 0;                // reduce nodes: a convolution summed with a shortcut's has two
  bool nestedReduces = false;       // a reduce reads another (a fused chain: a convolution of a convolution)
};

/// The loads that run at every reduce step (their index uses a reduce range): a residual or a bias added after the
/// reduce is read once per output, as the store is written.
std::vector<const UOp *> loadsInReduce(const KernelFacts &f) {
  std::vector<const UOp *> out;
  for (const UOp *idx : f.loads)
    if (std::any_of(f.reduces.begin(), f.reduces.end(), [&](const UOp *r) { return dependsOn(idx, r); }))
      out.push_back(idx);
  return out;
}

/// Whether some reduce of `kernel` reads the result of another.
bool hasNestedReduce(const UOp *kernel) {
  std::vector<const UOp *> reduces;
  for (const UOp *u : toposort(kernel))
    if (u->op() == Op::Reduce)
      reduces.push_back(u);
  for (const UOp *outer : reduces)
    for (const UOp *inner : reduces)
      if (inner != outer && dependsOn(outer->src(0), inner))
        return true;
  return false;
}

KernelFacts factsOf(const UOp *kernel) {
  KernelFacts f;
  for (const UOp *u : toposort(kernel)) {
    f.reduceOps += u->op() == Op::Reduce;
    if (u->op() == Op::Range && u->src(0)->isConst() && u->arg().isTuple()) {
      if (rangeKind(u) == "loop")
        f.loops.push_back(u);
      else if (rangeKind(u) == "reduce")
        f.reduces.push_back(u);
    }
    if ((u->op() != Op::Load && u->op() != Op::Store) || u->src(0)->op() != Op::Index ||
        u->src(0)->src(0)->op() != Op::DefineGlobal)
      continue;
    if (u->op() == Op::Store) {
      if (f.stores.empty())
        f.elemBytes = int(std::max<int64_t>(1, u->src(1)->dtype().itemSize()));
      f.stores.push_back(u->src(0)->src(1));
    } else {
      f.loads.push_back(u->src(0)->src(1));
    }
  }
  std::sort(f.loops.begin(), f.loops.end(), rangeIdLess);
  std::sort(f.reduces.begin(), f.reduces.end(), rangeIdLess);
  if (f.reduceOps > 1)
    f.nestedReduces = hasNestedReduce(kernel);
  return f;
}

/// Every access has stride 0 or 1 along r, and at least one has stride 1.
bool contiguousAlong(const std::vector<const UOp *> &accesses, const UOp *r) {
  bool one = false;
  for (const UOp *idx : accesses) {
    std::optional<int64_t> s = strideOf(idx, r);
    if (!s || (*s != 0 && *s != 1))
      return false;
    one = one || *s == 1;
  }
  return one;
}

/// Every access has a stride from 0 to kMaxSpanStride along r: its lanes are read through a few spans.
bool smallStrides(const std::vector<const UOp *> &accesses, const UOp *r) {
  constexpr int64_t kMaxSpanStride = 2;
  for (const UOp *idx : accesses) {
    std::optional<int64_t> s = strideOf(idx, r);
    if (!s || *s < 0 || *s > kMaxSpanStride)
      return false;
  }
  return true;
}

bool someStrideZero(const std::vector<const UOp *> &accesses, const UOp *r) {
  for (const UOp *idx : accesses)
    if (strideOf(idx, r) == std::optional<int64_t>(0))
      return true;
  return false;
}

/// Whether some load with stride 0 along a loop axis varies along `lanes`: a tile over that axis would reuse a
/// vector. In a depthwise convolution or a pool only broadcast scalars (the weights) are reused, and a tile of rows
/// costs shuffles without saving loads (a 3x3 depthwise convolution on 56x56: 181 us with 8 lanes alone, 311 with
/// 8 x 8).
bool tileReusesVectors(const KernelFacts &f, const UOp *lanes) {
  for (const UOp *r : f.loops)
    for (const UOp *idx : f.loads)
      if (strideOf(idx, r) == std::optional<int64_t>(0) && strideOf(idx, lanes).value_or(0) != 0)
        return true;
  return false;
}

/// Whether some load with stride 0 along r is contiguous along `lanes`: upcasting r reuses a vector load.
bool reusesVector(const std::vector<const UOp *> &loads, const UOp *r, const UOp *lanes) {
  if (!lanes)
    return false;
  for (const UOp *idx : loads)
    if (strideOf(idx, r) == std::optional<int64_t>(0) && strideOf(idx, lanes) == std::optional<int64_t>(1))
      return true;
  return false;
}

/// The largest power of two <= limit dividing n, or 0 when that is 1.
int64_t amountFor(int64_t n, int64_t limit) {
  int64_t a = 1;
  while (a * 2 <= limit && n % (a * 2) == 0)
    a *= 2;
  return a >= 2 ? a : 0;
}

/// The largest divisor of n up to limit, or 0 when that is 1.
int64_t largestDivisor(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 0;
}

/// An upcast amount along an axis of size n (vector lanes, or a register tile's rows): a power of two as
/// amountFor; when that fills less than half of limit (a 7, 14 or 28 wide feature map), the largest divisor of n up
/// to limit instead (7 or 14). The LLVM renderer pads the lane counts that follow (7 x 32 = 224) to a power of two.
/// 0 when that is 1.
int64_t fillAmount(int64_t n, int64_t limit) {
  int64_t a = amountFor(n, limit);
  if (2 * a >= limit)
    return a;
  return std::max(a, largestDivisor(n, limit));
}

/// Lanes along a strided axis (a stride-2 pool's output width, read through spans that coalesce deinterleaves):
/// fillAmount, or where a vector of any lane count is one masked move (TargetDesc::maskedVectors) the largest
/// divisor up to the width when it fills more of the vector: each vector of lanes costs its span's loads and
/// shuffles, whatever its lane count (a 3x3 stride-2 max pool over 64 x 112 x 112: 14 lanes 162 us, 8 lanes 205 us).
/// Contiguous axes keep fillAmount: 12 output channels as lanes instead of 8 made 1x1 convolutions of 24 channels
/// twice as slow.
int64_t spanLanes(int64_t n, int64_t width, const TargetDesc &t) {
  int64_t a = fillAmount(n, width);
  return t.maskedVectors ? std::max(a, largestDivisor(n, width)) : a;
}

/// A register tile over an odd axis of size n whose largest divisor overflows the tile budget with even one vector of
/// lanes (65 tokens on AVX2: 13 x 8 lanes is 104 of 64): rows d (a divisor of n, 2 to 16) and lanes v vectors wide
/// (v * width a power of two up to `lanes` dividing `lanesSize`) such that the d * v accumulators, the v vectors of
/// the operand loaded per reduce step and one broadcast row value fit the vector registers, with at least
/// budget / width accumulators to hide the add latency, choosing the most multiply-adds per load (d * v against
/// d + v). 65 on AVX2: 5 x 16 (10 fmas per 7 loads), not 13 x 8 (13 per 14): a 65 x 192 x 768 matmul 394 -> 194 us.
/// {0, 0} when none fits.
std::pair<int64_t, int64_t> oddRegisterTile(int64_t n, int64_t lanesSize, int64_t lanes, int64_t width, int64_t budget,
                                            const TargetDesc &t) {
  std::pair<int64_t, int64_t> best{0, 0};
  double bestRatio = 0;
  for (int64_t d = 2; d <= std::min<int64_t>(n, 16); ++d) {
    for (int64_t v = 1; v * width <= lanes && lanesSize % (v * width) == 0; v *= 2) {
      bool fits = d * v + v + 1 <= t.vectorRegisters && d * v * width >= budget;
      double ratio = double(d * v) / double(d + v);
      if (n % d == 0 && fits && ratio > bestRatio) {
        best = {d, v * width};
        bestRatio = ratio;
      }
    }
  }
  return best;
}

/// Halve the largest amount until all of them together give at most `maxLanes` lanes (halves of even amounts still
/// divide their ranges; an odd one is dropped); an amount that reaches 1 is dropped.
void fitLaneLimit(std::vector<OptAction> &actions, int64_t maxLanes) {
  auto product = [&] {
    int64_t p = 1;
    for (const OptAction &a : actions)
      p *= a.amount;
    return p;
  };
  while (!actions.empty() && product() > maxLanes) {
    auto largest = std::max_element(actions.begin(), actions.end(),
                                    [](const OptAction &a, const OptAction &b) { return a.amount < b.amount; });
    largest->amount = largest->amount % 2 == 0 ? largest->amount / 2 : 1; // an odd amount has no half that divides
    if (largest->amount < 2)
      actions.erase(largest);
  }
}

/// GPU heuristics (tinygrad's hand-coded ones for targets with local memory):
///  1. a big reduce with a small output (at most 2048 values) is split across the work-items of a group:
///     grouptop by 256 when the output has at most 32 values, else by 16 (one reduce op per kernel);
///  2. otherwise a reduce kernel gets a small register tile: loop axes along which a load is reused (stride 0) are
///     upcast by up to 4, at most two of them;
///  3. loop axes become local (work-item) axes, innermost first, by powers of two up to 32 each while the group
///     stays within 128 work-items (and the target's limit), at most three axes.
/// Tensor cores for a matmul-like kernel (targets with them): tc, then a warp tile of up to 2 x 4 mma tiles (upcast
/// of the m and n tile axes: each A fragment feeds 4 mma, each B fragment 2) and 2 x 2 warps per group (local).
std::optional<std::vector<OptAction>> chooseTensorCoreActions(const UOp *kernel, const KernelFacts &f,
                                                              const TargetDesc &t) {
  if (!t.tensorCores)
    return std::nullopt;
  for (auto it = f.reduces.rbegin(); it != f.reduces.rend(); ++it) {
    std::optional<std::pair<int64_t, int64_t>> mn = tensorCoreAxes(kernel, rangeId(*it));
    if (!mn)
      continue;
    const TensorCore &tc = defaultTensorCore();
    std::vector<OptAction> actions = {{"tc", rangeId(*it), 0, ""}};
    int64_t tiles[2] = {0, 0};
    for (const UOp *r : f.loops) {
      if (rangeId(r) == mn->first)
        tiles[0] = rangeSize(r) / tc.m;
      if (rangeId(r) == mn->second)
        tiles[1] = rangeSize(r) / tc.n;
    }
    int64_t ids[2] = {mn->first, mn->second};
    for (const char *kind : {"upcast", "local"}) {
      for (int i = 0; i < 2; ++i) {
        int64_t a = amountFor(tiles[i], std::string(kind) == "local" ? 2 : i == 0 ? 2 : 4);
        if (a) {
          actions.push_back({kind, ids[i], a, ""});
          tiles[i] /= a;
        }
      }
    }
    return actions;
  }
  return std::nullopt;
}

std::vector<OptAction> chooseGpuActions(const UOp *kernel, const TargetDesc &t) {
  KernelFacts f = factsOf(kernel);
  if (std::optional<std::vector<OptAction>> tc = chooseTensorCoreActions(kernel, f, t)) {
    for (OptAction &a : *tc)
      a.text = a.kind + ":" + std::to_string(a.axis) + ":" + std::to_string(a.amount);
    return *tc;
  }
  std::map<int64_t, int64_t> size; // current size of each range id, as actions split them
  int64_t output = 1, reduce = 1;
  for (const UOp *r : f.loops)
    output *= (size[rangeId(r)] = rangeSize(r));
  for (const UOp *r : f.reduces)
    reduce *= (size[rangeId(r)] = rangeSize(r));
  int reduceOps = 0;
  int64_t workItems = 1; // of the group: local and group ranges already there count
  for (const UOp *u : toposort(kernel)) {
    reduceOps += u->op() == Op::Reduce;
    if (u->op() == Op::Range && u->arg().isTuple() && u->src(0)->isConst() &&
        (rangeKind(u) == "local" || rangeKind(u) == "group"))
      workItems *= rangeSize(u);
  }
  std::vector<OptAction> actions;
  auto take = [&](const char *kind, const UOp *r, int64_t amount) {
    actions.push_back({kind, rangeId(r), amount, ""});
    size[rangeId(r)] /= amount;
  };
  if (reduceOps == 1 && !f.reduces.empty() && output <= 2048 && reduce >= 256) {
    const UOp *axis = *std::max_element(f.reduces.begin(), f.reduces.end(),
                                        [](const UOp *a, const UOp *b) { return rangeSize(a) < rangeSize(b); });
    for (int64_t amount : output <= 32 ? std::vector<int64_t>{256, 16} : std::vector<int64_t>{16}) {
      if (workItems * amount <= t.maxLocalProduct && rangeSize(axis) % amount == 0) {
        take("grouptop", axis, amount);
        workItems *= amount;
        break;
      }
    }
  }
  if (!f.reduces.empty() && actions.empty()) {
    int tiles = 0;
    for (auto it = f.loops.rbegin(); it != f.loops.rend() && tiles < 2; ++it) {
      int64_t a = amountFor(size[rangeId(*it)], 4);
      if (a && someStrideZero(f.loads, *it) && size[rangeId(*it)] / a >= 2) {
        take("upcast", *it, a);
        ++tiles;
      }
    }
  }
  int locals = 0;
  int64_t maxGroup = std::min<int64_t>(128, t.maxLocalProduct);
  for (auto it = f.loops.rbegin(); it != f.loops.rend() && locals < 3; ++it) {
    int64_t a = amountFor(size[rangeId(*it)], std::min<int64_t>(32, maxGroup / std::max<int64_t>(1, workItems)));
    if (!a)
      continue;
    take("local", *it, a);
    workItems *= a;
    ++locals;
  }
  for (OptAction &a : actions)
    a.text = a.kind + ":" + std::to_string(a.axis) + ":" + std::to_string(a.amount);
  return actions;
}

/// Cache blocking of a matmul-like kernel: the lanes axis (after its upcast) is split so that the operand read
/// along it, reduce x block elements, fits TargetDesc::l2OperandBytes, and the blocks become the outermost loop.
/// Each block of that operand then stays in L2 while every tile of the other axes reads it.
std::optional<OptAction> cacheBlock(const KernelFacts &f, const UOp *lanesAxis, const std::vector<OptAction> &actions,
                                    const TargetDesc &t) {
  int64_t lanes = 1;
  for (const OptAction &a : actions)
    if (a.axis == rangeId(lanesAxis))
      lanes = a.amount;
  int64_t reduceSize = rangeSize(f.reduces[0]);
  int64_t panels = rangeSize(lanesAxis) / lanes; // the lanes axis after its upcast
  int64_t fit = t.l2OperandBytes / std::max<int64_t>(1, reduceSize * lanes * f.elemBytes);
  int64_t a = 1;
  while (a * 2 <= fit && panels % (a * 2) == 0)
    a *= 2;
  if (a >= panels)
    return std::nullopt;
  return OptAction{"block", rangeId(lanesAxis), a, ""};
}

/// Cache blocking over a panel axis: where the operand read along the lanes axis also steps along another loop axis
/// that the tile leaves whole (a matmul whose output is [tokens, heads, 64] reads the packed weight's panel of each
/// head) inside a loop axis that reads the same panels again (the tokens), while all the panels do not fit
/// TargetDesc::l2OperandBytes: blocks of that axis whose panels fit become the outermost loop. Each head's 768 x 64
/// panel then stays in L2 while every token tile reads it, instead of every tile sweeping all 12 from farther away.
std::optional<OptAction> panelBlock(const KernelFacts &f, const UOp *lanesAxis, const std::vector<OptAction> &actions,
                                    const TargetDesc &t) {
  auto upcast = [&](const UOp *r) {
    return std::ranges::any_of(actions, [&](const OptAction &a) { return a.axis == rangeId(r); });
  };
  int64_t slice = rangeSize(f.reduces[0]) * rangeSize(lanesAxis) * f.elemBytes; // one panel's bytes
  for (const UOp *idx : loadsInReduce(f)) {
    if (strideOf(idx, lanesAxis) != std::optional<int64_t>(1))
      continue;
    const UOp *panel = nullptr;
    bool reread = false; // an axis outside the panel axis reads the same panel again
    for (const UOp *r : f.loops) {
      std::optional<int64_t> s = strideOf(idx, r);
      if (r == lanesAxis || !s)
        continue;
      if (*s == 0 && !panel)
        reread = true;
      else if (*s != 0 && !upcast(r) && reread && (!panel || rangeSize(r) > rangeSize(panel)))
        panel = r;
    }
    if (!panel || slice * rangeSize(panel) <= t.l2OperandBytes)
      continue;
    int64_t a = std::max<int64_t>(1, largestDivisor(rangeSize(panel), t.l2OperandBytes / slice));
    return OptAction{"block", rangeId(panel), a, ""};
  }
  return std::nullopt;
}

/// The largest distance the loads move when r steps by one (unknown strides count as 0).
int64_t loadReach(const KernelFacts &f, const UOp *r) {
  int64_t reach = 0;
  for (const UOp *idx : f.loads)
    reach = std::max(reach, std::abs(strideOf(idx, r).value_or(0)));
  return reach;
}

/// Loop order for the loads of a reduce kernel without a register tile: where an inner loop axis moves the loads
/// farther than the outermost one, a block of 1 makes it the outermost loop. A depthwise convolution whose output
/// is laid out [N, H, C, W] (for a 1x1 convolution after it: nhcw-input) loops over rows outside channels, and each
/// channel's input rows leave the cache before the next output row reads them again (3x3 on 576 x 14 x 14: 84 us
/// so, 60 us with the channels outside).
std::optional<OptAction> loadOrderBlock(const KernelFacts &f, const UOp *lanesAxis) {
  if (f.reduces.empty() || f.loops.size() < 2)
    return std::nullopt;
  const UOp *far = nullptr;
  int64_t farthest = loadReach(f, f.loops[0]);
  for (size_t i = 1; i < f.loops.size(); ++i) {
    int64_t reach = f.loops[i] == lanesAxis ? 0 : loadReach(f, f.loops[i]);
    if (reach > farthest) {
      far = f.loops[i];
      farthest = reach;
    }
  }
  if (!far)
    return std::nullopt;
  return OptAction{"block", rangeId(far), 1, ""};
}

/// The elements a load spans over every range of the kernel: the larger of its affine bounding box (strides times
/// sizes) and the distance between its first and last address (a packed layout's index is not affine: [co/8, ci, 8]
/// has stride 1 along co, yet 8 x ci between blocks); nullopt when a stride is unknown.
std::optional<int64_t> loadExtent(const KernelFacts &f, const UOp *idx) {
  int64_t extent = 1;
  Values last;
  for (const std::vector<const UOp *> *ranges : {&f.loops, &f.reduces}) {
    for (const UOp *r : *ranges) {
      std::optional<int64_t> s = strideOf(idx, r);
      if (!s)
        return std::nullopt;
      extent += (rangeSize(r) - 1) * std::abs(*s);
      last[r] = rangeSize(r) - 1;
    }
  }
  std::optional<int64_t> first = evalIndex(idx, {});
  std::optional<int64_t> end = evalIndex(idx, last);
  if (first && end)
    extent = std::max(extent, std::abs(*end - *first) + 1);
  return extent;
}

/// Loop order for a tiled reduce kernel whose outermost loop rereads, kMinRereads times or more, an operand that does
/// not fit L2 (a 1x1 convolution's input, 224 x 56 x 56 floats, read again by each block of output channels): the
/// next loop along which that operand moves becomes the outermost one (a block of 1), when one step of it and every
/// operand it rereads fit TargetDesc::l2OperandBytes together and it leaves at least kMinSweepBlocks parallel blocks.
/// Each row of the input then stays in L2 while every block of channels reads it, and two threads no longer both
/// stream the whole input (DenseNet's 224 -> 128 on 56x56, AVX2: 3.56 -> 2.74 ms on one thread, 2.06 -> 1.41 ms on
/// two).
std::optional<OptAction> sweepBlock(const KernelFacts &f, const std::vector<OptAction> &actions, const TargetDesc &t) {
  constexpr int64_t kMinSweepBlocks = 8;
  constexpr int64_t kMinRereads = 8; // fewer sweeps cost little (a 7x7 stem: 4 of 0.6 MB, the same time either way)
  auto trips = [&](const UOp *r) {   // the loop's iterations after its upcast
    int64_t n = rangeSize(r);
    for (const OptAction &a : actions)
      if (a.axis == rangeId(r))
        n /= a.amount;
    return n;
  };
  std::vector<const UOp *> loops;
  std::ranges::copy_if(f.loops, std::back_inserter(loops), [&](const UOp *r) { return trips(r) > 1; });
  if (f.reduces.empty() || loops.size() < 2 || trips(loops[0]) < kMinRereads)
    return std::nullopt;
  std::vector<const UOp *> steps = loadsInReduce(f);
  std::vector<std::optional<int64_t>> bytes; // of each step load; nullopt when its span is unknown
  for (const UOp *idx : steps) {
    std::optional<int64_t> extent = loadExtent(f, idx);
    bytes.push_back(extent ? std::optional<int64_t>(*extent * f.elemBytes) : std::nullopt);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const UOp *big = steps[i];
    if (strideOf(big, loops[0]) != std::optional<int64_t>(0) || !bytes[i] || *bytes[i] <= t.l2OperandBytes)
      continue;
    auto moves = [&](const UOp *r) { return strideOf(big, r).value_or(0) != 0; };
    auto next = std::ranges::find_if(loops.begin() + 1, loops.end(), moves);
    if (next == loops.end() || trips(*next) < kMinSweepBlocks)
      return std::nullopt;
    int64_t reread = *bytes[i] / trips(*next);
    for (size_t j = 0; j < steps.size(); ++j)
      if (j != i && strideOf(steps[j], *next) == std::optional<int64_t>(0))
        reread += bytes[j].value_or(t.l2OperandBytes);
    if (reread > t.l2OperandBytes)
      return std::nullopt;
    return OptAction{"block", rangeId(*next), 1, ""};
  }
  return std::nullopt;
}

/// The one-row register tile of a single reduce over a 16-register file (see its use): a whole row, the tile axis
/// contiguous in the loads of at most the registers less two, when the current tile spans two axes and the row
/// gives more accumulators.
std::optional<std::pair<const UOp *, int64_t>> rowTile(const KernelFacts &f,
                                                       const std::vector<std::pair<const UOp *, int64_t>> &tile,
                                                       const UOp *lanesAxis, bool unroll, int64_t total, int64_t width,
                                                       const TargetDesc &t) {
  if (t.vectorRegisters > 16 || !lanesAxis || unroll || f.reduces.size() != 1 || f.nestedReduces)
    return std::nullopt;
  if (std::ranges::count_if(tile, [](const auto &e) { return e.second > 1; }) < 2 ||
      rangeSize(f.reduces[0]) <= rangeSize(lanesAxis))
    return std::nullopt;
  for (const auto &[r, a] : tile) {
    int64_t d = rangeSize(r);
    if (d <= t.vectorRegisters - 2 && contiguousAlong(f.loads, r) && d * width > total)
      return std::make_pair(r, d);
  }
  return std::nullopt;
}

} // namespace

/// Where a kernel's vector lanes go: the axis an upcast (or, on a reduce axis, an unroll) makes lanes.
struct LanesChoice {
  const UOp *axis = nullptr; // none: the kernel stays scalar
  bool unroll = false;       // a reduce axis: its lanes are unrolled
  bool strided = false;      // a strided loop axis: coalesce reads its lanes through spans
};

/// The lanes axis, by the first rule that finds one (innermost axes first).
LanesChoice chooseLanesAxis(const KernelFacts &f, int64_t width) {
  LanesChoice c;
  std::vector<const UOp *> all = f.loads;
  all.insert(all.end(), f.stores.begin(), f.stores.end());
  auto storeContiguous = [&](const UOp *r) {
    bool yes = !f.stores.empty();
    for (const UOp *idx : f.stores)
      yes = yes && strideOf(idx, r) == std::optional<int64_t>(1);
    return yes;
  };
  // first, in a convolution's window (several reduce ranges) over channel-last weights, output channels that fill
  // two vectors (AVX2, 3x3 on 56x56, 64 -> 64 channels: 4 pixels x 16 channels 2.67 ms, 4 channels x 2 rows x 8
  // pixels 2.89 ms; AVX-512 reaches the channels through the rule after the next)
  std::vector<const UOp *> stepLoads = loadsInReduce(f);
  for (auto it = f.loops.rbegin(); it != f.loops.rend() && !c.axis && f.reduces.size() > 1 && !f.nestedReduces; ++it)
    if (!storeContiguous(*it) && contiguousAlong(stepLoads, *it) && amountFor(rangeSize(*it), 2 * width) == 2 * width)
      c.axis = *it;
  // then a full vector along an axis where loads and stores are contiguous; in a kernel of one reduce, one where the
  // loads are (its stores run once per output, its loads once per reduce step: a convolution's output channels;
  // not in fused chains of reduces, whose wide tiles make LLVM take minutes); then any contiguous axis, however
  // few lanes it has
  for (auto it = f.loops.rbegin(); it != f.loops.rend() && !c.axis; ++it)
    if (storeContiguous(*it) && contiguousAlong(all, *it) && amountFor(rangeSize(*it), width) == width)
      c.axis = *it;
  for (auto it = f.loops.rbegin(); it != f.loops.rend() && !c.axis && !f.nestedReduces; ++it)
    if (contiguousAlong(stepLoads, *it) && amountFor(rangeSize(*it), width) == width)
      c.axis = *it;
  for (auto it = f.loops.rbegin(); it != f.loops.rend() && !c.axis; ++it)
    if (storeContiguous(*it) && contiguousAlong(all, *it) && fillAmount(rangeSize(*it), width))
      c.axis = *it;
  // a strided one (a stride-2 convolution's or pool's output width): coalesce reads its lanes through spans
  for (auto it = f.loops.rbegin(); it != f.loops.rend() && !c.axis; ++it)
    if (storeContiguous(*it) && smallStrides(f.loads, *it) && fillAmount(rangeSize(*it), width)) {
      c.axis = *it;
      c.strided = true;
    }
  for (auto it = f.reduces.rbegin(); it != f.reduces.rend() && !c.axis; ++it) {
    if (contiguousAlong(f.loads, *it) && fillAmount(rangeSize(*it), width)) {
      c.axis = *it;
      c.unroll = true;
    }
  }
  return c;
}

/// A register tile's axes with their upcast amounts.
using TileAxes = std::vector<std::pair<const UOp *, int64_t>>;

/// The register tile's candidate axes, each at 1: loop axes along which some load is reused, innermost first.
/// Axes that reuse a vector load (one contiguous along the lanes) come first: a matmul whose output is reshaped to
/// [tokens, heads, 64] tiles the tokens (reusing the weight's vectors), not the heads (a scalar).
TileAxes tileAxes(const KernelFacts &f, const UOp *lanesAxis, bool unroll) {
  TileAxes tile;
  bool tiles = !lanesAxis || unroll || tileReusesVectors(f, lanesAxis);
  for (bool vectorReuse : {true, false})
    for (auto it = f.loops.rbegin(); it != f.loops.rend(); ++it)
      if (tiles && *it != lanesAxis && someStrideZero(f.loads, *it) &&
          reusesVector(f.loads, *it, lanesAxis) == vectorReuse)
        tile.push_back({*it, 1});
  return tile;
}

/// Wide lanes that left every tile axis at 1 where one has an odd size (a 7x7 feature map): fewer lanes, and that
/// axis's divisor as the tile (7 x 32 reuses each weight vector 7 times; 1 x 64 once); likewise when only axes that
/// reuse a broadcast scalar got a tile (ViT's 65 tokens x 3 heads: 13 x 16 reuses each weight vector 13 times,
/// 3 x 64 three times). Where that axis's divisor overflows the budget with one vector of lanes, the odd tile that
/// fits the registers (oddRegisterTile).
void preferOddAxis(const KernelFacts &f, const TargetDesc &t, const UOp *lanesAxis, int64_t budget, int64_t width,
                   TileAxes &tile, int64_t &lanes, int64_t &total) {
  auto vectorReuse = [&](const UOp *r) { return reusesVector(f.loads, r, lanesAxis); };
  bool tiled = std::ranges::any_of(tile, [](const auto &t) { return t.second > 1; });
  bool vectorTiled = std::ranges::any_of(tile, [&](const auto &t) { return t.second > 1 && vectorReuse(t.first); });
  for (auto &[r, a] : tile) {
    int64_t n = rangeSize(r);
    int64_t d = n % 2 ? fillAmount(n, 16) : 0;
    if ((vectorReuse(r) ? vectorTiled : tiled) || d < 2)
      continue;
    int64_t rowLanes = std::min(lanes, int64_t(std::bit_floor(uint64_t(budget / d))));
    if (d * width > budget)
      std::tie(d, rowLanes) = oddRegisterTile(n, rangeSize(lanesAxis), lanes, width, budget, t);
    if (d < 2)
      continue;
    for (auto &other : tile)
      other.second = 1;
    a = d;
    lanes = rowLanes;
    total = lanes * d;
    tiled = vectorTiled = true;
  }
}

/// A tile of powers of two that fills at most half the budget (14 = 2 x 7 gives 2 x 2) gives way to one axis's
/// largest divisor that fits (7 x 32 on a 14x14 map: 14 accumulators, not 8; a 1x1 convolution 112 -> 672 there
/// ran 349 us, 248 us so).
void preferLargestDivisor(int64_t budget, int64_t lanes, TileAxes &tile, int64_t &total) {
  std::pair<const UOp *, int64_t> best{nullptr, total / lanes};
  for (auto &[r, a] : tile)
    if (int64_t d = largestDivisor(rangeSize(r), budget / lanes); d > best.second)
      best = {r, d};
  if (!best.first)
    return;
  for (auto &[r, a] : tile)
    a = r == best.first ? best.second : 1;
  total = lanes * best.second;
}

/// The register tile of a kernel with reduces: loop axes along which some load is reused get upcast actions (into
/// `actions`); `lanes` is widened with what the budget leaves; `blockable` is set for a matmul-like kernel whose
/// lanes-axis operand is too big for L2 (it is cache-blocked along that axis).
void chooseRegisterTile(const KernelFacts &f, const TargetDesc &t, const UOp *lanesAxis, bool unroll, int64_t budget,
                        int64_t width, int64_t &lanes, bool &blockable, std::vector<OptAction> &actions) {
  // the tile axes get up to 4 each, then up to 16 while the accumulators fit the budget; what is left widens the
  // lanes axis up to 4 vector widths
  TileAxes tile = tileAxes(f, lanesAxis, unroll);
  // wide lanes first (fewer loads per multiply) while the operand read along them (reduce x lanes axis
  // elements) stays in L2; otherwise a squarer tile, which sweeps that operand fewer times
  int64_t reduceSize = 1;
  for (const UOp *r : f.reduces)
    reduceSize *= rangeSize(r);
  // or, for a matmul-like kernel (one reduce) whose wide lanes leave several panels, wide lanes and cache blocks
  bool fits = lanesAxis && !unroll && reduceSize * rangeSize(lanesAxis) * f.elemBytes <= t.l2OperandBytes;
  int64_t wide = lanesAxis && !unroll ? amountFor(rangeSize(lanesAxis), t.panelLanes(f.elemBytes)) : 0;
  blockable = !fits && wide && rangeSize(lanesAxis) / wide >= 2 && !tile.empty() && f.reduces.size() == 1;
  if (fits || blockable)
    lanes = std::max(lanes, wide);
  // a convolution's window (several reduce ranges) with its output channels as lanes outside the pixels: each
  // panel of channels is read by every pixel tile in turn, so it is the panel that must stay in L2 (read again
  // by the next tile, it may take half of a 1 MiB one), not the whole weight; two vectors of channels load 2
  // weight vectors and a few broadcasts per 2 x pixels multiply-adds (a 14x14 3x3 layer, 160 -> 320 channels:
  // 7 x 32 at 150 GFLOPS, 7 x 2 x 16 at 132; 4 x 64 on 56x56 loads more of the panel from L2 than it saves)
  int64_t two = lanesAxis && !unroll ? amountFor(rangeSize(lanesAxis), 2 * width) : 0;
  auto inside = [&](const auto &t) { return rangeId(t.first) > rangeId(lanesAxis); };
  if (two == 2 * width && !fits && f.reduces.size() > 1 && std::ranges::all_of(tile, inside) &&
      reduceSize * two * f.elemBytes <= 2 * t.l2OperandBytes)
    lanes = std::max(lanes, two);
  int64_t total = lanes;
  for (int64_t cap : {4, 16}) {
    for (auto &[r, a] : tile) {
      int64_t grown = std::max<int64_t>(1, fillAmount(rangeSize(r), std::min(cap, a * (budget / total))));
      total = total / a * std::max(a, grown);
      a = std::max(a, grown);
    }
  }
  if (lanesAxis && !unroll)
    preferOddAxis(f, t, lanesAxis, budget, width, tile, lanes, total);
  if (lanesAxis && !unroll && total * 2 <= budget)
    preferLargestDivisor(budget, lanes, tile, total);
  // with 16 vector registers (AVX2), a tile over two axes (2 rows x 2 columns of a 14x14 map x 16 channels) gives
  // way to one row: its d columns x one vector, d up to the registers less the weight vector and the broadcast, where
  // the reduce is longer than the lanes axis (the input is the larger operand; nhcw-input lays its rows out
  // contiguously). 14 accumulators in flight instead of 8, one input row per step: 1x1 convolutions on 14x14,
  // 576 -> 96 channels 309 -> 247 us, 384 -> 64 166 -> 107 us; 96 -> 576 250 -> 267 us, so not there
  if (std::optional<std::pair<const UOp *, int64_t>> row = rowTile(f, tile, lanesAxis, unroll, total, width, t)) {
    for (auto &[r, a] : tile)
      a = r == row->first ? row->second : 1;
    lanes = width;
    total = width * row->second;
  }
  // what is left of the budget widens the lanes: powers of two, or the largest divisor where those fill less
  // than half (a 5x5 depthwise convolution on 28x28: 28 lanes, four chains of multiply-adds where 4 lanes made
  // one, 777 -> 170 us; a 3x3 max pool there 192 -> 104 us; of stride 2 on 56x56, 444 -> 217 us)
  if (lanesAxis && !unroll)
    lanes = std::max(lanes, fillAmount(rangeSize(lanesAxis), std::min(4 * width, lanes * (budget / total))));
  for (auto &[r, a] : tile)
    if (a > 1)
      actions.push_back({"upcast", rangeId(r), a, ""});
}

/// Independent accumulator chains that keep a core's two FMA (or add) units busy through their 4-cycle latency
/// (Haswell to Zen 4 and Sapphire Rapids alike).
constexpr int64_t kFmaChains = 8;

/// Accumulator chains for a register tile of fewer vector registers than kFmaChains, where the registers allow
/// more: an unroll of the reduce range by d keeps d partial sums of every accumulator, combined once after the
/// loops. d is the smallest divisor of the reduce's size that gives kFmaChains chains within the registers left by
/// the operands (a vector per lanes register, one broadcast), else the largest that fits. Applied before the
/// upcasts, its lanes vary slowest, so each partial sum is whole registers (no shuffles). On AVX2 a 1x1
/// convolution on 7x7 has a 7 x 8 tile (7 chains) and gets 14: 160 -> 960 channels 212 -> 187 us, 320 -> 1280
/// 674 -> 585 us. Not for a tile of one row (a depthwise convolution or a pool, bound by its window loads), a
/// convolution's window (several reduce ranges, whose flattened steps a 3x3 one on 7x7 keeps faster) or a reduce
/// of fewer than 32 steps.
std::optional<OptAction> chainUnroll(const KernelFacts &f, const TargetDesc &t, const UOp *lanesAxis,
                                     const std::vector<OptAction> &actions, int64_t width) {
  if (!t.vectorALU || f.reduceOps != 1 || f.reduces.size() != 1 || f.nestedReduces || !lanesAxis)
    return std::nullopt;
  int64_t rows = 1;
  int64_t lanes = 1;
  for (const OptAction &a : actions) {
    if (a.kind != "upcast")
      continue;
    (a.axis == rangeId(lanesAxis) ? lanes : rows) *= a.amount;
  }
  int64_t vectors = (lanes + width - 1) / width;
  int64_t chains = rows * vectors;
  int64_t room = t.vectorRegisters - vectors - 1;
  const UOp *r = f.reduces[0];
  int64_t n = rangeSize(r);
  // a short reduce's chains overlap with the next tile's in the out-of-order window
  if (chains >= kFmaChains || rows < 2 || n < 4 * kFmaChains)
    return std::nullopt;
  int64_t best = 0; // the smallest divisor reaching kFmaChains, else the largest that fits
  for (int64_t d = 2; d <= n && chains * d <= room && chains * best < kFmaChains; ++d)
    if (n % d == 0)
      best = d;
  if (!best)
    return std::nullopt;
  return OptAction{"unroll", rangeId(r), best, ""};
}

std::vector<OptAction> heuristicActions(const UOp *kernel, const TargetDesc &t) {
  if (t.hasLocal)
    return chooseGpuActions(kernel, t);
  KernelFacts f = factsOf(kernel);
  int64_t width = t.vectorLanes(f.elemBytes);
  // a kernel of nested reduces (a fused chain: a convolution of a convolution's output) computes its inner
  // reduces once per lane of the outer one: a register tile multiplies that code (inception_v2's 256-lane chain
  // made 3.9 MB of IR that LLVM's code generator did not finish in ten minutes), so it gets one vector of lanes;
  // side-by-side reduces (a convolution summed with its shortcut's) get the whole tile
  int64_t budget = f.nestedReduces ? width : t.tileBudget(f.elemBytes);
  LanesChoice choice = chooseLanesAxis(f, width);
  const UOp *lanesAxis = choice.axis;
  bool unroll = choice.unroll;
  bool strided = choice.strided;
  std::vector<OptAction> actions;
  int64_t lanes = !lanesAxis ? 1
                  : strided  ? spanLanes(rangeSize(lanesAxis), width, t)
                             : fillAmount(rangeSize(lanesAxis), width);
  bool blockable = false; // a matmul-like kernel whose lanes-axis operand is too big for L2: cache-block that axis
  if (!f.reduces.empty())
    chooseRegisterTile(f, t, lanesAxis, unroll, budget, width, lanes, blockable, actions);
  if (lanesAxis)
    actions.push_back({unroll ? "unroll" : "upcast", rangeId(lanesAxis), lanes, ""});
  fitLaneLimit(actions, t.maxLanes);
  if (blockable)
    if (std::optional<OptAction> b = cacheBlock(f, lanesAxis, actions, t))
      actions.push_back(*b);
  if (!blockable && lanesAxis && !unroll && f.reduces.size() == 1)
    if (std::optional<OptAction> b = panelBlock(f, lanesAxis, actions, t))
      actions.push_back(*b);
  int64_t lanesId = lanesAxis ? rangeId(lanesAxis) : -1;
  bool tiled = std::ranges::any_of(actions, [&](const OptAction &a) { return a.axis != lanesId; });
  bool blocked = std::ranges::any_of(actions, [](const OptAction &a) { return a.kind == "block"; });
  if (tiled && !blocked)
    if (std::optional<OptAction> b = sweepBlock(f, actions, t))
      actions.push_back(*b);
  if (!tiled)
    if (std::optional<OptAction> b = loadOrderBlock(f, lanesAxis))
      actions.push_back(*b);
  if (!unroll && !f.reduces.empty())
    if (std::optional<OptAction> c = chainUnroll(f, t, lanesAxis, actions, width))
      actions.insert(actions.begin(), *c); // first: its range gets the smallest id, its lanes vary slowest
  for (OptAction &a : actions)
    a.text = a.kind + ":" + std::to_string(a.axis) + ":" + std::to_string(a.amount);
  return actions;
}

std::string hashHex(std::string_view text) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string kernelTuningKey(const UOp *kernel) { return hashHex(printGraph(kernel)); }

namespace {

/// The actions for one kernel: the explicit ones, else the tuning table's entry, else the heuristics'.
std::optional<std::vector<OptAction>> actionsFor(const UOp *kernel,
                                                 const std::optional<std::vector<OptAction>> &explicitActions,
                                                 PassContext &pc, bool &tuned) {
  tuned = false;
  if (explicitActions)
    return *explicitActions;
  if (pc.tuned) {
    auto it = pc.tuned->find(kernelTuningKey(kernel));
    if (it != pc.tuned->end()) {
      std::string err;
      std::optional<std::vector<OptAction>> actions =
          it->second.empty() ? std::vector<OptAction>{} : parseOptActions(it->second, err);
      if (!actions) {
        pc.diags.error(Loc{pc.module.fileName, 0, 0},
                       "optimize: tuned actions of kernel " + kernelName(kernel) + ": " + err);
        return std::nullopt;
      }
      tuned = true;
      return actions;
    }
  }
  return heuristicActions(kernel, pc.target);
}

} // namespace

const UOp *runOptimize(const UOp *root, PassContext &pc) {
  if (pc.opts == "none")
    return root;
  std::optional<std::vector<OptAction>> explicitActions;
  if (!pc.opts.empty()) {
    std::string err;
    explicitActions = parseOptActions(pc.opts, err);
    if (!explicitActions) {
      pc.diags.error(Loc{pc.module.fileName, 0, 0}, "optimize: " + err);
      return nullptr;
    }
    for (const OptAction &a : *explicitActions) {
      if (std::string why = actionUnsupported(a, pc.target); !why.empty()) {
        pc.diags.error(Loc{pc.module.fileName, 0, 0}, "optimize: " + why);
        return nullptr;
      }
    }
  }
  std::unordered_map<const UOp *, const UOp *> done;
  std::map<std::string, int> uses; // explicit action -> kernels it applied to
  for (const UOp *u : toposort(root)) {
    if (u->op() != Op::Sink || !isKernelRoot(u))
      continue;
    bool tuned = false;
    std::optional<std::vector<OptAction>> actions = actionsFor(u, explicitActions, pc, tuned);
    if (!actions)
      return nullptr;
    const UOp *k = u;
    std::string applied;
    for (const OptAction &a : *actions) {
      if (const UOp *next = applyOptAction(k, a)) {
        k = next;
        applied += (applied.empty() ? "" : ",") + a.text;
        pc.stats["optimize." + a.kind] += 1;
        uses[a.text] += 1;
      } else if (tuned) { // a tuning entry is for exactly this kernel: every action must apply
        pc.diags.error(Loc{pc.module.fileName, 0, 0},
                       "optimize: tuned action '" + a.text + "' does not apply to kernel " + kernelName(u));
        return nullptr;
      }
    }
    if (k != u)
      done[u] = k;
    if (tuned)
      pc.stats["optimize.tuned-kernels"] += 1;
    pc.module.remarks.push_back(kernelName(u) + ": " + (applied.empty() ? "no actions" : applied) +
                                (tuned ? " (tuned)" : ""));
  }
  for (const OptAction &a : explicitActions.value_or(std::vector<OptAction>{})) {
    if (uses[a.text] == 0) {
      pc.diags.error(Loc{pc.module.fileName, 0, 0}, "optimize: '" + a.text + "' applies to no kernel");
      return nullptr;
    }
  }
  return substitute(root, done);
}

} // namespace tgc
