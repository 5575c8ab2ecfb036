//===- InferComposite.cpp - Shape rules of composite tensor ops -*- C++ -*-===//
// matmul, convolutions, pooling, normalizations, gathers, concat, arange: arg forms and result shapes.
//===----------------------------------------------------------------------===//

#include "IR/Infer.h"

#include <cmath>
#include <set>

namespace tgc {
namespace {

struct ShapeError {
  std::string msg;
};

[[noreturn]] void fail(std::string msg) { throw ShapeError{std::move(msg)}; }

const Arg &field(const Arg &arg, size_t i, const char *what) {
  if (!arg.isTuple() || arg.getTuple().size() <= i)
    fail(std::string("arg needs ") + what);
  return arg.getTuple()[i];
}

/// Integer args are bounded like dimensions, so shape arithmetic on two of them fits in 128 bits.
constexpr int64_t kMaxArg = int64_t(1) << 48;

int64_t bounded(int64_t v, const char *what) {
  if (v > kMaxArg || v < -kMaxArg)
    fail(std::string(what) + " is out of range (" + std::to_string(v) + ")");
  return v;
}

int64_t asInt(const Arg &a, const char *what) {
  if (!a.isInt())
    fail(std::string(what) + " must be an integer");
  return bounded(a.getInt(), what);
}

std::vector<int64_t> ints(const Arg &a, size_t n, const char *what) {
  if (!a.isIntTuple() || a.getTuple().size() != n)
    fail(std::string(what) + " must be a list of " + std::to_string(n) + " integers");
  std::vector<int64_t> v = a.intTuple();
  for (int64_t x : v)
    bounded(x, what);
  return v;
}

/// A computed dimension, checked to be a dimension (exact arithmetic in 128 bits, then bounded).
int64_t dimension(__int128 v, const char *what) {
  if (v > kMaxArg)
    fail(std::string(what) + " is too large");
  return int64_t(v);
}

int64_t axisArg(const Arg &a, size_t rank) {
  int64_t ax = asInt(a, "the axis");
  if (ax < 0 || ax >= int64_t(rank))
    fail("axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(rank));
  return ax;
}

std::vector<int64_t> axesArg(const Arg &a, size_t rank) {
  if (!a.isIntTuple())
    fail("the axes must be a list of integers");
  std::set<int64_t> seen;
  for (int64_t ax : a.intTuple())
    if (ax < 0 || ax >= int64_t(rank) || !seen.insert(ax).second)
      fail("axes must be distinct and below the rank " + std::to_string(rank));
  return a.intTuple();
}

Shape shapeOf(const UOp *u, const char *what) {
  if (!u->hasShape())
    fail(std::string(what) + " must be a tensor");
  return u->shapeVec();
}

void requireInt(const UOp *u, const char *what) {
  if (!u->dtype().isInt())
    fail(std::string(what) + " must have an integer dtype, has " + u->dtype().str());
}

void requireSameDType(std::span<const UOp *const> src) {
  for (const UOp *s : src)
    if (s->dtype() != src[0]->dtype())
      fail("operands have different dtypes " + src[0]->dtype().str() + " and " + s->dtype().str());
}

/// numpy broadcasting of two batch shapes
Shape broadcast(const Shape &a, const Shape &b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1)
      fail("batch dimensions " + shapeStr(a) + " and " + shapeStr(b) + " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Shape matmul(std::span<const UOp *const> src) {
  requireSameDType(src);
  Shape a = shapeOf(src[0], "operand #0");
  Shape b = shapeOf(src[1], "operand #1");
  if (a.size() < 2 || b.size() < 2)
    fail("operands need at least 2 dimensions, have " + shapeStr(a) + " and " + shapeStr(b));
  if (a.back() != b[b.size() - 2])
    fail("inner dimensions differ: " + shapeStr(a) + " @ " + shapeStr(b));
  Shape out = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return out;
}

/// Output size of a sliding window: floor((n + pads - dilation*(k-1) - 1) / stride) + 1.
int64_t windowOut(int64_t n, int64_t padTotal, int64_t k, int64_t stride, int64_t dil) {
  if (k < 1 || stride < 1 || dil < 1)
    fail("kernel, stride and dilation must be positive");
  __int128 span = __int128(n) + padTotal - __int128(dil) * (k - 1) - 1;
  if (span < 0)
    fail("the window does not fit the input");
  return dimension(span / stride + 1, "the output size");
}

std::vector<int64_t> pads4(const Arg &a) {
  auto p = ints(a, 4, "the padding [top, bottom, left, right]");
  for (int64_t v : p)
    if (v < 0)
      fail("padding must be non-negative");
  return p;
}

Shape conv2d(std::span<const UOp *const> src, const Arg &arg) {
  if (src.size() != 2 && src.size() != 3)
    fail("takes (x, weight[, bias])");
  requireSameDType(src);
  Shape x = shapeOf(src[0], "x");
  Shape w = shapeOf(src[1], "the weight");
  if (x.size() != 4 || w.size() != 4)
    fail("x must be [N, C, H, W] and the weight [O, C/groups, kh, kw]");
  int64_t g = asInt(field(arg, 0, "[groups, stride, dilation, pads]"), "groups");
  auto s = ints(field(arg, 1, "a stride"), 2, "the stride");
  auto d = ints(field(arg, 2, "a dilation"), 2, "the dilation");
  auto p = pads4(field(arg, 3, "the padding"));
  if (g < 1 || x[1] % g != 0 || w[0] % g != 0 || __int128(w[1]) * g != x[1])
    fail("channels do not match: x has " + std::to_string(x[1]) + ", the weight expects " + std::to_string(w[1]) +
         " per group with " + std::to_string(g) + " groups");
  if (src.size() == 3 && shapeOf(src[2], "the bias") != Shape{w[0]})
    fail("the bias must have shape [" + std::to_string(w[0]) + "]");
  return {x[0], w[0], windowOut(x[2], p[0] + p[1], w[2], s[0], d[0]), windowOut(x[3], p[2] + p[3], w[3], s[1], d[1])};
}

Shape convTranspose2d(std::span<const UOp *const> src, const Arg &arg) {
  if (src.size() != 2 && src.size() != 3)
    fail("takes (x, weight[, bias])");
  requireSameDType(src);
  Shape x = shapeOf(src[0], "x");
  Shape w = shapeOf(src[1], "the weight");
  if (x.size() != 4 || w.size() != 4)
    fail("x must be [N, C, H, W] and the weight [C, O/groups, kh, kw]");
  int64_t g = asInt(field(arg, 0, "[groups, stride, dilation, pads, output_padding]"), "groups");
  auto s = ints(field(arg, 1, "a stride"), 2, "the stride");
  auto d = ints(field(arg, 2, "a dilation"), 2, "the dilation");
  auto p = pads4(field(arg, 3, "the padding"));
  auto op = ints(field(arg, 4, "an output padding"), 2, "the output padding");
  if (g < 1 || x[1] != w[0] || x[1] % g != 0)
    fail("channels do not match: x has " + std::to_string(x[1]) + ", the weight " + std::to_string(w[0]));
  if (s[0] < 1 || s[1] < 1 || d[0] < 1 || d[1] < 1)
    fail("stride and dilation must be positive");
  if (op[0] < 0 || op[1] < 0 || (op[0] >= s[0] && op[0] >= d[0]) || (op[1] >= s[1] && op[1] >= d[1]))
    fail("output padding must be smaller than the stride or the dilation");
  int64_t o = dimension(__int128(w[1]) * g, "the output channel count");
  if (src.size() == 3 && shapeOf(src[2], "the bias") != Shape{o})
    fail("the bias must have shape [" + std::to_string(o) + "]");
  __int128 h = __int128(x[2] - 1) * s[0] - p[0] - p[1] + __int128(d[0]) * (w[2] - 1) + op[0] + 1;
  __int128 wd = __int128(x[3] - 1) * s[1] - p[2] - p[3] + __int128(d[1]) * (w[3] - 1) + op[1] + 1;
  if (h < 1 || wd < 1)
    fail("the output would be empty");
  return {x[0], o, dimension(h, "the output height"), dimension(wd, "the output width")};
}

Shape pool2d(Op op, const UOp *x0, const Arg &arg) {
  Shape x = shapeOf(x0, "x");
  if (x.size() < 2)
    fail("x needs at least 2 dimensions");
  auto k = ints(field(arg, 0, "[kernel, stride, ...]"), 2, "the kernel size");
  auto s = ints(field(arg, 1, "a stride"), 2, "the stride");
  std::vector<int64_t> d = {1, 1};
  std::vector<int64_t> p;
  if (op == Op::MaxPool2d) {
    d = ints(field(arg, 2, "a dilation"), 2, "the dilation");
    p = pads4(field(arg, 3, "the padding"));
  } else {
    p = pads4(field(arg, 2, "the padding"));
    if (!field(arg, 3, "count_include_pad").isBool())
      fail("count_include_pad must be true or false");
  }
  size_t n = x.size();
  x[n - 2] = windowOut(x[n - 2], p[0] + p[1], k[0], s[0], d[0]);
  x[n - 1] = windowOut(x[n - 1], p[2] + p[3], k[1], s[1], d[1]);
  return x;
}

Shape normalize(Op op, std::span<const UOp *const> src, const Arg &arg) {
  requireSameDType(src);
  Shape x = shapeOf(src[0], "x");
  if (op == Op::Batchnorm) {
    if (x.size() < 2)
      fail("x must be [N, C, ...]");
    if (!arg.isFloat())
      fail("arg must be epsilon (a float)");
    for (size_t i = 1; i < src.size(); ++i)
      if (shapeOf(src[i], "parameters") != Shape{x[1]})
        fail("scale, bias, mean and var must have shape [" + std::to_string(x[1]) + "]");
    return x;
  }
  size_t maxOperands = op == Op::Layernorm ? 3 : 2;
  if (src.empty() || src.size() > maxOperands)
    fail(op == Op::Layernorm ? "takes (x[, weight[, bias]])" : "takes (x[, weight])");
  auto axes = axesArg(field(arg, 0, "[[axes], eps]"), x.size());
  if (!field(arg, 1, "an epsilon").isFloat())
    fail("epsilon must be a float");
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != int64_t(x.size() - axes.size() + i))
      fail("normalized axes must be the last ones, in order");
  Shape normShape(x.end() - int64_t(axes.size()), x.end());
  for (size_t i = 1; i < src.size(); ++i)
    if (shapeOf(src[i], "weight and bias") != normShape)
      fail("weight and bias must have shape " + shapeStr(normShape));
  return x;
}

Shape gather(Op op, std::span<const UOp *const> src, const Arg &arg) {
  Shape x = shapeOf(src[0], op == Op::Gather ? "x" : "the weight");
  Shape idx = shapeOf(src[1], "the index");
  requireInt(src[1], "the index");
  if (op == Op::Embedding) {
    if (x.size() != 2)
      fail("the weight must be [vocabulary, dim]");
    idx.push_back(x[1]);
    return idx;
  }
  if (idx.size() != x.size())
    fail("the index must have the rank of x");
  int64_t ax = axisArg(arg, x.size());
  for (size_t i = 0; i < x.size(); ++i)
    if (int64_t(i) != ax && idx[i] > x[i])
      fail("the index is larger than x on axis " + std::to_string(i));
  return idx;
}

Shape concat(std::span<const UOp *const> src, const Arg &arg) {
  if (src.empty())
    fail("needs at least one operand");
  requireSameDType(src);
  Shape out = shapeOf(src[0], "operands");
  int64_t ax = axisArg(arg, out.size());
  for (size_t i = 1; i < src.size(); ++i) {
    Shape s = shapeOf(src[i], "operands");
    if (s.size() != out.size())
      fail("operands have different ranks");
    for (size_t d = 0; d < s.size(); ++d)
      if (int64_t(d) != ax && s[d] != out[d])
        fail("operands differ on axis " + std::to_string(d) + ": " + shapeStr(out) + " and " + shapeStr(s));
    out[size_t(ax)] += s[size_t(ax)];
  }
  return out;
}

double number(const Arg &a, const char *what) {
  if (a.isInt())
    return double(a.getInt());
  if (a.isFloat())
    return a.getFloat();
  fail(std::string(what) + " must be a number");
}

Shape arange(DType dtype, const Arg &arg) {
  if (!arg.isTuple() || arg.getTuple().size() != 3)
    fail("arg must be [start, stop, step]");
  double start = number(arg.getTuple()[0], "start");
  double stop = number(arg.getTuple()[1], "stop");
  double step = number(arg.getTuple()[2], "step");
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    fail("start, stop and step must be finite, step non-zero");
  if (dtype.isPtr() || dtype.isVoid() || dtype.isBool())
    fail("needs a numeric dtype");
  double n = std::ceil((stop - start) / step);
  if (n > double(int64_t(1) << 40))
    fail("too many elements");
  return {n > 0 ? int64_t(n) : 0};
}

/// pad_mode: [[[before, after] per axis], "constant", value] or [pairs, "reflect"] or [pairs, "edge"].
Shape padMode(Shape x, const Arg &arg) {
  if (!arg.isTuple() || arg.getTuple().size() < 2 || !arg.getTuple()[1].isString())
    fail("arg must be [[[before, after] per axis], mode[, value]]");
  const Arg::Tuple &t = arg.getTuple();
  const std::string &mode = t[1].getString();
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    fail("mode must be \"constant\", \"reflect\" or \"edge\", not \"" + mode + "\"");
  if (t.size() != (mode == "constant" ? 3u : 2u))
    fail(mode == "constant" ? "constant mode needs a value: [pads, \"constant\", value]"
                            : "mode \"" + mode + "\" takes no value");
  if (mode == "constant")
    number(t[2], "the value");
  if (!t[0].isTuple() || t[0].getTuple().size() != x.size())
    fail("needs one [before, after] pair per axis (" + std::to_string(x.size()) + ")");
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<int64_t> p = ints(t[0].getTuple()[i], 2, "a [before, after] pair");
    if (p[0] < 0 || p[1] < 0)
      fail("pads must not be negative");
    if (mode == "reflect" && (p[0] >= x[i] || p[1] >= x[i]) && (p[0] || p[1]))
      fail("reflect pads must be smaller than the axis (" + std::to_string(x[i]) + ")");
    if (mode == "edge" && x[i] == 0 && (p[0] || p[1]))
      fail("edge padding needs a non-empty axis");
    x[i] = dimension(__int128(x[i]) + p[0] + p[1], "the padded size");
  }
  return x;
}

Shape unaryComposite(Op op, const UOp *x0, const Arg &arg) {
  Shape x = shapeOf(x0, "x");
  DType d = x0->dtype();
  switch (op) {
  case Op::Softmax:
  case Op::LogSoftmax:
  case Op::Cumsum: axisArg(arg, x.size()); return x;
  case Op::Logsumexp: x[size_t(axisArg(arg, x.size()))] = 1; return x;
  case Op::Mean:
    for (int64_t a : axesArg(arg, x.size()))
      x[size_t(a)] = 1;
    return x;
  case Op::Var:
    for (int64_t a : axesArg(field(arg, 0, "[[axes], correction]"), x.size()))
      x[size_t(a)] = 1;
    asInt(field(arg, 1, "a correction"), "the correction");
    return x;
  case Op::LeakyRelu: number(arg, "the slope"); return x;
  case Op::Gelu:
    if (!arg.isString() || (arg.getString() != "tanh" && arg.getString() != "erf"))
      fail("arg must be \"tanh\" or \"erf\"");
    return x;
  case Op::PadMode: return padMode(x, arg);
  case Op::Clip:
    if (!arg.isTuple() || arg.getTuple().size() != 2)
      fail("arg must be [low, high]");
    if (number(arg.getTuple()[0], "low") > number(arg.getTuple()[1], "high"))
      fail("low must not exceed high");
    return x;
  default:
    if (!d.isFloat())
      fail("needs a float dtype, has " + d.str());
    return x;
  }
}

} // namespace

InferredShape compositeShape(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg) {
  int arity = opArity(op);
  if ((arity >= 0 && int(src.size()) != arity) || (arity < 0 && src.empty()))
    return {std::nullopt, "'" + std::string(opName(op)) + "' has the wrong number of operands"};
  try {
    switch (op) {
    case Op::Matmul: return {matmul(src), ""};
    case Op::Conv2d: return {conv2d(src, arg), ""};
    case Op::ConvTranspose2d: return {convTranspose2d(src, arg), ""};
    case Op::MaxPool2d:
    case Op::AvgPool2d: return {pool2d(op, src[0], arg), ""};
    case Op::Layernorm:
    case Op::Batchnorm:
    case Op::Rmsnorm: return {normalize(op, src, arg), ""};
    case Op::Gather:
    case Op::Embedding: return {gather(op, src, arg), ""};
    case Op::Concat: return {concat(src, arg), ""};
    case Op::Arange: return {arange(dtype, arg), ""};
    default: return {unaryComposite(op, src[0], arg), ""};
    }
  } catch (const ShapeError &e) {
    return {std::nullopt, "'" + std::string(opName(op)) + "' " + e.msg};
  }
}

} // namespace tgc
