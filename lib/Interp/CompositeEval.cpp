//===- CompositeEval.cpp - Composite ops, written directly ------*- C++ -*-===//
// Textbook loops in double precision (int64 for integer ops), rounded once to the result dtype at the end.
//===----------------------------------------------------------------------===//
//
// These are deliberately independent of the `decompose` pass: decompose builds the same ops from primitives the way
// tinygrad's Tensor methods do, and --check-semantics compares the two.

#include "Interp/Internal.h"

#include "IR/UOp.h"

#include <cmath>
#include <limits>

namespace tgc::interp {
namespace {

/// erf as the gelu composite defines it: Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7), as tinygrad computes it,
/// so the interpreter evaluates the op as specified, in double.
double erfAS(double x) {
  double ax = std::fabs(x);
  double t = 1.0 / (1.0 + 0.3275911 * ax);
  double poly = 1.061405429;
  for (double c : {-1.453152027, 1.421413741, -0.284496736, 0.254829592})
    poly = poly * t + c;
  double y = 1.0 - t * poly * std::exp(-x * x);
  return x < 0 ? -y : (x > 0 ? y : 0.0 * y); // 0 * y: NaN for a NaN x, as the decomposition computes it
}

/// tgc's max (docs/ops.md): NaN if either is NaN, and +0.0 above -0.0 (std::max keeps its first operand on ties).
double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return NAN;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a < b ? b : a;
}

using Values = std::vector<double>;

Values doubles(const Tensor &t) {
  Values v;
  v.reserve(t.data.size());
  for (const Arg &a : t.data)
    v.push_back(toDouble(a));
  return v;
}

Tensor finish(const UOp *u, const Values &v) {
  Tensor t{u->dtype(), u->shapeVec(), {}};
  t.data.reserve(v.size());
  for (double x : v)
    t.data.push_back(fromDouble(x, u->dtype()));
  return t;
}

/// Integer results (matmul, cumsum of ints) accumulate in int64 and wrap to the dtype once.
Tensor finishInt(const UOp *u, const std::vector<int64_t> &v) {
  Tensor t{u->dtype(), u->shapeVec(), {}};
  for (int64_t x : v)
    t.data.push_back(fromInt(x, u->dtype()));
  return t;
}

std::vector<int64_t> ints(const Tensor &t) {
  std::vector<int64_t> v;
  for (const Arg &a : t.data)
    v.push_back(a.isBool() ? a.getBool() : a.getInt());
  return v;
}

/// Offset of a batch index of `out` inside an operand of batch shape `b` (numpy broadcasting).
int64_t batchOffset(const std::vector<int64_t> &outIdx, const Shape &b, size_t outRank) {
  int64_t off = 0;
  int64_t stride = 1;
  for (size_t i = b.size(); i-- > 0;) {
    size_t oi = outRank - (b.size() - i);
    off += (b[i] == 1 ? 0 : outIdx[oi]) * stride;
    stride *= b[i];
  }
  return off;
}

template <typename T>
std::vector<T> matmulLoop(const UOp *u, const std::vector<T> &a, const std::vector<T> &b, const Shape &as,
                          const Shape &bs) {
  Shape out = u->shapeVec();
  size_t r = out.size();
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape outBatch(out.begin(), out.end() - 2);
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  std::vector<T> res(size_t(numelOf(out)), T(0));
  std::vector<int64_t> bi;
  for (int64_t batch = 0; batch < numelOf(outBatch); ++batch) {
    unravel(batch, outBatch, bi);
    int64_t ao = batchOffset(bi, aBatch, r - 2) * m * k;
    int64_t bo = batchOffset(bi, bBatch, r - 2) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        T acc = k > 0 ? T(-0.0) : T(0); // a sum starts from -0.0, of nothing is +0.0 (docs/ops.md, reduce_axis)
        for (int64_t q = 0; q < k; ++q)
          acc += a[size_t(ao + i * k + q)] * b[size_t(bo + q * n + j)];
        res[size_t((batch * m + i) * n + j)] = acc;
      }
  }
  return res;
}

Tensor matmul(const UOp *u, const std::vector<const Tensor *> &s) {
  if (u->dtype().isInt()) {
    // wrapping multiply-add in uint64, exact modulo 2^64, then wrapped to the dtype
    std::vector<uint64_t> a, b;
    for (int64_t x : ints(*s[0]))
      a.push_back(uint64_t(x));
    for (int64_t x : ints(*s[1]))
      b.push_back(uint64_t(x));
    std::vector<uint64_t> r = matmulLoop(u, a, b, s[0]->shape, s[1]->shape);
    return finishInt(u, std::vector<int64_t>(r.begin(), r.end()));
  }
  return finish(u, matmulLoop(u, doubles(*s[0]), doubles(*s[1]), s[0]->shape, s[1]->shape));
}

