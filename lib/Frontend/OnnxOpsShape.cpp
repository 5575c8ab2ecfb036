//===- OnnxOpsShape.cpp - ONNX shape, movement and constant operators -*- C++ -*-===//
// Reshape, Transpose, Slice, Gather, Concat, Pad, ... as movement ops; Shape, Constant, Range as known data.
//===----------------------------------------------------------------------===//

#include "Frontend/OnnxImporter.h"

#include "IR/Sugar.h"
#include "IR/SymbolicDims.h"
#include "Interp/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tgc::onnximport {
namespace {

/// Folding known shapes and tables: ConstantOfShape stays known data up to this many elements.
constexpr int64_t kKnownLimit = 1 << 16;

std::string shapeText(const Shape &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// Axes from the attribute (older opsets) or input 1 (opset >= `since`); nullopt when neither is given.
std::optional<std::vector<int64_t>> axesOf(NodeCtx &n, int64_t since, size_t input = 1) {
  if (n.opset() < since)
    return n.hasAttr("axes") ? std::optional(n.attrInts("axes")) : std::nullopt;
  return n.has(input) ? std::optional(n.ints(input, "axes")) : std::nullopt;
}

std::vector<int64_t> normalizeAxes(NodeCtx &n, std::vector<int64_t> axes, int64_t rank) {
  for (int64_t &a : axes)
    a = n.axis(a, rank);
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    n.fail("an axis is repeated");
  return axes;
}

} // namespace

void importReshape(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::vector<int64_t> target = n.opset() < 5 ? n.attrInts("shape") : n.ints(1, "shape");
  bool allowZero = n.attrInt("allowzero", 0) != 0;
  Shape out;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allowZero) {
      if (int64_t(i) >= x->rank())
        n.fail("shape " + shapeText(target) + " copies axis " + std::to_string(i) + " of a rank-" +
               std::to_string(x->rank()) + " tensor");
      d = x->shape()[i];
    }
    if (d == -1) {
      if (infer >= 0)
        n.fail("shape " + shapeText(target) + " has more than one -1");
      infer = int64_t(i);
      out.push_back(1);
      continue;
    }
    if (d < 0)
      n.fail("shape " + shapeText(target) + " has a negative size");
    if (__builtin_mul_overflow(known, d, &known))
      n.fail("shape " + shapeText(target) + " has too many elements");
    out.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || x->numel() % known != 0)
      n.fail("cannot reshape " + shapeText(x->shapeVec()) + " to " + shapeText(target));
    out[size_t(infer)] = x->numel() / known;
  }
  n.out(0, n.reshape(x, out));
}

void importFlatten(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t a = n.attrInt("axis", 1), r = x->rank();
  if (a < -r || a > r)
    n.fail("axis " + std::to_string(a) + " is outside [-" + std::to_string(r) + ", " + std::to_string(r) + "]");
  if (a < 0)
    a += r;
  int64_t outer = 1;
  for (int64_t i = 0; i < a; ++i)
    outer *= x->shape()[size_t(i)];
  n.out(0, n.reshape(x, {outer, outer == 0 ? 0 : x->numel() / outer}));
}

void importSqueeze(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::optional<std::vector<int64_t>> axes = axesOf(n, 13);
  std::vector<int64_t> drop = axes ? normalizeAxes(n, *axes, x->rank()) : std::vector<int64_t>{};
  Shape out;
  for (int64_t i = 0; i < x->rank(); ++i) {
    bool listed = std::find(drop.begin(), drop.end(), i) != drop.end();
    int64_t d = x->shape()[size_t(i)];
    if (listed && d != 1)
      n.fail("cannot squeeze axis " + std::to_string(i) + " of size " + std::to_string(d));
    if (!(listed || (!axes && d == 1)))
      out.push_back(d);
  }
  n.out(0, n.reshape(x, out));
}

