//===- Decompose.cpp - Composite ops to primitives --------------*- C++ -*-===//
// Each composite op becomes movement, elementwise and reduce ops, the way tinygrad's Tensor methods build them.
//===----------------------------------------------------------------------===//
//
// The decompositions (docs/ops.md lists each): matmul broadcasts both operands to [..., M, N, K] and sums K;
// convolutions and pooling slide windows with Tensor::pool (no im2col buffer); gathers compare the index with an
// arange (one-hot) and sum; arange and cumsum are window sums. Results are rewritten again, so a decomposition may
// use other composites (gather uses arange).

#include "IR/Eval.h"
#include "IR/Rewrite.h"
#include "Passes/Pass.h"
#include "Passes/TensorBuilder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tgc {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

std::vector<int64_t> argInts(const UOp *u, size_t i) { return u->arg().getTuple()[i].intTuple(); }
double argNum(const Arg &a) { return a.isInt() ? double(a.getInt()) : a.getFloat(); }

Pairs noPads(size_t n) { return Pairs(n, {0, 0}); }

// --- elementwise --------------------------------------------------------------------------------------------------

Tensor sigmoid(const Tensor &x) { return ((x * (-1.0 / M_LN2)).exp2() + 1.0).recip(); }

Tensor tanhOf(const Tensor &x) { return sigmoid(x * 2.0) * 2.0 - 1.0; }

/// erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7), as tinygrad computes it.
Tensor erf(const Tensor &x) {
  Tensor ax = x.maximum(x.neg());
  Tensor t = (ax * 0.3275911 + 1.0).recip();
  Tensor poly = Tensor::scalar(x, 1.061405429);
  for (double c : {-1.453152027, 1.421413741, -0.284496736, 0.254829592})
    poly = poly * t + c;
  Tensor y = Tensor::scalar(x, 1.0) - t * poly * x.square().neg().exp();
  Tensor zero = Tensor::scalar(x, 0.0);
  Tensor sign = x.lt(zero).where(Tensor::scalar(x, -1.0), zero.lt(x).where(Tensor::scalar(x, 1.0), zero));
  return sign * y;
}

Tensor gelu(const Tensor &x, const std::string &form) {
  if (form == "erf")
    return x * 0.5 * (erf(x * (1.0 / std::sqrt(2.0))) + 1.0);
  Tensor inner = (x + x * x.square() * 0.044715) * std::sqrt(2.0 / M_PI);
  return x * 0.5 * (tanhOf(inner) + 1.0);
}

const UOp *elementwise(const Match &m) {
  const UOp *u = m.root();
  Tensor x = u->src(0);
  Tensor zero = Tensor::scalar(x, 0.0);
  switch (u->op()) {
  case Op::Relu: return zero.lt(x).where(x, zero).uop();
  case Op::LeakyRelu: return zero.lt(x).where(x, x * argNum(u->arg())).uop();
  case Op::Sigmoid: return sigmoid(x).uop();
  case Op::Tanh: return tanhOf(x).uop();
  case Op::Gelu: return gelu(x, u->arg().getString()).uop();
  case Op::Silu: return (x * sigmoid(x)).uop();
  case Op::Erf: return erf(x).uop();
  case Op::Exp: return x.exp().uop();
  case Op::Log: return x.log().uop();
  case Op::Clip: {
    Tensor lo = Tensor::scalar(x, argNum(u->arg().getTuple()[0]));
    Tensor hi = Tensor::scalar(x, argNum(u->arg().getTuple()[1]));
    return x.lt(lo).where(lo, hi.lt(x).where(hi, x)).uop();
  }
  default: return nullptr;
  }
}

// --- reductions and normalizations ------------------------------------------------------------------------------

const UOp *softmaxFamily(const Match &m) {
  const UOp *u = m.root();
  Tensor x = u->src(0);
  int64_t axis = u->arg().getInt();
  Tensor mx = x.max({axis});
  Tensor shifted = x - mx;
  Tensor e = shifted.exp();
  Tensor s = e.sum({axis});
  if (u->op() == Op::Softmax)
    return (e * s.recip()).uop();
  if (u->op() == Op::LogSoftmax)
    return (shifted - s.log()).uop();
  return (s.log() + mx).uop(); // logsumexp
}