std::vector<int64_t> argInts(const UOp *u, size_t i) { return u->arg().getTuple()[i].intTuple(); }

Tensor conv2d(const UOp *u, const std::vector<const Tensor *> &s) {
  Shape xs = s[0]->shape, ws = s[1]->shape, os = u->shapeVec();
  int64_t g = u->arg().getTuple()[0].getInt();
  auto st = argInts(u, 1), dl = argInts(u, 2), pd = argInts(u, 3);
  Values x = doubles(*s[0]), w = doubles(*s[1]);
  Values b = s.size() > 2 ? doubles(*s[2]) : Values(size_t(os[1]), -0.0); // x + -0.0 == x
  int64_t cg = ws[1], og = os[1] / g;
  Values out(size_t(numelOf(os)));
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t o = 0; o < os[1]; ++o)
      for (int64_t y = 0; y < os[2]; ++y)
        for (int64_t xx = 0; xx < os[3]; ++xx) {
          // a sum from -0.0 (of nothing +0.0) over the zero-padded window, then the bias
          double acc = cg * ws[2] * ws[3] > 0 ? -0.0 : 0.0;
          int64_t c0 = (o / og) * cg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < ws[2]; ++ky)
              for (int64_t kx = 0; kx < ws[3]; ++kx) {
                int64_t iy = y * st[0] + ky * dl[0] - pd[0];
                int64_t ix = xx * st[1] + kx * dl[1] - pd[2];
                bool inside = iy >= 0 && iy < xs[2] && ix >= 0 && ix < xs[3];
                double xv = inside ? x[size_t(((n * xs[1] + c0 + c) * xs[2] + iy) * xs[3] + ix)] : 0.0;
                acc += xv * w[size_t(((o * cg + c) * ws[2] + ky) * ws[3] + kx)];
              }
          out[size_t(((n * os[1] + o) * os[2] + y) * os[3] + xx)] = acc + b[size_t(o)];
        }
  return finish(u, out);
}

/// The transposed convolution as a scatter: each input element adds x*w into the window it spreads to.
Tensor convTranspose2d(const UOp *u, const std::vector<const Tensor *> &s) {
  Shape xs = s[0]->shape, ws = s[1]->shape, os = u->shapeVec();
  int64_t g = u->arg().getTuple()[0].getInt();
  auto st = argInts(u, 1), dl = argInts(u, 2), pd = argInts(u, 3);
  Values x = doubles(*s[0]), w = doubles(*s[1]);
  Values out(size_t(numelOf(os)), 0.0);
  int64_t og = ws[1], cgSize = xs[1] / g;
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t c = 0; c < xs[1]; ++c)
      for (int64_t iy = 0; iy < xs[2]; ++iy)
        for (int64_t ix = 0; ix < xs[3]; ++ix) {
          double v = x[size_t(((n * xs[1] + c) * xs[2] + iy) * xs[3] + ix)];
          int64_t grp = c / cgSize;
          for (int64_t oo = 0; oo < og; ++oo)
            for (int64_t ky = 0; ky < ws[2]; ++ky)
              for (int64_t kx = 0; kx < ws[3]; ++kx) {
                int64_t oy = iy * st[0] - pd[0] + ky * dl[0];
                int64_t ox = ix * st[1] - pd[2] + kx * dl[1];
                if (oy < 0 || oy >= os[2] || ox < 0 || ox >= os[3])
                  continue;
                int64_t o = grp * og + oo;
                out[size_t(((n * os[1] + o) * os[2] + oy) * os[3] + ox)] +=
                    v * w[size_t(((c * ws[1] + oo) * ws[2] + ky) * ws[3] + kx)];
              }
        }
  if (s.size() > 2) {
    Values b = doubles(*s[2]);
    for (int64_t i = 0; i < numelOf(os); ++i)
      out[size_t(i)] += b[size_t((i / (os[2] * os[3])) % os[1])];
  }
  return finish(u, out);
}