void importUnsqueeze(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::optional<std::vector<int64_t>> axes = axesOf(n, 13);
  if (!axes)
    n.fail("needs axes");
  int64_t rank = x->rank() + int64_t(axes->size());
  std::vector<int64_t> add = normalizeAxes(n, *axes, rank);
  Shape out;
  for (int64_t i = 0, k = 0; i < rank; ++i)
    out.push_back(std::find(add.begin(), add.end(), i) != add.end() ? 1 : x->shape()[size_t(k++)]);
  n.out(0, n.reshape(x, out));
}

void importTranspose(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::vector<int64_t> perm;
  for (int64_t i = x->rank() - 1; i >= 0; --i)
    perm.push_back(i);
  perm = n.attrInts("perm", perm);
  n.out(0, n.permute(x, perm));
}

void importConcat(NodeCtx &n) {
  std::vector<const UOp *> src;
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (n.has(i) && (src.empty() || n.in(i)->numel() > 0 || n.in(i)->rank() != n.in(0)->rank()))
      src.push_back(n.in(i)); // empty operands add nothing
  if (src.empty())
    n.fail("needs at least one input");
  int64_t a = n.attrInt("axis", 0);
  n.out(0, src.size() == 1 ? src[0] : n.make(Op::Concat, src, Arg(a)));
}

void importSplit(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t a = n.axis(n.attrInt("axis", 0), x->rank());
  int64_t len = x->shape()[size_t(a)], parts = int64_t(n.numOutputs());
  std::vector<int64_t> sizes;
  if (n.opset() < 13 && n.hasAttr("split"))
    sizes = n.attrInts("split");
  else if (n.opset() >= 13 && n.has(1))
    sizes = n.ints(1, "split");
  int64_t num = n.attrInt("num_outputs", parts);
  if (num != parts)
    n.fail("num_outputs is " + std::to_string(num) + " but the node has " + std::to_string(parts) + " outputs");
  if (sizes.empty()) { // equal parts, the last smaller (opset 18), or exactly equal before
    int64_t each = num > 0 ? (len + num - 1) / num : 0;
    if (n.opset() < 18 && num > 0 && len % num != 0)
      n.fail("axis of size " + std::to_string(len) + " does not split into " + std::to_string(num) + " equal parts");
    for (int64_t i = 0; i < num; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(each, len - i * each)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || __builtin_add_overflow(total, s, &total))
      n.fail("split sizes must not be negative or overflow");
  }
  if (total != len || int64_t(sizes.size()) != parts)
    n.fail("split sizes do not match the axis (" + std::to_string(len) + ") and the outputs (" + std::to_string(parts) +
           ")");
  int64_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    n.out(i, n.shrinkAxis(x, a, at, at + sizes[i]));
    at += sizes[i];
  }
}

/// ONNX's clamping: a positive step takes start in [0, d] and end in [0, d]; a negative step start in [0, d-1]
/// and end in [-1, d-1]. A negative step becomes a flip and a positive step.
void importSlice(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset() < 10) {
    starts = n.attrInts("starts");
    ends = n.attrInts("ends");
    axes = n.attrInts("axes");
  } else {
    starts = n.ints(1, "starts");
    ends = n.ints(2, "ends");
    if (n.has(3))
      axes = n.ints(3, "axes");
    if (n.has(4))
      steps = n.ints(4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    n.fail("starts, ends, axes and steps have different lengths");
  axes = normalizeAxes(n, axes, x->rank());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i], d = x->shape()[size_t(a)], step = steps[i];
    if (step == 0)
      n.fail("a step is 0");
    auto clampIdx = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + d : v, lo, hi); };
    int64_t s = clampIdx(starts[i], 0, step > 0 ? d : d - 1);
    int64_t e = clampIdx(ends[i], step > 0 ? 0 : -1, step > 0 ? d : d - 1);
    if (step < 0) { // reversed: positions d-1-s .. d-1-e in the flipped axis
      x = n.flip(x, {a});
      s = d - 1 - s;
      e = d - 1 - e;
      step = -step;
    }
    x = n.strided(n.shrinkAxis(x, a, s, std::max(s, e)), a, step);
  }
  n.out(0, x);
}

