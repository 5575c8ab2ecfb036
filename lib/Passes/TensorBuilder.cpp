//===- TensorBuilder.cpp - Building tensor graphs like tinygrad's Tensor -*- C++ -*-===//
// Every method makes tensor-level UOps through the Context; shapes are computed here and checked by make().
//===----------------------------------------------------------------------===//

#include "Passes/TensorBuilder.h"

#include "IR/SymbolicDims.h"

#include "IR/Infer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tgc {

namespace {
int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
} // namespace

int64_t Tensor::dim(int64_t axis) const {
  Shape s = shape();
  return s[size_t(axis < 0 ? axis + int64_t(s.size()) : axis)];
}

Tensor Tensor::scalar(const Tensor &like, double v) { return scalarOf(like.ctx(), like.dtype(), v); }

Tensor Tensor::scalarOf(Context &ctx, DType d, double v) { return ctx.constant(d, v, Shape{}); }

Tensor Tensor::full(Context &ctx, DType d, const Shape &s, double v) { return ctx.constant(d, v, s); }

Tensor Tensor::fullLike(const Tensor &like, DType d, double v) {
  const UOp *c = like.ctx().constant(d, v);
  return like.ctx().make(Op::Const, d, {}, c->arg(), like.shape(), {}, like.uop()->dimVars());
}

// --- movement ---------------------------------------------------------------------------------------------------

static const UOp *movement(const Tensor &t, Op op, Arg arg, const std::optional<Shape> &declared) {
  const UOp *src[] = {t.uop()};
  InferredShape s = inferShape(op, t.dtype(), src, arg, declared);
  if (!s.error.empty())
    throw TensorShapeError{"'" + std::string(opName(op)) + "' " + s.error};
  return t.ctx().make(op, t.dtype(), src, std::move(arg), s.shape);
}

Tensor Tensor::reshape(const Shape &s) const {
  if (s == shape())
    return *this;
  return movement(*this, Op::Reshape, Arg(), s);
}

Tensor Tensor::expand(const Shape &s) const {
  if (s == shape())
    return *this;
  return movement(*this, Op::Expand, Arg(), s);
}

Tensor Tensor::permute(const std::vector<int64_t> &order) const {
  std::vector<int64_t> id(order.size());
  std::iota(id.begin(), id.end(), 0);
  if (order == id)
    return *this;
  return movement(*this, Op::Permute, Arg::ints(order), std::nullopt);
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>> &p) const {
  Shape s = shape();
  std::vector<std::pair<int64_t, int64_t>> grow, cut;
  bool anyGrow = false, anyCut = false;
  for (size_t i = 0; i < p.size(); ++i) {
    grow.emplace_back(std::max<int64_t>(p[i].first, 0), std::max<int64_t>(p[i].second, 0));
    cut.emplace_back(std::max<int64_t>(-p[i].first, 0), s[i] - std::max<int64_t>(-p[i].second, 0));
    anyGrow = anyGrow || grow.back().first || grow.back().second;
    anyCut = anyCut || p[i].first < 0 || p[i].second < 0;
  }
  Tensor t = anyCut ? shrink(cut) : *this;
  if (!anyGrow)
    return t;
  Arg::Tuple pairs;
  for (auto [b, a] : grow)
    pairs.push_back(Arg::ints({b, a}));
  return movement(t, Op::Pad, Arg(pairs), std::nullopt);
}

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>> &b) const {
  Shape s = shape();
  bool same = true;
  Arg::Tuple pairs;
  for (size_t i = 0; i < b.size(); ++i) {
    same = same && b[i].first == 0 && b[i].second == s[i];
    pairs.push_back(Arg::ints({b[i].first, b[i].second}));
  }
  if (same)
    return *this;
  return movement(*this, Op::Shrink, Arg(pairs), std::nullopt);
}

Tensor Tensor::flip(const std::vector<int64_t> &axes) const {
  if (axes.empty())
    return *this;
  return movement(*this, Op::Flip, Arg::ints(axes), std::nullopt);
}

Tensor Tensor::padValue(const std::vector<std::pair<int64_t, int64_t>> &p, double v) const {
  Tensor padded = pad(p);
  if (v == 0)
    return padded;
  Tensor inside = fullLike(*this, dt::Bool, 1).pad(p);
  return inside.where(padded, scalar(*this, v));
}

Tensor Tensor::broadcastTo(const Shape &s, const std::vector<const UOp *> &vars) const {
  Shape cur = shape();
  if (cur == s)
    return *this;
  Shape padded(s.size() - cur.size(), 1);
  padded.insert(padded.end(), cur.begin(), cur.end());
  Tensor r = reshape(padded);
  return r.shape() == s ? r : Tensor(ctx().make(Op::Expand, dtype(), {r.uop()}, Arg(), s, {}, vars));
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  std::vector<int64_t> order(static_cast<size_t>(rank()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[size_t(a)], order[size_t(b)]);
  return permute(order);
}

Tensor Tensor::moveToEnd(int64_t axis) const {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < rank(); ++i)
    if (i != axis)
      order.push_back(i);
  order.push_back(axis);
  return permute(order);
}