Tensor pool2d(const UOp *u, const Tensor &xt) {
  bool isMax = u->op() == Op::MaxPool2d;
  auto k = argInts(u, 0), st = argInts(u, 1);
  std::vector<int64_t> dl = isMax ? argInts(u, 2) : std::vector<int64_t>{1, 1};
  auto pd = argInts(u, isMax ? 3 : 2);
  bool includePad = !isMax && u->arg().getTuple()[3].getBool();
  Shape xs = xt.shape, os = u->shapeVec();
  size_t r = xs.size();
  int64_t h = xs[r - 2], w = xs[r - 1], oh = os[r - 2], ow = os[r - 1];
  int64_t planes = numelOf(Shape(xs.begin(), xs.end() - 2)); // not numel / (h*w): either may be 0
  Values x = doubles(xt);
  Values out(size_t(numelOf(os)));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx) {
        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t count = 0;
        for (int64_t ky = 0; ky < k[0]; ++ky)
          for (int64_t kx = 0; kx < k[1]; ++kx) {
            int64_t iy = y * st[0] + ky * dl[0] - pd[0];
            int64_t ix = xx * st[1] + kx * dl[1] - pd[2];
            bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            // count_include_pad counts the declared padding, not positions past it
            bool inPadded = iy >= -pd[0] && iy < h + pd[1] && ix >= -pd[2] && ix < w + pd[3];
            if (!inside) {
              count += includePad && inPadded;
              continue;
            }
            double v = x[size_t((p * h + iy) * w + ix)];
            acc = isMax ? maximum(acc, v) : acc + v;
            ++count;
          }
        out[size_t((p * oh + y) * ow + xx)] = isMax ? acc : acc / double(count);
      }
  return finish(u, out);
}

/// Apply f to every line of `x` along `axis`: f(line) -> result line (same length, or 1 for reductions).
template <typename F> Values alongAxis(const Tensor &x, int64_t axis, bool reduces, F f) {
  Shape s = x.shape;
  int64_t len = s[size_t(axis)];
  int64_t inner = 1;
  for (size_t a = size_t(axis) + 1; a < s.size(); ++a)
    inner *= s[a];
  int64_t outer = numelOf(Shape(s.begin(), s.begin() + axis));
  Values v = doubles(x);
  Values out(size_t(outer * (reduces ? 1 : len) * inner));
  Values line(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t l = 0; l < len; ++l)
        line[size_t(l)] = v[size_t((o * len + l) * inner + i)];
      Values r = f(line);
      for (size_t l = 0; l < r.size(); ++l)
        out[size_t((o * int64_t(r.size()) + int64_t(l)) * inner + i)] = r[l];
    }
  return out;
}

double maxOf(const Values &v) {
  double m = -std::numeric_limits<double>::infinity();
  for (double x : v)
    m = maximum(m, x);
  return m;
}

Values softmaxLine(const Values &line, Op op) {
  double m = maxOf(line);
  double sum = 0;
  for (double x : line)
    sum += std::exp(x - m);
  if (op == Op::Logsumexp)
    return {m + std::log(sum)};
  Values out;
  for (double x : line)
    out.push_back(op == Op::Softmax ? std::exp(x - m) / sum : x - m - std::log(sum));
  return out;
}

/// Mean (or variance) over several axes: iterate the full tensor, accumulate into the kept-dims output.
Values statsOver(const Tensor &x, const Shape &outShape, bool variance, int64_t correction) {
  Values v = doubles(x);
  std::vector<int64_t> os = stridesOf(outShape), idx;
  Values sum(size_t(numelOf(outShape)), 0.0), count(sum.size(), 0.0);
  auto outIndex = [&](int64_t i) {
    unravel(i, x.shape, idx);
    int64_t o = 0;
    for (size_t a = 0; a < idx.size(); ++a)
      o += (outShape[a] == 1 ? 0 : idx[a]) * os[a];
    return size_t(o);
  };
  for (int64_t i = 0; i < numelOf(x.shape); ++i) {
    sum[outIndex(i)] += v[size_t(i)];
    count[outIndex(i)] += 1;
  }
  for (size_t o = 0; o < sum.size(); ++o)
    sum[o] /= count[o];
  if (!variance)
    return sum;
  Values sq(sum.size(), 0.0);
  for (int64_t i = 0; i < numelOf(x.shape); ++i) {
    double d = v[size_t(i)] - sum[outIndex(i)];
    sq[outIndex(i)] += d * d;
  }
  for (size_t o = 0; o < sq.size(); ++o)
    sq[o] /= count[o] - double(correction);
  return sq;
}

Shape keptShape(const Shape &s, const std::vector<int64_t> &axes) {
  Shape out = s;
  for (int64_t a : axes)
    out[size_t(a)] = 1;
  return out;
}