/// Gather(data, indices, axis): out = data[:, ..., indices[...], ...]. A known scalar index is a shrink; other
/// indices move the axis first and use tgc's embedding (one-hot) lookup of rows.
void importGather(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t a = n.axis(n.attrInt("axis", 0), x->rank());
  int64_t len = x->shape()[size_t(a)];
  Shape before(x->shape().begin(), x->shape().begin() + a), after(x->shape().begin() + a + 1, x->shape().end());
  if (const rt::Array *idx = n.host(1); idx && idx->numel() == 1 && idx->shape.empty()) {
    int64_t i = elementInt(*idx, 0);
    if (i < -len || i >= len)
      n.fail("index " + std::to_string(i) + " is outside an axis of size " + std::to_string(len));
    i = i < 0 ? i + len : i;
    Shape out = before;
    out.insert(out.end(), after.begin(), after.end());
    return n.out(0, n.reshape(n.shrinkAxis(x, a, i, i + 1), out));
  }
  const UOp *idx = n.in(1);
  if (!idx->dtype().isInt())
    n.fail("indices must be integers");
  const UOp *zero = n.scalar(idx->dtype(), 0);
  idx = n.where(n.alu(Op::Cmplt, idx, zero), n.alu(Op::Add, idx, n.scalar(idx->dtype(), double(len))), idx);
  int64_t rest = 1;
  for (int64_t d : before)
    rest *= d;
  for (int64_t d : after)
    rest *= d;
  const UOp *table = n.reshape(n.moveAxis(x, a, 0), {len, rest});
  const UOp *rows = n.make(Op::Embedding, {table, idx}); // idx.shape + [rest]
  Shape split = idx->shapeVec();
  split.insert(split.end(), before.begin(), before.end());
  split.insert(split.end(), after.begin(), after.end());
  rows = n.reshape(rows, split);
  // axes: [idx..., before..., after...] -> [before..., idx..., after...]
  int64_t ir = idx->rank(), br = int64_t(before.size()), ar = int64_t(after.size());
  std::vector<int64_t> order;
  for (int64_t i = 0; i < br; ++i)
    order.push_back(ir + i);
  for (int64_t i = 0; i < ir; ++i)
    order.push_back(i);
  for (int64_t i = 0; i < ar; ++i)
    order.push_back(ir + br + i);
  n.out(0, n.permute(rows, order));
}

void importGatherElements(NodeCtx &n) {
  const UOp *x = n.in(0), *idx = n.in(1);
  int64_t a = n.axis(n.attrInt("axis", 0), x->rank());
  const UOp *len = n.scalar(idx->dtype(), double(x->shape()[size_t(a)]));
  idx = n.where(n.alu(Op::Cmplt, idx, n.scalar(idx->dtype(), 0)), n.alu(Op::Add, idx, len), idx);
  n.out(0, n.make(Op::Gather, {x, idx}, Arg(a)));
}

/// Expand broadcasts both ways: the result is the broadcast of the input's shape and the given one.
void importExpand(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::vector<int64_t> s = n.ints(1, "shape");
  std::optional<Shape> out = broadcastShapes(x->shapeVec(), s);
  if (!out)
    n.fail("cannot expand " + shapeText(x->shapeVec()) + " to " + shapeText(s));
  n.out(0, n.expand(x, *out));
}