const UOp *meanVar(const Match &m) {
  const UOp *u = m.root();
  Tensor x = u->src(0);
  if (u->op() == Op::Mean)
    return x.mean(u->arg().intTuple()).uop();
  std::vector<int64_t> axes = u->arg().getTuple()[0].intTuple();
  int64_t n = 1;
  for (int64_t a : axes)
    n *= x.dim(a);
  int64_t correction = u->arg().getTuple()[1].getInt();
  return ((x - x.mean(axes)).square().sum(axes) * (1.0 / double(n - correction))).uop();
}

const UOp *normalize(const Match &m) {
  const UOp *u = m.root();
  Tensor x = u->src(0);
  if (u->op() == Op::Batchnorm) {
    Shape ps(size_t(x.rank()), 1);
    ps[1] = x.dim(1);
    Tensor scale = Tensor(u->src(1)).reshape(ps), bias = Tensor(u->src(2)).reshape(ps);
    Tensor mean = Tensor(u->src(3)).reshape(ps), var = Tensor(u->src(4)).reshape(ps);
    Tensor inv = scale * (var + u->arg().getFloat()).rsqrt();
    return ((x - mean) * inv + bias).uop();
  }
  std::vector<int64_t> axes = u->arg().getTuple()[0].intTuple();
  double eps = u->arg().getTuple()[1].getFloat();
  Tensor y = u->op() == Op::Layernorm ? x - x.mean(axes) : x;
  Tensor out = y * (y.square().mean(axes) + eps).rsqrt();
  if (u->numSrc() > 1)
    out = out * Tensor(u->src(1));
  if (u->numSrc() > 2)
    out = out + Tensor(u->src(2));
  return out.uop();
}

// --- matmul, convolution, pooling -------------------------------------------------------------------------------

const UOp *matmul(const Match &m) {
  Tensor a = m.root()->src(0);
  Tensor b = m.root()->src(1);
  Shape as = a.shape(), bs = b.shape();
  // a: [..., M, 1, K]; b: [..., K, N] -> [..., 1, N, K]; their product sums over K
  Shape a3 = as;
  a3.insert(a3.end() - 1, 1);
  Tensor bt = b.transpose(b.rank() - 1, b.rank() - 2);
  Shape b3 = bt.shape();
  b3.insert(b3.end() - 2, 1);
  Shape out = m.root()->shapeVec();
  return (a.reshape(a3) * bt.reshape(b3)).sum({-1}).reshape(out).uop();
}

Tensor conv2dOf(const Tensor &x0, const Tensor &w, int64_t groups, std::vector<int64_t> stride,
                std::vector<int64_t> dilation, const std::vector<int64_t> &pads) {
  Shape xs = x0.shape(), ws = w.shape();
  int64_t bs = xs[0], cin = ws[1], cout = ws[0], rcout = cout / groups;
  Tensor x = x0.pad({{0, 0}, {0, 0}, {pads[0], pads[1]}, {pads[2], pads[3]}});
  x = x.pool({ws[2], ws[3]}, stride, dilation); // [bs, groups*cin, oy, ox, kh, kw]
  int64_t oy = x.dim(2), ox = x.dim(3);
  x = x.reshape({bs, groups, cin, 1, oy, ox, ws[2], ws[3]});
  x = x.expand({bs, groups, cin, rcout, oy, ox, ws[2], ws[3]});
  x = x.permute({0, 1, 3, 4, 5, 2, 6, 7}); // [bs, groups, rcout, oy, ox, cin, kh, kw]
  Tensor wr = w.reshape({1, groups, rcout, 1, 1, cin, ws[2], ws[3]});
  return (x * wr).sum({-1, -2, -3}).reshape({bs, cout, oy, ox});
}

Tensor addBias(const Tensor &y, const UOp *u, size_t i) {
  if (u->numSrc() <= i)
    return y;
  return y + Tensor(u->src(i)).reshape({1, y.dim(1), 1, 1});
}

const UOp *conv2d(const Match &m) {
  const UOp *u = m.root();
  Tensor y =
      conv2dOf(u->src(0), u->src(1), u->arg().getTuple()[0].getInt(), argInts(u, 1), argInts(u, 2), argInts(u, 3));
  return addBias(y, u, 2).uop();
}