/// layernorm and rmsnorm over the last axes, with optional weight and bias of the normalized shape.
Tensor normalize(const UOp *u, const std::vector<const Tensor *> &s) {
  auto axes = u->arg().getTuple()[0].intTuple();
  double eps = u->arg().getTuple()[1].getFloat();
  Values x = doubles(*s[0]);
  int64_t inner = 1;
  for (int64_t a : axes)
    inner *= s[0]->shape[size_t(a)];
  Values w = s.size() > 1 ? doubles(*s[1]) : Values(size_t(inner), 1.0);
  Values b = s.size() > 2 ? doubles(*s[2]) : Values(size_t(inner), 0.0);
  Values out(x.size());
  for (size_t row = 0; inner && row < x.size() / size_t(inner); ++row) {
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += x[row * size_t(inner) + size_t(i)];
    mean /= double(inner);
    for (int64_t i = 0; i < inner; ++i) {
      double v = x[row * size_t(inner) + size_t(i)];
      double d = u->op() == Op::Layernorm ? v - mean : v;
      sq += d * d;
    }
    double scale = 1.0 / std::sqrt(sq / double(inner) + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double v = x[row * size_t(inner) + size_t(i)];
      double centered = u->op() == Op::Layernorm ? v - mean : v;
      out[row * size_t(inner) + size_t(i)] = centered * scale * w[size_t(i)] + b[size_t(i)];
    }
  }
  return finish(u, out);
}

Tensor batchnorm(const UOp *u, const std::vector<const Tensor *> &s) {
  double eps = u->arg().getFloat();
  Values x = doubles(*s[0]), scale = doubles(*s[1]), bias = doubles(*s[2]), mean = doubles(*s[3]), var = doubles(*s[4]);
  Shape xs = s[0]->shape;
  int64_t inner = numelOf(Shape(xs.begin() + 2, xs.end())); // not numel / (N*C): either may be 0
  Values out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    size_t c = size_t((int64_t(i) / inner) % xs[1]);
    out[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c];
  }
  return finish(u, out);
}

/// gather and embedding; an index outside the axis gives 0 (as the one-hot decomposition does).
Tensor gather(const UOp *u, const std::vector<const Tensor *> &s) {
  const Tensor &x = *s[0];
  std::vector<int64_t> index = ints(*s[1]);
  Shape os = u->shapeVec();
  Tensor out{u->dtype(), os, {}};
  std::vector<int64_t> xs = stridesOf(x.shape), idx;
  Arg zero = fromInt(0, u->dtype());
  for (int64_t i = 0; i < numelOf(os); ++i) {
    unravel(i, os, idx);
    int64_t off = 0;
    bool inside = true;
    if (u->op() == Op::Embedding) {
      int64_t row = index[size_t(i / x.shape[1])];
      inside = row >= 0 && row < x.shape[0];
      off = row * x.shape[1] + idx.back();
    } else {
      int64_t axis = u->arg().getInt();
      for (size_t a = 0; a < idx.size(); ++a) {
        int64_t j = int64_t(a) == axis ? index[size_t(i)] : idx[a];
        inside = inside && j >= 0 && j < x.shape[a];
        off += j * xs[a];
      }
    }
    out.data.push_back(inside ? x.data[size_t(off)] : zero);
  }
  return out;
}

Tensor concat(const UOp *u, const std::vector<const Tensor *> &s) {
  int64_t axis = u->arg().getInt();
  Shape os = u->shapeVec();
  Tensor out{u->dtype(), os, {}};
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < numelOf(os); ++i) {
    unravel(i, os, idx);
    int64_t j = idx[size_t(axis)];
    size_t part = 0;
    while (j >= s[part]->shape[size_t(axis)]) {
      j -= s[part]->shape[size_t(axis)];
      ++part;
    }
    idx[size_t(axis)] = j;
    std::vector<int64_t> st = stridesOf(s[part]->shape);
    int64_t off = 0;
    for (size_t a = 0; a < idx.size(); ++a)
      off += idx[a] * st[a];
    out.data.push_back(s[part]->data[size_t(off)]);
  }
  return out;
}

double unary(Op op, double x, const UOp *u) {
  switch (op) {
  case Op::Relu: return x > 0 ? x : 0.0;
  case Op::LeakyRelu: return x > 0 ? x : x * toDouble(u->arg());
  case Op::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
  case Op::Tanh: return std::tanh(x);
  case Op::Silu: return x / (1.0 + std::exp(-x));
  case Op::Erf: return erfAS(x);
  case Op::Exp: return std::exp(x);
  case Op::Log: return std::log(x);
  case Op::Gelu:
    if (u->arg().getString() == "erf")
      return 0.5 * x * (1.0 + erfAS(x / std::sqrt(2.0)));
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  case Op::Clip: {
    double lo = toDouble(u->arg().getTuple()[0]), hi = toDouble(u->arg().getTuple()[1]);
    return x < lo ? lo : (hi < x ? hi : x); // as documented: NaN stays NaN, the sign of a zero x is kept
  }
  default: fail(where(u) + " is not a unary composite");
  }
}