void importTile(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::vector<int64_t> reps = n.ints(1, "repeats");
  if (int64_t(reps.size()) != x->rank())
    n.fail("repeats has " + std::to_string(reps.size()) + " values for a rank-" + std::to_string(x->rank()) +
           " tensor");
  Shape s = x->shapeVec(), inter, expanded, out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (reps[i] < 0)
      n.fail("repeats must not be negative");
    int64_t len;
    if (__builtin_mul_overflow(reps[i], s[i], &len))
      n.fail("repeats make too many elements");
    inter.insert(inter.end(), {1, s[i]});
    expanded.insert(expanded.end(), {reps[i], s[i]});
    out.push_back(len);
  }
  n.out(0, n.reshape(n.expand(n.reshape(x, inter), expanded), out));
}

/// Pad: pads [b1, ..., bn, e1, ..., en] (negative pads crop), modes constant, reflect and edge.
void importPad(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::string mode = n.attrString("mode", "constant");
  std::vector<int64_t> pads = n.opset() < 11 ? n.attrInts("pads") : n.ints(1, "pads");
  double value = n.opset() < 11 ? n.attrFloat("value", 0.0) : (n.has(2) ? n.scalarOf(2, "constant_value") : 0.0);
  std::vector<int64_t> axes;
  if (n.opset() >= 18 && n.has(3))
    axes = normalizeAxes(n, n.ints(3, "axes"), x->rank());
  else
    for (int64_t i = 0; i < x->rank(); ++i)
      axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    n.fail("pads has " + std::to_string(pads.size()) + " values for " + std::to_string(axes.size()) + " axes");
  std::vector<std::pair<int64_t, int64_t>> grow(size_t(x->rank()), {0, 0}), crop;
  for (int64_t i = 0; i < x->rank(); ++i)
    crop.push_back({0, x->shape()[size_t(i)]});
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t b = pads[k], e = pads[k + axes.size()], a = axes[k];
    grow[size_t(a)] = {std::max<int64_t>(b, 0), std::max<int64_t>(e, 0)};
    crop[size_t(a)] = {std::max<int64_t>(-b, 0), x->shape()[size_t(a)] - std::max<int64_t>(-e, 0)};
    if (crop[size_t(a)].first > crop[size_t(a)].second)
      n.fail("negative pads remove more than axis " + std::to_string(a) + " has");
  }
  x = n.shrink(x, crop);
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    n.fail("mode '" + mode + "' is not supported (constant, reflect, edge)");
  Arg::Tuple pairs;
  bool none = true;
  for (const auto &[b, e] : grow) {
    pairs.push_back(Arg::ints({b, e}));
    none = none && b == 0 && e == 0;
  }
  if (none)
    return n.out(0, x);
  Arg::Tuple arg{Arg(pairs), Arg(mode)};
  if (mode == "constant")
    arg.push_back(Arg(value));
  n.out(0, n.make(Op::PadMode, {x}, Arg(arg)));
}

// --- index computations -----------------------------------------------------------------------------------------

/// ArgMax / ArgMin: the first (or last) position of the extreme value: max over where(x == m, i, n) negated.
void importArgExtreme(NodeCtx &n, bool isMax) {
  const UOp *x = n.in(0);
  int64_t a = n.axis(n.attrInt("axis", 0), x->rank());
  bool keep = n.attrInt("keepdims", 1) != 0, last = n.attrInt("select_last_index", 0) != 0;
  DType d = x->dtype();
  const UOp *m;
  if (isMax)
    m = n.reduce(x, Op::Max, {a});
  else if (d.isFloat())
    m = n.unary(Op::Neg, n.reduce(n.unary(Op::Neg, x), Op::Max, {a}));
  else
    m = n.alu(Op::Xor, n.reduce(n.alu(Op::Xor, x, n.ctx().constInt(d, -1, Shape{})), Op::Max, {a}),
              n.ctx().constInt(d, -1, Shape{}));
  int64_t len = n.tableSize(x->shape()[size_t(a)], "the positions along the axis");
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < len; ++i)
    pos.push_back(last ? i : len - 1 - i); // the max of (len-1-i) picks the first i
  Shape ps(size_t(x->rank()), 1);
  ps[size_t(a)] = len;
  const UOp *idx = n.constant(makeIntArray(rt::ElemType::I64, ps, pos), n.derivedName(".positions"));
  const UOp *hit = n.alu(Op::Cmpeq, x, m);
  const UOp *best = n.reduce(
      n.where(hit, n.expand(idx, x->shapeVec()), n.ctx().constInt(DType(Scalar::I64), -1, Shape{})), Op::Max, {a});
  if (!last)
    best = n.alu(Op::Sub, n.ctx().constInt(DType(Scalar::I64), len - 1, Shape{}), best);
  if (!keep) {
    Shape s = best->shapeVec();
    s.erase(s.begin() + a);
    best = n.reshape(best, s);
  }
  n.out(0, best);
}