Tensor Tensor::repeatLast(int64_t n) const {
  Shape s = shape();
  int64_t i = s.back();
  Shape one = s;
  one.insert(one.end() - 1, 1);
  Shape many = one;
  many[many.size() - 2] = n;
  Shape flat = s;
  flat.back() = n * i;
  return reshape(one).expand(many).reshape(flat);
}

// --- elementwise ------------------------------------------------------------------------------------------------

static Shape broadcastShape(const Shape &a, const Shape &b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1)
      internalError("tensor builder: shapes " + shapeStr(a) + " and " + shapeStr(b) + " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// Operands of an elementwise op: rank-0 ones stay as they are (the IR broadcasts them), others are expanded.
static std::vector<const UOp *> operands(std::initializer_list<Tensor> ts) {
  Shape s;
  std::vector<const UOp *> in;
  for (const Tensor &t : ts) {
    in.push_back(t.uop());
    if (t.rank() > 0)
      s = broadcastShape(s, t.shape());
  }
  std::vector<const UOp *> vars = broadcastVars(in, s); // a broadcast to a variable axis expands to the variable
  std::vector<const UOp *> out;
  for (const Tensor &t : ts)
    out.push_back(t.rank() == 0 ? t.uop() : t.broadcastTo(s, vars).uop());
  return out;
}

Tensor Tensor::alu(Op op, const Tensor &b) const { return ctx().alu(op, operands({*this, b})); }

Tensor Tensor::where(const Tensor &a, const Tensor &b) const { return ctx().alu(Op::Where, operands({*this, a, b})); }

Tensor Tensor::exp() const { return (*this * (1.0 / M_LN2)).exp2(); }
Tensor Tensor::log() const { return log2() * M_LN2; }

Tensor operator+(const Tensor &a, const Tensor &b) { return a.alu(Op::Add, b); }
Tensor operator-(const Tensor &a, const Tensor &b) { return a.alu(Op::Sub, b); }
Tensor operator*(const Tensor &a, const Tensor &b) { return a.alu(Op::Mul, b); }
Tensor operator/(const Tensor &a, const Tensor &b) {
  if (a.dtype().isFloat())
    return a * b.recip();
  return a.alu(Op::Idiv, b);
}
Tensor operator+(const Tensor &a, double b) { return a + Tensor::scalar(a, b); }
Tensor operator-(const Tensor &a, double b) { return a - Tensor::scalar(a, b); }
Tensor operator*(const Tensor &a, double b) { return a * Tensor::scalar(a, b); }

// --- reductions -------------------------------------------------------------------------------------------------

Tensor Tensor::reduce(Op op, const std::vector<int64_t> &axes) const {
  if (axes.empty())
    return *this;
  std::vector<int64_t> norm;
  for (int64_t a : axes)
    norm.push_back(a < 0 ? a + rank() : a);
  std::sort(norm.begin(), norm.end());
  Arg arg = Arg::tuple({Arg(op), Arg::ints(norm)});
  const UOp *src[] = {u_};
  InferredShape s = inferShape(Op::ReduceAxis, dtype(), src, arg, std::nullopt);
  if (!s.error.empty())
    throw TensorShapeError{"'reduce_axis' " + s.error};
  return ctx().make(Op::ReduceAxis, dtype(), src, arg, s.shape);
}

Tensor Tensor::mean(const std::vector<int64_t> &axes) const {
  int64_t n = 1;
  for (int64_t a : axes) {
    if (u_->dimVar(size_t(a < 0 ? a + rank() : a)))
      throw TensorShapeError{"cannot average over a variable axis (its size is known only at run time)"};
    n *= dim(a);
  }
  return sum(axes) * (1.0 / double(n));
}

// --- sliding windows ----------------------------------------------------------------------------------------------

namespace {

/// The axes of a pool: `lead` axes kept as they are (noop), then one window axis per kernel size, of input size `in`
/// and output size `out`.
struct PoolAxes {
  size_t lead;
  Shape noop;
  std::vector<int64_t> in, out;

  /// The kept axes followed by `tail`.
  Shape keep(const Shape &tail) const {
    Shape r = noop;
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  }
  /// Whole kept axes followed by `tail`'s bounds.
  std::vector<std::pair<int64_t, int64_t>> bounds(const std::vector<std::pair<int64_t, int64_t>> &tail) const {
    std::vector<std::pair<int64_t, int64_t>> r;
    for (int64_t d : noop)
      r.emplace_back(0, d);
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  }
  /// The kept axes' indices, in order.
  std::vector<int64_t> leadOrder() const {
    std::vector<int64_t> order;
    for (size_t j = 0; j < lead; ++j)
      order.push_back(int64_t(j));
    return order;
  }
};

/// Windows that do not overlap: pad or cut each axis to o*s, view it as [o, s] and keep the first k of each row.
Tensor disjointWindows(Tensor x, const PoolAxes &p, const std::vector<int64_t> &k, const std::vector<int64_t> &stride) {
  size_t nk = k.size();
  std::vector<std::pair<int64_t, int64_t>> lp(p.lead, {0, 0});
  for (size_t j = 0; j < nk; ++j)
    lp.emplace_back(0, p.out[j] * stride[j] - p.in[j]);
  x = x.pad(lp);
  Shape os;
  std::vector<std::pair<int64_t, int64_t>> sb;
  for (size_t j = 0; j < nk; ++j) {
    os.insert(os.end(), {p.out[j], stride[j]});
    sb.insert(sb.end(), {{0, p.out[j]}, {0, k[j]}});
  }
  x = x.reshape(p.keep(os)).shrink(p.bounds(sb));
  std::vector<int64_t> order = p.leadOrder();
  for (size_t j = 0; j < nk; ++j)
    order.push_back(int64_t(p.lead + 2 * j));
  for (size_t j = 0; j < nk; ++j)
    order.push_back(int64_t(p.lead + 2 * j + 1));
  return x.permute(order);
}

/// Window axis `axis` of x repeated `reps` times: moved last, repeated, moved back.
Tensor repeatAxis(const Tensor &x, int64_t axis, int64_t reps) {
  std::vector<int64_t> toEnd, back(size_t(x.rank()), 0);
  for (int64_t a = 0; a < x.rank(); ++a)
    if (a != axis)
      toEnd.push_back(a);
  toEnd.push_back(axis);
  for (size_t a = 0; a < toEnd.size(); ++a)
    back[size_t(toEnd[a])] = int64_t(a);
  return x.permute(toEnd).repeatLast(reps).permute(back);
}

/// Overlapping or dilated windows: row kk of a [k, i*f + d] view of the repeated input starts at kk*d.
Tensor overlappingWindows(Tensor x, const PoolAxes &p, const std::vector<int64_t> &k,
                          const std::vector<int64_t> &stride, const std::vector<int64_t> &dilation) {
  size_t nk = k.size();
  std::vector<int64_t> rowLen(nk);
  for (size_t j = 0; j < nk; ++j) {
    int64_t f = 1 + int64_t(p.out[j] * stride[j] > p.in[j] + dilation[j]);
    rowLen[j] = p.in[j] * f + dilation[j];
  }
  for (size_t j = 0; j < nk; ++j)
    x = repeatAxis(x, int64_t(p.lead + j), ceilDiv(k[j] * rowLen[j], p.in[j]));
  std::vector<std::pair<int64_t, int64_t>> cut, cut2, cut3;
  Shape rows, strided, ko;
  for (size_t j = 0; j < nk; ++j) {
    cut.emplace_back(0, k[j] * rowLen[j]);
    rows.insert(rows.end(), {k[j], rowLen[j]});
    cut2.insert(cut2.end(), {{0, k[j]}, {0, p.out[j] * stride[j]}});
    strided.insert(strided.end(), {k[j], p.out[j], stride[j]});
    cut3.insert(cut3.end(), {{0, k[j]}, {0, p.out[j]}, {0, 1}});
    ko.insert(ko.end(), {k[j], p.out[j]});
  }
  x = x.shrink(p.bounds(cut)).reshape(p.keep(rows));
  x = x.shrink(p.bounds(cut2)).reshape(p.keep(strided));
  x = x.shrink(p.bounds(cut3)).reshape(p.keep(ko));
  std::vector<int64_t> order = p.leadOrder();
  for (size_t j = 0; j < nk; ++j)
    order.push_back(int64_t(p.lead + 2 * j + 1));
  for (size_t j = 0; j < nk; ++j)
    order.push_back(int64_t(p.lead + 2 * j));
  return x.permute(order);
}

} // namespace

Tensor Tensor::pool(const std::vector<int64_t> &k, const std::vector<int64_t> &stride,
                    const std::vector<int64_t> &dilation) const {
  // Follows tinygrad's Tensor._pool: repeat the input so that every window is a contiguous slice, then reshape.
  Shape s = shape();
  size_t nk = k.size();
  PoolAxes p{s.size() - nk, {}, {}, {}};
  p.noop.assign(s.begin(), s.begin() + int64_t(p.lead));
  p.in.assign(s.begin() + int64_t(p.lead), s.end());
  for (size_t j = 0; j < nk; ++j)
    p.out.push_back(ceilDiv(p.in[j] - dilation[j] * (k[j] - 1), stride[j]));
  bool simple = true;
  for (size_t j = 0; j < nk; ++j)
    simple = simple && k[j] <= stride[j] && dilation[j] == 1;
  return simple ? disjointWindows(*this, p, k, stride) : overlappingWindows(*this, p, k, stride, dilation);
}

} // namespace tgc