Tensor arange(const UOp *u) {
  const auto &t = u->arg().getTuple();
  Tensor out{u->dtype(), u->shapeVec(), {}};
  for (int64_t i = 0; i < numelOf(out.shape); ++i) {
    if (t[0].isInt() && t[2].isInt())
      out.data.push_back(fromInt(t[0].getInt() + i * t[2].getInt(), u->dtype()));
    else
      out.data.push_back(fromDouble(toDouble(t[0]) + double(i) * toDouble(t[2]), u->dtype()));
  }
  return out;
}

Tensor cumsum(const UOp *u, const Tensor &x) {
  int64_t axis = u->arg().getInt();
  if (u->dtype().isInt()) {
    // exact: integer prefix sums wrap like the dtype
    Tensor out = x;
    std::vector<int64_t> st = stridesOf(x.shape), idx;
    for (int64_t i = 0; i < numelOf(x.shape); ++i) {
      unravel(i, x.shape, idx);
      if (idx[size_t(axis)] > 0)
        out.data[size_t(i)] =
            fromInt(out.data[size_t(i - st[size_t(axis)])].getInt() + x.data[size_t(i)].getInt(), u->dtype());
    }
    return out;
  }
  return finish(u, alongAxis(x, axis, false, [](const Values &line) {
                  Values out;
                  double acc = 0;
                  for (double v : line)
                    out.push_back(acc += v);
                  return out;
                }));
}

/// pad_mode, element by element: each axis maps an output index to the input's (edge: clamped, reflect: mirrored
/// about the first and last element), or to the constant.
Tensor padMode(const UOp *u, const Tensor &x) {
  const Arg::Tuple &t = u->arg().getTuple();
  const std::string &mode = t[1].getString();
  Tensor out{u->dtype(), u->shapeVec(), {}};
  std::vector<int64_t> st = stridesOf(x.shape), idx;
  Arg fill = mode == "constant" ? fromDouble(toDouble(t[2]), u->dtype()) : Arg();
  for (int64_t i = 0; i < numelOf(out.shape); ++i) {
    unravel(i, out.shape, idx);
    int64_t at = 0;
    bool inside = true;
    for (size_t a = 0; a < idx.size(); ++a) {
      int64_t n = x.shape[a];
      int64_t j = idx[a] - t[0].getTuple()[a].getTuple()[0].getInt();
      if (j < 0 || j >= n) {
        if (mode == "constant")
          inside = false;
        else if (mode == "edge")
          j = j < 0 ? 0 : n - 1;
        else
          j = j < 0 ? -j : 2 * (n - 1) - j;
      }
      at += j * st[a];
    }
    out.data.push_back(inside ? x.data[size_t(at)] : fill);
  }
  return out;
}

} // namespace

Tensor evalComposite(const UOp *u, const std::vector<const Tensor *> &s) {
  switch (u->op()) {
  case Op::Matmul: return matmul(u, s);
  case Op::Conv2d: return conv2d(u, s);
  case Op::ConvTranspose2d: return convTranspose2d(u, s);
  case Op::MaxPool2d:
  case Op::AvgPool2d: return pool2d(u, *s[0]);
  case Op::Softmax:
  case Op::LogSoftmax:
  case Op::Logsumexp: {
    Op op = u->op();
    return finish(u, alongAxis(*s[0], u->arg().getInt(), op == Op::Logsumexp,
                               [op](const Values &line) { return softmaxLine(line, op); }));
  }
  case Op::Mean: return finish(u, statsOver(*s[0], keptShape(s[0]->shape, u->arg().intTuple()), false, 0));
  case Op::Var: {
    auto axes = u->arg().getTuple()[0].intTuple();
    return finish(u, statsOver(*s[0], keptShape(s[0]->shape, axes), true, u->arg().getTuple()[1].getInt()));
  }
  case Op::Layernorm:
  case Op::Rmsnorm: return normalize(u, s);
  case Op::Batchnorm: return batchnorm(u, s);
  case Op::Gather:
  case Op::Embedding: return gather(u, s);
  case Op::Concat: return concat(u, s);
  case Op::Arange: return arange(u);
  case Op::Cumsum: return cumsum(u, *s[0]);
  case Op::PadMode: return padMode(u, *s[0]);
  default: {
    Values v = doubles(*s[0]);
    for (double &x : v)
      x = unary(u->op(), x, u);
    return finish(u, v);
  }
  }
}

} // namespace tgc::interp