void importArgMax(NodeCtx &n) { importArgExtreme(n, true); }
void importArgMin(NodeCtx &n) { importArgExtreme(n, false); }

/// CumSum along a known axis; reverse flips around it, exclusive shifts by one.
void importCumSum(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::vector<int64_t> ax = n.ints(1, "axis");
  if (ax.size() != 1)
    n.fail("axis must have one element");
  int64_t a = n.axis(ax[0], x->rank());
  bool exclusive = n.attrInt("exclusive", 0) != 0, reverse = n.attrInt("reverse", 0) != 0;
  int64_t len = x->shape()[size_t(a)];
  if (reverse)
    x = n.flip(x, {a});
  if (exclusive && len > 0) { // [0, x0, x1, ...]: pad one zero before, drop the last
    std::vector<std::pair<int64_t, int64_t>> p(size_t(x->rank()), {0, 0});
    p[size_t(a)] = {1, 0};
    x = n.shrinkAxis(n.pad(x, p), a, 0, len);
  }
  const UOp *y = n.make(Op::Cumsum, {x}, Arg(a));
  n.out(0, reverse ? n.flip(y, {a}) : y);
}

/// Trilu: keep the upper (j - i >= k) or lower (j - i <= k) triangle of the last two axes; the mask is known data.
void importTrilu(NodeCtx &n) {
  const UOp *x = n.in(0);
  if (x->rank() < 2)
    n.fail("needs an input of rank 2 or more");
  int64_t k = n.has(1) ? int64_t(n.scalarOf(1, "k")) : 0;
  bool upper = n.attrInt("upper", 1) != 0;
  int64_t rows = x->shape()[size_t(x->rank() - 2)], cols = x->shape()[size_t(x->rank() - 1)], cells;
  if (__builtin_mul_overflow(rows, cols, &cells))
    cells = INT64_MAX;
  n.tableSize(cells, "the mask");
  std::vector<int64_t> mask;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.push_back(upper ? j - i >= k : j - i <= k);
  const UOp *m = n.constant(makeIntArray(rt::ElemType::Bool, {rows, cols}, mask), n.derivedName(".mask"));
  n.out(0, n.where(m, x, n.scalar(x->dtype(), 0)));
}

/// SpaceToDepth: [N, C, H, W] -> [N, C*b*b, H/b, W/b] (DCR order of the reference).
void importSpaceToDepth(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t b = n.attrInt("blocksize", 0);
  if (x->rank() != 4 || b <= 0 || x->shape()[2] % b || x->shape()[3] % b)
    n.fail("needs an [N, C, H, W] input whose H and W divide by blocksize");
  int64_t N = x->shape()[0], C = x->shape()[1], H = x->shape()[2], W = x->shape()[3];
  const UOp *y = n.permute(n.reshape(x, {N, C, H / b, b, W / b, b}), {0, 3, 5, 1, 2, 4});
  n.out(0, n.reshape(y, {N, C * b * b, H / b, W / b}));
}