/// tinygrad's conv_transpose2d: insert stride-1 zeros between inputs, then a conv with the flipped,
/// group-transposed weight and padding (k-1)*d - p.
const UOp *convTranspose2d(const Match &m) {
  const UOp *u = m.root();
  Tensor x = u->src(0), w = u->src(1);
  int64_t g = u->arg().getTuple()[0].getInt();
  auto stride = argInts(u, 1), dil = argInts(u, 2), pads = argInts(u, 3), outPad = argInts(u, 4);
  Shape ws = w.shape();
  int64_t cin = ws[0], og = ws[1];
  Tensor wt =
      w.reshape({g, cin / g, og, ws[2], ws[3]}).transpose(1, 2).flip({3, 4}).reshape({g * og, cin / g, ws[2], ws[3]});
  if (stride[0] > 1 || stride[1] > 1) {
    Shape xs = x.shape();
    x = x.reshape({xs[0], xs[1], xs[2], 1, xs[3], 1});
    x = x.pad({{0, 0}, {0, 0}, {0, 0}, {0, stride[0] - 1}, {0, 0}, {0, stride[1] - 1}});
    x = x.reshape({xs[0], xs[1], xs[2] * stride[0], xs[3] * stride[1]});
    x = x.shrink(
        {{0, xs[0]}, {0, xs[1]}, {0, xs[2] * stride[0] - (stride[0] - 1)}, {0, xs[3] * stride[1] - (stride[1] - 1)}});
  }
  std::vector<int64_t> p = {(ws[2] - 1) * dil[0] - pads[0], (ws[2] - 1) * dil[0] - pads[1] + outPad[0],
                            (ws[3] - 1) * dil[1] - pads[2], (ws[3] - 1) * dil[1] - pads[3] + outPad[1]};
  Tensor y = conv2dOf(x, wt, g, {1, 1}, dil, p);
  return addBias(y, u, 2).uop();
}

const UOp *pool2d(const Match &m) {
  const UOp *u = m.root();
  Tensor x = u->src(0);
  bool isMax = u->op() == Op::MaxPool2d;
  auto k = argInts(u, 0), stride = argInts(u, 1);
  std::vector<int64_t> dil = isMax ? argInts(u, 2) : std::vector<int64_t>{1, 1};
  auto pads = argInts(u, isMax ? 3 : 2);
  Pairs p = noPads(size_t(x.rank()) - 2);
  p.insert(p.end(), {{pads[0], pads[1]}, {pads[2], pads[3]}});
  if (isMax)
    return x.padValue(p, -INFINITY).pool(k, stride, dil).max({-1, -2}).reshape(u->shapeVec()).uop();
  Tensor sums = x.pad(p).pool(k, stride, dil).sum({-1, -2}).reshape(u->shapeVec());
  if (u->arg().getTuple()[3].getBool())
    return (sums * (1.0 / double(k[0] * k[1]))).uop();
  Tensor ones = Tensor::fullLike(x, x.dtype(), 1.0);
  Tensor counts = ones.pad(p).pool(k, stride, dil).sum({-1, -2}).reshape(u->shapeVec());
  return (sums / counts).uop();
}

// --- data movement: concat, gather, embedding, arange, cumsum --------------------------------------------------

/// Each part padded to the full axis, selected where its slice of the axis lies (an exact selection: no
/// arithmetic touches the values, so -0.0 and NaN payloads survive). A concat of static shapes stays: rangeify
/// selects its parts the same way inside a kernel, or writes each part into its slice of the concat's buffer.
const UOp *concat(const Match &m) {
  const UOp *u = m.root();
  bool symbolic = u->hasDimVars() || std::ranges::any_of(u->src(), [](const UOp *s) { return s->hasDimVars(); });
  if (!symbolic)
    return nullptr;
  int64_t axis = u->arg().getInt();
  int64_t total = u->shapeVec()[size_t(axis)];
  std::vector<Tensor> parts;
  std::vector<Tensor> masks; // masks[i]: true on part i's slice of the axis
  int64_t offset = 0;
  for (const UOp *s : u->src()) {
    Tensor t = s;
    Pairs p = noPads(size_t(t.rank()));
    p[size_t(axis)] = {offset, total - offset - t.dim(axis)};
    Shape ms(size_t(t.rank()), 1);
    ms[size_t(axis)] = t.dim(axis);
    parts.push_back(t.pad(p));
    masks.push_back(Tensor::full(t.ctx(), dt::Bool, ms, 1).pad(p));
    offset += t.dim(axis);
  }
  Tensor acc = parts.back();
  for (size_t i = parts.size() - 1; i-- > 0;)
    acc = masks[i].where(parts[i], acc);
  return acc.uop();
}

/// A [n] tensor 0, 1, ..., n-1 of dtype d (an arange composite, decomposed in turn).
Tensor iota(Context &ctx, DType d, int64_t n) {
  return ctx.make(Op::Arange, d, {}, Arg::tuple({Arg(0), Arg(n), Arg(1)}), Shape{n});
}

/// Where idx is in [0, n): an out-of-range index picks nothing, and its result is +0 (the one-hot sum alone
/// would give the sum's start, -0.0).
Tensor inRange(const Tensor &idx, int64_t n) {
  Context &ctx = idx.ctx();
  DType d = idx.dtype();
  Tensor ok = n > dtypeMax(d) ? Tensor::fullLike(idx, dt::Bool, 1) : idx.lt(Tensor::scalar(idx, double(n)));
  if (d.isUnsigned())
    return ok;
  Tensor negative = idx.lt(Tensor::scalar(idx, 0));
  return ok.alu(Op::And, negative.eq(Tensor::scalarOf(ctx, dt::Bool, 0)));
}

const UOp *gather(const Match &m) {
  const UOp *u = m.root();
  Tensor x = u->src(0), idx = u->src(1);
  int64_t axis = u->arg().getInt();
  Shape is = idx.shape();
  int64_t n = x.dim(axis);
  // x restricted to the index's extent on the other axes, with the gathered axis moved last: [..., 1, ..., n]
  Pairs b;
  for (int64_t a = 0; a < x.rank(); ++a)
    b.emplace_back(0, a == axis ? n : is[size_t(a)]);
  Tensor xs = x.shrink(b).moveToEnd(axis);
  Shape withOne = is;
  withOne[size_t(axis)] = 1;
  withOne.push_back(n);
  Shape full = is;
  full.push_back(n);
  Tensor xe = xs.reshape(withOne).expand(full);
  Shape idx1 = is;
  idx1.push_back(1);
  Shape ar(is.size(), 1);
  ar.push_back(n);
  Tensor hot = idx.reshape(idx1).eq(iota(x.ctx(), idx.dtype(), n).reshape(ar));
  // -0.0 where not picked: the sum (which starts from -0.0) is then exactly the picked value
  Tensor picked = hot.where(xe, Tensor::scalar(x, -0.0)).sum({-1}).reshape(is);
  return inRange(idx, n).where(picked, Tensor::scalar(x, 0)).uop();
}

const UOp *embedding(const Match &m) {
  const UOp *u = m.root();
  Tensor w = u->src(0), idx = u->src(1);
  Shape is = idx.shape();
  int64_t vocab = w.dim(0), d = w.dim(1);
  Shape idx2 = is, ar(is.size(), 1), ws(is.size(), 1);
  idx2.insert(idx2.end(), {1, 1});
  ar.insert(ar.end(), {vocab, 1});
  ws.insert(ws.end(), {vocab, d});
  Tensor hot = idx.reshape(idx2).eq(iota(w.ctx(), idx.dtype(), vocab).reshape(ar));
  Tensor picked = hot.where(w.reshape(ws), Tensor::scalar(w, -0.0)).sum({-2}); // exact, as in gather
  Shape ok = is;
  ok.insert(ok.end(), {1, 1});
  return inRange(idx, vocab).reshape(ok).where(picked, Tensor::scalar(w, 0)).reshape(u->shapeVec()).uop();
}

/// tinygrad's cumsum: pad n-1 zeros in front of the axis, slide windows of n, sum each.
Tensor cumsumOf(const Tensor &x, int64_t axis) {
  int64_t n = x.dim(axis);
  Tensor t = x.moveToEnd(axis);
  Pairs p = noPads(size_t(t.rank()));
  p.back() = {n - 1, 0};
  Tensor s = t.pad(p).pool({n}, {1}, {1}).sum({-1});
  Shape back = t.shape();
  s = s.reshape(back);
  std::vector<int64_t> inv(size_t(x.rank()));
  for (int64_t a = 0, j = 0; a < x.rank(); ++a)
    inv[size_t(a)] = a == axis ? x.rank() - 1 : j++;
  return s.permute(inv);
}

const UOp *cumsum(const Match &m) { return cumsumOf(m.root()->src(0), m.root()->arg().getInt()).uop(); }