/// DepthToSpace: [N, C, H, W] -> [N, C/(b*b), H*b, W*b], modes DCR (default) and CRD.
void importDepthToSpace(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t b = n.attrInt("blocksize", 0);
  std::string mode = n.attrString("mode", "DCR");
  if (x->rank() != 4 || b <= 0 || x->shape()[1] % (b * b))
    n.fail("needs an [N, C, H, W] input whose C divides by blocksize^2");
  int64_t N = x->shape()[0], C = x->shape()[1], H = x->shape()[2], W = x->shape()[3], c = C / (b * b);
  const UOp *y;
  if (mode == "DCR")
    y = n.permute(n.reshape(x, {N, b, b, c, H, W}), {0, 3, 4, 1, 5, 2});
  else if (mode == "CRD")
    y = n.permute(n.reshape(x, {N, c, b, b, H, W}), {0, 1, 4, 2, 5, 3});
  else
    n.fail("mode '" + mode + "' is not one of DCR, CRD");
  n.out(0, n.reshape(y, {N, c, H * b, W * b}));
}

/// OneHot(indices, depth, values): out[..., j, ...] = values[1] if indices == j (negative indices wrap) else values[0].
void importOneHot(NodeCtx &n) {
  const UOp *idx = n.in(0), *values = n.in(2);
  int64_t depth = int64_t(n.scalarOf(1, "depth"));
  if (depth <= 0 || values->numel() != 2)
    n.fail("depth must be positive and values have two elements");
  n.tableSize(depth, "the positions of depth");
  int64_t r = idx->rank() + 1;
  int64_t a = n.axis(n.attrInt("axis", -1), r);
  if (idx->dtype().isFloat())
    idx = n.cast(idx, DType(Scalar::I64));
  DType id = idx->dtype();
  idx = n.where(n.alu(Op::Cmplt, idx, n.scalar(id, 0)), n.alu(Op::Add, idx, n.scalar(id, double(depth))), idx);
  Shape withAxis = idx->shapeVec();
  withAxis.insert(withAxis.begin() + a, 1);
  Shape full = withAxis;
  full[size_t(a)] = depth;
  Shape ps(size_t(r), 1);
  ps[size_t(a)] = depth;
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < depth; ++i)
    pos.push_back(i);
  std::optional<rt::ElemType> et = interp::elemTypeOf(id);
  const UOp *p = n.constant(makeIntArray(*et, ps, pos), n.derivedName(".positions"));
  const UOp *hit = n.alu(Op::Cmpeq, n.expand(n.reshape(idx, withAxis), full), n.expand(p, full));
  const UOp *off = n.reshape(n.shrinkAxis(values, 0, 0, 1), {});
  const UOp *on = n.reshape(n.shrinkAxis(values, 0, 1, 2), {});
  n.out(0, n.where(hit, n.expand(on, full), n.expand(off, full)));
}

// --- known data ---------------------------------------------------------------------------------------------------

/// Shape and Size are computed at import: an axis that is a variable (--dim NAME=LO..HI) has no size yet.
void failOnVariable(NodeCtx &n, const UOp *x, int64_t axis) {
  std::span<const UOp *const> vars = x->dimVars();
  if (size_t(axis) < vars.size() && vars[size_t(axis)])
    n.fail("the model computes with the size of the variable dimension '" + varName(vars[size_t(axis)]) + "' (axis " +
           std::to_string(axis) + "); give it a size with --dim NAME=SIZE");
}

void importShape(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t r = x->rank();
  int64_t start = n.attrInt("start", 0), end = n.attrInt("end", r);
  start = std::clamp(start < 0 ? start + r : start, int64_t(0), r);
  end = std::clamp(end < 0 ? end + r : end, int64_t(0), r);
  for (int64_t i = start; i < end; ++i)
    failOnVariable(n, x, i);
  std::vector<int64_t> dims(x->shape().begin() + start, x->shape().begin() + std::max(start, end));
  n.outHost(0, makeIntArray(rt::ElemType::I64, {int64_t(dims.size())}, dims));
}