/// pad_mode: constant through a mask (Tensor::padValue); edge and reflect axis by axis (as numpy does, so corners
/// come from the already padded axes), each the middle, a left part and a right part chosen by masks:
///   edge:    left = x[0:1] expanded to `before`,         right = x[n-1:n] expanded to `after`
///   reflect: left = flip(x[1 : before+1]),               right = flip(x[n-1-after : n-1])
const UOp *padMode(const Match &m) {
  const UOp *u = m.root();
  const Arg::Tuple &t = u->arg().getTuple();
  Tensor x = u->src(0);
  Pairs pads;
  for (const Arg &p : t[0].getTuple())
    pads.emplace_back(p.getTuple()[0].getInt(), p.getTuple()[1].getInt());
  const std::string &mode = t[1].getString();
  if (mode == "constant")
    return x.padValue(pads, argNum(t[2])).uop();
  for (size_t a = 0; a < pads.size(); ++a) {
    auto [before, after] = pads[a];
    if (!before && !after)
      continue;
    int64_t n = x.dim(int64_t(a));
    auto slice = [&](int64_t b, int64_t e) {
      Pairs s = noPads(size_t(x.rank()));
      for (size_t i = 0; i < s.size(); ++i)
        s[i] = {0, x.dim(int64_t(i))};
      s[a] = {b, e};
      return x.shrink(s);
    };
    auto stretch = [&](const Tensor &edge, int64_t k) {
      Shape s = edge.shape();
      s[a] = k;
      return edge.expand(s);
    };
    Tensor left = mode == "edge" ? stretch(slice(0, 1), before) : slice(1, before + 1).flip({int64_t(a)});
    Tensor right = mode == "edge" ? stretch(slice(n - 1, n), after) : slice(n - 1 - after, n - 1).flip({int64_t(a)});
    auto place = [&](const Tensor &part, int64_t offset) { // part at [offset, offset + its size) of the axis
      Pairs p = noPads(size_t(x.rank()));
      p[a] = {offset, before + n + after - offset - part.dim(int64_t(a))};
      Shape ms(size_t(x.rank()), 1);
      ms[a] = part.dim(int64_t(a));
      return std::make_pair(part.pad(p), Tensor::full(x.ctx(), dt::Bool, ms, 1).pad(p));
    };
    auto [mid, midMask] = place(x, before);
    auto [l, leftMask] = place(left, 0);
    Tensor r = place(right, before + n).first; // what neither mask covers
    x = midMask.where(mid, leftMask.where(l, r));
  }
  return x.uop();
}

/// arange(start, stop, step) = cumsum of n copies of step, plus start - step. With integer start and step it
/// stays: rangeify computes start + i*step at each index, exactly, and a one-hot sum over it can then collapse.
const UOp *arange(const Match &m) {
  const UOp *u = m.root();
  int64_t n = u->shapeVec()[0];
  const auto &t = u->arg().getTuple();
  if (n > 0 && t[0].isInt() && t[2].isInt())
    return nullptr;
  Tensor steps = Tensor::full(u->ctx(), u->dtype(), {n}, argNum(t[2]));
  if (n == 0)
    return steps.uop();
  return (cumsumOf(steps, 0) + (argNum(t[0]) - argNum(t[2]))).uop();
}

/// Sums and products of float16/bfloat16 accumulate in float32 and round once (IR/Eval.h: accumulatesInF32).
const UOp *wideReduce(const Match &m) {
  const UOp *u = m.root();
  Op op = u->arg().getTuple()[0].getOp();
  if (!accumulatesInF32(op, u->dtype()))
    return nullptr;
  Tensor x = Tensor(u->src(0)).cast(dt::F32);
  const UOp *wide = u->ctx().make(Op::ReduceAxis, dt::F32, {x.uop()}, u->arg(), u->shapeVec());
  return Tensor(wide).cast(u->dtype()).uop();
}

/// Composites that only select or move values: exact in any dtype, so never widened.
bool movesValues(Op op) {
  return op == Op::Relu || op == Op::Clip || op == Op::Concat || op == Op::Gather || op == Op::Embedding ||
         op == Op::MaxPool2d || op == Op::Arange || op == Op::PadMode;
}

/// Composites of float16/bfloat16 compute in float32 and round once, as the interpreter defines them and as
/// PyTorch computes them ("opmath"): products of halves are exact in f32, sums accumulate there, and a
/// normalization of a nearly constant row does not amplify half-precision rounding noise by 1/sqrt(eps).
const UOp *widenHalf(const Match &m) {
  const UOp *u = m.root();
  if (!accumulatesInF32(Op::Add, u->dtype()) || movesValues(u->op()))
    return nullptr;
  std::vector<const UOp *> src;
  for (const UOp *s : u->src())
    src.push_back(s->dtype() == u->dtype() ? Tensor(s).cast(dt::F32).uop() : s); // integer indices stay
  const UOp *wide = u->ctx().make(u->op(), dt::F32, src, u->arg(), u->shapeVec());
  return Tensor(wide).cast(u->dtype()).uop();
}

/// The node whose decomposition failed, and why.
struct DecomposeError {
  const UOp *node;
  std::string message;
};

/// A decomposition whose intermediate shapes cannot exist reports the composite it came from.
template <RewriteFn F> const UOp *guarded(const Match &m) {
  try {
    return F(m);
  } catch (const TensorShapeError &e) {
    throw DecomposeError{m.root(), e.message};
  }
}

const PatternMatcher &matcher() {
  auto any = [](OpSet ops) { return UPat::any(ops); };
  static const PatternMatcher pm(
      "decompose",
      {
          {any(group::composite()), guarded<widenHalf>, "op(x:f16, ...) -> cast(op(cast(x, f32), ...), f16)"},
          {any({Op::Relu, Op::LeakyRelu, Op::Sigmoid, Op::Tanh, Op::Gelu, Op::Silu, Op::Exp, Op::Log, Op::Clip,
                Op::Erf}),
           guarded<elementwise>, "relu(x) -> where(0 < x, x, 0) ; sigmoid(x) -> 1/(1 + exp2(-x/ln2)) ; ..."},
          {any({Op::Softmax, Op::LogSoftmax, Op::Logsumexp}), guarded<softmaxFamily>,
           "softmax(x) -> e * 1/sum(e), e = exp(x - max(x))"},
          {any({Op::Mean, Op::Var}), guarded<meanVar>,
           "mean(x) -> sum(x) * 1/n ; var(x) -> sum((x - mean)^2) * 1/(n - c)"},
          {any({Op::Layernorm, Op::Rmsnorm, Op::Batchnorm}), guarded<normalize>,
           "layernorm(x) -> y * rsqrt(mean(y*y) + eps), y = x - mean(x)"},
          {any({Op::Matmul}), guarded<matmul>, "matmul(a, b) -> sum(a[..., M, 1, K] * b^T[..., 1, N, K], K)"},
          {any({Op::Conv2d}), guarded<conv2d>, "conv2d(x, w) -> sum(pool(pad(x)) * w, cin, kh, kw)"},
          {any({Op::ConvTranspose2d}), guarded<convTranspose2d>,
           "conv_transpose2d(x, w) -> conv2d(dilate(x), flip(w^T))"},
          {any({Op::MaxPool2d, Op::AvgPool2d}), guarded<pool2d>, "max_pool2d(x) -> max(pool(pad(x, -inf)))"},
          {any({Op::Concat}), guarded<concat>,
           "concat(a:[n, ...], b) -> where(pad(true[n]), pad(a), pad(b))  (n symbolic)"},
          {any({Op::Gather}), guarded<gather>, "gather(x, i) -> sum(where(i == arange(n), x, -0.0))"},
          {any({Op::Embedding}), guarded<embedding>, "embedding(w, i) -> sum(where(i == arange(V), w, -0.0), V)"},
          {any({Op::ReduceAxis}), guarded<wideReduce>,
           "reduce_axis(add, x:f16) -> cast(reduce_axis(add, cast(x, f32)), f16)"},
          {any({Op::Cumsum}), guarded<cumsum>, "cumsum(x) -> sum(pool(pad(x, n-1 before)))"},
          {any({Op::PadMode}), guarded<padMode>,
           "pad_mode(x, reflect) -> where(in x, pad(x), where(in left, pad(flip(x[1:b+1])), pad(flip(...))))"},
          {any({Op::Arange}), guarded<arange>,
           "arange(a, b, s) -> cumsum(full(n, s)) + (a - s)  (a or s not an integer)"},
      },
      /*preservesTypes=*/true);
  return pm;
}

} // namespace

const UOp *runDecompose(const UOp *root, PassContext &pc) {
  try {
    return graphRewrite(root, matcher());
  } catch (const DecomposeError &e) {
    const Loc *loc = root->ctx().loc(e.node);
    pc.diags.error(loc ? *loc : Loc{pc.module.fileName, 0, 0},
                   "cannot decompose '" + std::string(opName(e.node->op())) + "': " + e.message);
    return nullptr;
  }
}

} // namespace tgc