void importSize(NodeCtx &n) {
  for (int64_t i = 0; i < n.in(0)->rank(); ++i)
    failOnVariable(n, n.in(0), i);
  n.outHost(0, makeIntArray(rt::ElemType::I64, {}, {n.in(0)->numel()}));
}

void importConstant(NodeCtx &n) {
  if (n.hasAttr("sparse_value") || n.hasAttr("value_string") || n.hasAttr("value_strings"))
    n.fail("sparse and string constants are not supported");
  if (const onnx::TensorProto *t = n.attrTensor("value")) {
    rt::Array a;
    std::string err;
    if (!tensorFromProto(*t, ".", a, err))
      n.fail("value: " + err);
    return n.outHost(0, std::move(a));
  }
  if (n.hasAttr("value_float"))
    return n.outHost(0, makeArray(rt::ElemType::F32, {}, {n.attrFloat("value_float", 0)}));
  if (n.hasAttr("value_int"))
    return n.outHost(0, makeIntArray(rt::ElemType::I64, {}, {n.attrInt("value_int", 0)}));
  if (n.hasAttr("value_floats")) {
    std::vector<double> v = n.attrFloats("value_floats");
    return n.outHost(0, makeArray(rt::ElemType::F32, {int64_t(v.size())}, v));
  }
  if (n.hasAttr("value_ints")) {
    std::vector<int64_t> v = n.attrInts("value_ints");
    return n.outHost(0, makeIntArray(rt::ElemType::I64, {int64_t(v.size())}, v));
  }
  n.fail("has no value");
}

void importConstantOfShape(NodeCtx &n) {
  std::vector<int64_t> s = n.ints(0, "input");
  rt::Array value = makeArray(rt::ElemType::F32, {1}, {0.0});
  if (const onnx::TensorProto *t = n.attrTensor("value")) {
    std::string err;
    if (!tensorFromProto(*t, ".", value, err))
      n.fail("value: " + err);
    if (value.numel() != 1)
      n.fail("value must have one element");
  }
  int64_t count = rt::checkedNumel(s);
  if (count < 0)
    n.fail("shape " + shapeText(s) + " is not valid");
  DType d = interp::dtypeOf(value.type);
  if (count > kKnownLimit) {
    const UOp *c =
        d.isFloat() ? n.ctx().constant(d, elementDouble(value, 0), s) : n.ctx().constInt(d, elementInt(value, 0), s);
    return n.out(0, c);
  }
  rt::Array a = value;
  a.shape = s;
  a.data.clear();
  for (int64_t i = 0; i < count; ++i)
    a.data.insert(a.data.end(), value.data.begin(), value.data.end());
  n.outHost(0, std::move(a));
}

/// Range(start, limit, delta): start + i*delta for i < max(ceil((limit - start) / delta), 0), computed now.
void importRange(NodeCtx &n) {
  const rt::Array *s = n.host(0);
  if (!s || !n.host(1) || !n.host(2))
    n.fail("start, limit and delta must be known when the model is compiled (the length is a shape)");
  double start = n.scalarOf(0, "start"), limit = n.scalarOf(1, "limit"), delta = n.scalarOf(2, "delta");
  if (delta == 0)
    n.fail("delta is 0");
  double count = std::ceil((limit - start) / delta);
  if (!(count < double(kKnownLimit) * 64))
    n.fail("the range is too long");
  int64_t len = std::max<int64_t>(0, int64_t(count));
  bool isFloat = interp::dtypeOf(s->type).isFloat();
  std::vector<double> v;
  std::vector<int64_t> iv;
  for (int64_t i = 0; i < len; ++i) {
    v.push_back(start + double(i) * delta);
    iv.push_back(elementInt(*s, 0) + i * elementInt(*n.host(2), 0));
  }
  n.outHost(0, isFloat ? makeArray(s->type, {len}, v) : makeIntArray(s->type, {len}, iv));
}

} // namespace tgc::onnximport
