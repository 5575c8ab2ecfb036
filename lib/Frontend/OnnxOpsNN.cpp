//===- OnnxOpsNN.cpp - ONNX network operators -------------------*- C++ -*-===//
// Convolutions, GEMMs, normalizations, pooling, softmax, reductions and Resize, mapped onto tgc's composites.
//===----------------------------------------------------------------------===//

#include "Frontend/OnnxImporter.h"

#include "Interp/Interpreter.h"

#include <algorithm>
#include <cmath>

namespace tgc::onnximport {
namespace {

/// The spatial geometry of a convolution or pooling window, 2-D (1-D ops get a leading axis of size 1).
struct Window {
  std::vector<int64_t> kernel, strides, dilations, begin, end;
};

std::vector<int64_t> spatialOf(const UOp *x) { return {x->shape().begin() + 2, x->shape().end()}; }

/// Attributes of an n-D window (n = 1 or 2): kernel_shape (or `kernel`), strides, dilations, pads, auto_pad.
Window readWindow(NodeCtx &n, const std::vector<int64_t> &in, const std::vector<int64_t> &kernel,
                  bool hasDilations = true) {
  size_t r = in.size();
  Window w;
  w.kernel = n.attrInts("kernel_shape", kernel);
  if (w.kernel.size() != r || (!kernel.empty() && w.kernel != kernel))
    n.fail("kernel_shape does not match the " + std::to_string(r) + "-D input or the weights");
  w.strides = n.attrInts("strides", std::vector<int64_t>(r, 1));
  w.dilations = hasDilations ? n.attrInts("dilations", std::vector<int64_t>(r, 1)) : std::vector<int64_t>(r, 1);
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * r, 0));
  if (w.strides.size() != r || w.dilations.size() != r || pads.size() != 2 * r)
    n.fail("strides, dilations or pads do not have one value per spatial axis");
  for (size_t i = 0; i < r; ++i)
    if (w.strides[i] < 1 || w.dilations[i] < 1 || w.kernel[i] < 1 || pads[i] < 0 || pads[i + r] < 0)
      n.fail("kernel sizes, strides and dilations must be positive, pads not negative");
  w.begin.assign(pads.begin(), pads.begin() + int64_t(r));
  w.end.assign(pads.begin() + int64_t(r), pads.end());
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    std::fill(w.begin.begin(), w.begin.end(), 0);
    std::fill(w.end.begin(), w.end.end(), 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < r; ++i) { // out = ceil(in / stride); the odd pad at the end (upper) or start (lower)
      int64_t out = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in[i]);
      w.begin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.end[i] = total - w.begin[i];
    }
  } else if (autoPad != "NOTSET") {
    n.fail("auto_pad '" + autoPad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  }
  return w;
}

/// A 1-D window as 2-D: a leading spatial axis of size 1.
void widen(Window &w) {
  for (auto *v : {&w.kernel, &w.strides, &w.dilations})
    v->insert(v->begin(), 1);
  w.begin.insert(w.begin.begin(), 0);
  w.end.insert(w.end.begin(), 0);
}

Arg pairArg(const std::vector<int64_t> &v) { return Arg::ints({v[0], v[1]}); }
Arg padsArg(const Window &w) { return Arg::ints({w.begin[0], w.end[0], w.begin[1], w.end[1]}); }

/// x[N, C, L] -> [N, C, 1, L]; 2-D inputs pass; others are an error.
const UOp *as2d(NodeCtx &n, const UOp *x, const char *what) {
  if (x->rank() == 4)
    return x;
  if (x->rank() != 3)
    n.fail(std::to_string(x->rank() - 2) + "-D " + what + " is not supported (1-D and 2-D are)");
  Shape s = x->shapeVec();
  s.insert(s.begin() + 2, 1);
  return n.reshape(x, s);
}

const UOp *back1d(NodeCtx &n, const UOp *y, bool was1d) {
  if (!was1d)
    return y;
  Shape s = y->shapeVec();
  s.erase(s.begin() + 2);
  return n.reshape(y, s);
}

/// Output length of a pooling window with ONNX's ceil_mode rule (the last window starts inside the input or the
/// left padding); the extra end padding that ceil_mode needs.
int64_t extraPad(const Window &w, size_t i, int64_t in, bool ceil) {
  int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1, padded = in + w.begin[i] + w.end[i];
  if (!ceil || padded < span)
    return 0;
  int64_t out = (padded - span + w.strides[i] - 1) / w.strides[i] + 1;
  if ((out - 1) * w.strides[i] >= in + w.begin[i])
    --out;
  return std::max<int64_t>(0, (out - 1) * w.strides[i] + span - padded);
}

std::vector<int64_t> allAxesFrom(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t i = first; i < rank; ++i)
    axes.push_back(i);
  return axes;
}

const UOp *dropAxes(NodeCtx &n, const UOp *x, const std::vector<int64_t> &axes) {
  Shape s;
  for (int64_t i = 0; i < x->rank(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end())
      s.push_back(x->shape()[size_t(i)]);
  return n.reshape(x, s);
}

} // namespace

// --- convolutions and products ------------------------------------------------------------------------------------

void importConv(NodeCtx &n) {
  const UOp *x = n.in(0), *w = n.in(1);
  bool is1d = x->rank() == 3;
  if (w->rank() != x->rank())
    n.fail("the weights' rank " + std::to_string(w->rank()) + " differs from the input's " + std::to_string(x->rank()));
  Window win = readWindow(n, spatialOf(x), spatialOf(w));
  int64_t group = n.attrInt("group", 1);
  x = as2d(n, x, "Conv");
  w = as2d(n, w, "Conv");
  if (is1d)
    widen(win);
  std::vector<const UOp *> src{x, w};
  if (n.has(2))
    src.push_back(n.in(2));
  Arg arg = Arg::tuple({Arg(group), pairArg(win.strides), pairArg(win.dilations), padsArg(win)});
  n.out(0, back1d(n, n.make(Op::Conv2d, src, arg), is1d));
}

void importConvTranspose(NodeCtx &n) {
  const UOp *x = n.in(0), *w = n.in(1);
  bool is1d = x->rank() == 3;
  if (w->rank() != x->rank())
    n.fail("the weights' rank differs from the input's");
  std::vector<int64_t> in = spatialOf(x);
  size_t r = in.size();
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  std::vector<int64_t> kernel = n.attrInts("kernel_shape", spatialOf(w));
  std::vector<int64_t> strides = n.attrInts("strides", std::vector<int64_t>(r, 1));
  std::vector<int64_t> dil = n.attrInts("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> outPad = n.attrInts("output_padding", std::vector<int64_t>(r, 0));
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * r, 0));
  std::vector<int64_t> outShape = n.attrInts("output_shape");
  int64_t group = n.attrInt("group", 1);
  if (kernel != spatialOf(w) || strides.size() != r || dil.size() != r || outPad.size() != r || pads.size() != 2 * r)
    n.fail("kernel_shape, strides, dilations, output_padding or pads do not fit the input");
  if (outShape.size() > r)
    outShape.erase(outShape.begin(), outShape.end() - int64_t(r)); // may include N and C
  if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < r; ++i) { // ONNX: total = stride*(in-1) + output_padding + (k-1)*d + 1 - out
      int64_t target = outShape.empty() ? in[i] * strides[i] : outShape[i];
      int64_t total = strides[i] * (in[i] - 1) + outPad[i] + (kernel[i] - 1) * dil[i] + 1 - target;
      if (total < 0) { // a larger output: more output padding
        outPad[i] -= total;
        total = 0;
      }
      pads[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + r] = total - pads[i];
    }
  } else if (autoPad == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  } else if (autoPad != "NOTSET") {
    n.fail("auto_pad '" + autoPad + "' is not supported");
  }
  x = as2d(n, x, "ConvTranspose");
  w = as2d(n, w, "ConvTranspose");
  if (is1d) {
    strides.insert(strides.begin(), 1);
    dil.insert(dil.begin(), 1);
    outPad.insert(outPad.begin(), 0);
    pads = {0, pads[0], 0, pads[1]};
  }
  std::vector<const UOp *> src{x, w};
  if (n.has(2))
    src.push_back(n.in(2));
  Arg arg = Arg::tuple(
      {Arg(group), pairArg(strides), pairArg(dil), Arg::ints({pads[0], pads[2], pads[1], pads[3]}), pairArg(outPad)});
  n.out(0, back1d(n, n.make(Op::ConvTranspose2d, src, arg), is1d));
}

void importMatMul(NodeCtx &n) { n.out(0, n.make(Op::Matmul, {n.in(0), n.in(1)})); }

/// Y = alpha * A' B' + beta * C
void importGemm(NodeCtx &n) {
  const UOp *a = n.in(0), *b = n.in(1);
  if (a->rank() != 2 || b->rank() != 2)
    n.fail("A and B must be matrices");
  if (n.attrInt("transA", 0))
    a = n.permute(a, {1, 0});
  if (n.attrInt("transB", 0))
    b = n.permute(b, {1, 0});
  double alpha = n.attrFloat("alpha", 1.0), beta = n.attrFloat("beta", 1.0);
  const UOp *y = n.make(Op::Matmul, {a, b});
  if (alpha != 1.0)
    y = n.alu(Op::Mul, y, n.scalar(y->dtype(), alpha));
  if (n.has(2) && beta != 0.0) {
    const UOp *c = n.in(2);
    if (beta != 1.0)
      c = n.alu(Op::Mul, c, n.scalar(c->dtype(), beta));
    y = n.alu(Op::Add, y, c);
  }
  n.out(0, y);
}

// --- normalization ------------------------------------------------------------------------------------------------

void importBatchNormalization(NodeCtx &n) {
  if (n.attrInt("training_mode", 0) != 0)
    n.fail("training mode is not supported (tgc compiles inference)");
  if (n.attrInt("spatial", 1) != 1)
    n.fail("spatial=0 is not supported");
  n.ignoreAttr("momentum");
  n.ignoreAttr("is_test");
  n.ignoreAttr("consumed_inputs");
  n.onlyOutputs(1, "training statistics");
  double eps = n.attrFloat("epsilon", 1e-5);
  n.out(0, n.make(Op::Batchnorm, {n.in(0), n.in(1), n.in(2), n.in(3), n.in(4)}, Arg(eps)));
}

void importLayerNormalization(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t a = n.axis(n.attrInt("axis", -1), x->rank());
  double eps = n.attrFloat("epsilon", 1e-5);
  std::optional<DType> stash = dtypeOfOnnx(int32_t(n.attrInt("stash_type", 1)));
  if (!stash || !stash->isFloat())
    n.fail("stash_type must be a float type");
  std::vector<int64_t> axes = allAxesFrom(a, x->rank());
  Shape norm(x->shape().begin() + a, x->shape().end());
  std::vector<const UOp *> src{x, n.expand(n.in(1), norm)};
  if (n.has(2))
    src.push_back(n.expand(n.in(2), norm));
  n.out(0, n.make(Op::Layernorm, src, Arg::tuple({Arg::ints(axes), Arg(eps)})));
  if (n.wantsOutput(1) || n.wantsOutput(2)) { // the statistics, in stash_type: mean and 1/sqrt(var + eps)
    const UOp *xs = n.cast(x, *stash);
    const UOp *mean = n.make(Op::Mean, {xs}, Arg::ints(axes));
    const UOp *d = n.alu(Op::Sub, xs, mean);
    const UOp *var = n.make(Op::Mean, {n.alu(Op::Mul, d, d)}, Arg::ints(axes));
    n.out(1, mean);
    n.out(2, n.unary(Op::Recip, n.unary(Op::Sqrt, n.alu(Op::Add, var, n.scalar(*stash, eps)))));
  }
}

/// RMSNormalization (opset 23): x / sqrt(mean(x^2 over axis..) + eps) * scale
void importRMSNormalization(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t a = n.axis(n.attrInt("axis", -1), x->rank());
  double eps = n.attrFloat("epsilon", 1e-5);
  n.ignoreAttr("stash_type");
  Shape norm(x->shape().begin() + a, x->shape().end());
  n.out(0, n.make(Op::Rmsnorm, {x, n.expand(n.in(1), norm)},
                  Arg::tuple({Arg::ints(allAxesFrom(a, x->rank())), Arg(eps)})));
}

/// Normalize each (sample, group) over its channels and spatial positions, then scale and shift per channel.
const UOp *groupNorm(NodeCtx &n, const UOp *x, int64_t groups, double eps, const UOp *scale, const UOp *bias) {
  Shape s = x->shapeVec();
  if (s.size() < 2 || groups <= 0 || s[1] % groups != 0)
    n.fail("the channels do not divide into " + std::to_string(groups) + " groups");
  int64_t rest = x->numel() / std::max<int64_t>(1, s[0] * groups);
  const UOp *g = n.reshape(x, {s[0], groups, rest});
  const UOp *y = n.reshape(n.make(Op::Layernorm, {g}, Arg::tuple({Arg::ints({2}), Arg(eps)})), s);
  Shape cs(s.size(), 1);
  cs[1] = s[1];
  return n.alu(Op::Add, n.alu(Op::Mul, y, n.reshape(scale, cs)), n.reshape(bias, cs));
}

void importInstanceNormalization(NodeCtx &n) {
  const UOp *x = n.in(0);
  n.out(0, groupNorm(n, x, x->rank() > 1 ? x->shape()[1] : 0, n.attrFloat("epsilon", 1e-5), n.in(1), n.in(2)));
}

/// GroupNormalization: scale and bias per channel (opset 21) or per group (opset 18, repeated over its channels).
void importGroupNormalization(NodeCtx &n) {
  const UOp *x = n.in(0), *scale = n.in(1), *bias = n.in(2);
  int64_t groups = n.attrInt("num_groups", 0);
  n.ignoreAttr("stash_type");
  if (x->rank() < 2)
    n.fail("needs an input of rank 2 or more");
  int64_t c = x->shape()[1];
  if (scale->numel() == groups && groups != c && groups > 0 && c % groups == 0) {
    scale = n.reshape(n.expand(n.reshape(scale, {groups, 1}), {groups, c / groups}), {c});
    bias = n.reshape(n.expand(n.reshape(bias, {groups, 1}), {groups, c / groups}), {c});
  }
  n.out(0, groupNorm(n, x, groups, n.attrFloat("epsilon", 1e-5), scale, bias));
}

/// (x - mean) / sqrt(var + 1e-9) over axes (default [0, 2, 3]), as the reference computes it.
void importMeanVarianceNormalization(NodeCtx &n) {
  const UOp *x = n.in(0);
  std::vector<int64_t> axes = n.attrInts("axes", {0, 2, 3});
  for (int64_t &a : axes)
    a = n.axis(a, x->rank());
  const UOp *mean = n.make(Op::Mean, {x}, Arg::ints(axes));
  const UOp *d = n.alu(Op::Sub, x, mean);
  const UOp *var = n.make(Op::Mean, {n.alu(Op::Mul, d, d)}, Arg::ints(axes));
  n.out(0, n.alu(Op::Fdiv, d, n.alu(Op::Add, n.unary(Op::Sqrt, var), n.scalar(x->dtype(), 1e-9))));
}

/// x / ||x||_p along axis (p = 1 or 2)
void importLpNormalization(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t a = n.axis(n.attrInt("axis", -1), x->rank());
  int64_t p = n.attrInt("p", 2);
  if (p != 1 && p != 2)
    n.fail("p must be 1 or 2");
  const UOp *norm =
      p == 2 ? n.unary(Op::Sqrt, n.reduce(n.alu(Op::Mul, x, x), Op::Add, {a}))
             : n.reduce(n.where(n.alu(Op::Cmplt, x, n.scalar(x->dtype(), 0)), n.unary(Op::Neg, x), x), Op::Add, {a});
  const UOp *one = n.scalar(x->dtype(), 1); // a zero vector stays zero
  n.out(0, n.alu(Op::Fdiv, x, n.where(n.alu(Op::Cmpeq, norm, n.scalar(x->dtype(), 0)), one, norm)));
}

/// LRN: x / (bias + alpha / size * sum of x^2 over the channels [c - (size-1)/2, c + size/2])^beta, the sum as
/// `size` shifted copies of the zero-padded squares.
void importLRN(NodeCtx &n) {
  const UOp *x = n.in(0);
  int64_t size = n.attrInt("size", 0);
  double alpha = n.attrFloat("alpha", 1e-4), beta = n.attrFloat("beta", 0.75), bias = n.attrFloat("bias", 1.0);
  if (x->rank() < 3 || size < 1 || size > 4096)
    n.fail("needs an [N, C, ...] input and a size in [1, 4096]");
  int64_t c = x->shape()[1], before = (size - 1) / 2, after = size - 1 - before;
  std::vector<std::pair<int64_t, int64_t>> p(size_t(x->rank()), {0, 0});
  p[1] = {before, after};
  const UOp *sq = n.pad(n.alu(Op::Mul, x, x), p);
  const UOp *sum = nullptr;
  for (int64_t k = 0; k < size; ++k) {
    const UOp *part = n.shrinkAxis(sq, 1, k, k + c);
    sum = sum ? n.alu(Op::Add, sum, part) : part;
  }
  DType d = x->dtype();
  const UOp *base = n.alu(Op::Add, n.alu(Op::Mul, sum, n.scalar(d, alpha / double(size))), n.scalar(d, bias));
  n.out(0, n.alu(Op::Fdiv, x, n.alu(Op::Pow, base, n.scalar(d, beta))));
}

/// Softmax and LogSoftmax: before opset 13 the input is seen as 2-D [outer, inner] split at `axis` (default 1).
void importSoftmaxLike(NodeCtx &n, Op op) {
  const UOp *x = n.in(0);
  if (n.opset() >= 13)
    return n.out(0, n.make(op, {x}, Arg(n.axis(n.attrInt("axis", -1), x->rank()))));
  int64_t a = n.attrInt("axis", 1), r = x->rank();
  if (a < -r || a > r)
    n.fail("axis " + std::to_string(a) + " is outside the input");
  a = a < 0 ? a + r : a;
  int64_t outer = 1;
  for (int64_t i = 0; i < a; ++i)
    outer *= x->shape()[size_t(i)];
  const UOp *flat = n.reshape(x, {outer, outer == 0 ? 0 : x->numel() / outer});
  n.out(0, n.reshape(n.make(op, {flat}, Arg(int64_t(1))), x->shapeVec()));
}

void importSoftmax(NodeCtx &n) { importSoftmaxLike(n, Op::Softmax); }
void importLogSoftmax(NodeCtx &n) { importSoftmaxLike(n, Op::LogSoftmax); }

// --- pooling ------------------------------------------------------------------------------------------------------

void importMaxPool(NodeCtx &n) {
  const UOp *x = n.in(0);
  bool is1d = x->rank() == 3;
  n.onlyOutputs(1, "indices");
  if (n.attrInt("storage_order", 0) != 0)
    n.fail("storage_order=1 is only meaningful for the indices output, which is not supported");
  Window w = readWindow(n, spatialOf(x), {});
  bool ceil = n.attrInt("ceil_mode", 0) != 0;
  std::vector<int64_t> in = spatialOf(x);
  for (size_t i = 0; i < in.size(); ++i)
    w.end[i] += extraPad(w, i, in[i], ceil);
  x = as2d(n, x, "MaxPool");
  if (is1d)
    widen(w);
  Arg arg = Arg::tuple({pairArg(w.kernel), pairArg(w.strides), pairArg(w.dilations), padsArg(w)});
  n.out(0, back1d(n, n.make(Op::MaxPool2d, {x}, arg), is1d));
}

/// With count_include_pad and ceil_mode's extra end padding, only the explicit pads count: they are padded as
/// zeros first, and the extra is a pad that does not count.
void importAveragePool(NodeCtx &n) {
  const UOp *x = n.in(0);
  bool is1d = x->rank() == 3;
  Window w = readWindow(n, spatialOf(x), {});
  if (std::any_of(w.dilations.begin(), w.dilations.end(), [](int64_t d) { return d != 1; }))
    n.fail("dilations are not supported for AveragePool");
  bool ceil = n.attrInt("ceil_mode", 0) != 0;
  bool countPad = n.attrInt("count_include_pad", 0) != 0;
  std::vector<int64_t> in = spatialOf(x), extra;
  for (size_t i = 0; i < in.size(); ++i)
    extra.push_back(extraPad(w, i, in[i], ceil));
  x = as2d(n, x, "AveragePool");
  if (is1d) {
    widen(w);
    extra.insert(extra.begin(), 0);
  }
  bool hasExtra = extra[0] || extra[1];
  if (countPad && hasExtra) {
    x = n.pad(x, {{0, 0}, {0, 0}, {w.begin[0], w.end[0]}, {w.begin[1], w.end[1]}});
    w.begin = {0, 0};
    w.end = extra;
    countPad = false;
  } else {
    w.end[0] += extra[0];
    w.end[1] += extra[1];
  }
  Arg arg = Arg::tuple({pairArg(w.kernel), pairArg(w.strides), padsArg(w), Arg(countPad)});
  n.out(0, back1d(n, n.make(Op::AvgPool2d, {x}, arg), is1d));
}

void importGlobalAveragePool(NodeCtx &n) {
  const UOp *x = n.in(0);
  n.out(0, n.make(Op::Mean, {x}, Arg::ints(allAxesFrom(2, x->rank()))));
}

void importGlobalMaxPool(NodeCtx &n) {
  const UOp *x = n.in(0);
  n.out(0, n.reduce(x, Op::Max, allAxesFrom(2, x->rank())));
}

// --- reductions ---------------------------------------------------------------------------------------------------

namespace {

enum class Reduction { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

/// The fold of one reduction over `axes` (kept), with the element map before and the result map after.
const UOp *reduceBy(NodeCtx &n, const UOp *x, Reduction r, const std::vector<int64_t> &axes) {
  DType d = x->dtype();
  auto absOf = [&](const UOp *v) {
    return d.isUnsigned() ? v : n.where(n.alu(Op::Cmplt, v, n.scalar(d, 0)), n.unary(Op::Neg, v), v);
  };
  auto notBits = [&](const UOp *v) { return n.alu(Op::Xor, v, n.ctx().constInt(d, -1, Shape{})); };
  if (d.isBool() && (r == Reduction::Max || r == Reduction::Min)) // any / all, through u8
    return n.cast(reduceBy(n, n.cast(x, DType(Scalar::U8)), r, axes), d);
  switch (r) {
  case Reduction::Sum: return n.reduce(x, Op::Add, axes);
  case Reduction::Prod: return n.reduce(x, Op::Mul, axes);
  case Reduction::Max: return n.reduce(x, Op::Max, axes);
  case Reduction::Min: // min = -max(-x) for floats, ~max(~x) for integers
    if (d.isFloat())
      return n.unary(Op::Neg, n.reduce(n.unary(Op::Neg, x), Op::Max, axes));
    return notBits(n.reduce(notBits(x), Op::Max, axes));
  case Reduction::Mean:
    if (!d.isFloat())
      n.fail("needs a float tensor");
    return axes.empty() ? x : n.make(Op::Mean, {x}, Arg::ints(axes));
  case Reduction::L1: return n.reduce(absOf(x), Op::Add, axes);
  case Reduction::SumSquare: return n.reduce(n.alu(Op::Mul, x, x), Op::Add, axes);
  case Reduction::L2: return n.unary(Op::Sqrt, n.reduce(n.alu(Op::Mul, x, x), Op::Add, axes));
  case Reduction::LogSum: return n.make(Op::Log, {n.reduce(x, Op::Add, axes)});
  case Reduction::LogSumExp: { // log(sum(exp(x - m))) + m, m = max(x)
    const UOp *m = n.reduce(x, Op::Max, axes);
    const UOp *s = n.reduce(n.make(Op::Exp, {n.alu(Op::Sub, x, m)}), Op::Add, axes);
    return n.alu(Op::Add, n.make(Op::Log, {s}), m);
  }
  }
  return x;
}

/// Axes come from the attribute, or from input 1 from opset 13 (ReduceSum) or 18 (the others).
void importReduce(NodeCtx &n, Reduction r) {
  const UOp *x = n.in(0);
  int64_t since = r == Reduction::Sum ? 13 : 18;
  std::vector<int64_t> axes = n.opset() < since ? n.attrInts("axes")
                              : n.has(1)        ? n.ints(1, "axes")
                                                : std::vector<int64_t>{};
  bool keep = n.attrInt("keepdims", 1) != 0;
  bool noop = n.attrInt("noop_with_empty_axes", 0) != 0;
  if (axes.empty() && !noop)
    axes = allAxesFrom(0, x->rank());
  for (int64_t &a : axes)
    a = n.axis(a, x->rank());
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  const UOp *y = reduceBy(n, x, r, axes);
  n.out(0, keep ? y : dropAxes(n, y, axes));
}

} // namespace

void importReduceSum(NodeCtx &n) { importReduce(n, Reduction::Sum); }
void importReduceMean(NodeCtx &n) { importReduce(n, Reduction::Mean); }
void importReduceMax(NodeCtx &n) { importReduce(n, Reduction::Max); }
void importReduceMin(NodeCtx &n) { importReduce(n, Reduction::Min); }
void importReduceProd(NodeCtx &n) { importReduce(n, Reduction::Prod); }
void importReduceL1(NodeCtx &n) { importReduce(n, Reduction::L1); }
void importReduceL2(NodeCtx &n) { importReduce(n, Reduction::L2); }
void importReduceSumSquare(NodeCtx &n) { importReduce(n, Reduction::SumSquare); }
void importReduceLogSum(NodeCtx &n) { importReduce(n, Reduction::LogSum); }
void importReduceLogSumExp(NodeCtx &n) { importReduce(n, Reduction::LogSumExp); }

// --- Resize -------------------------------------------------------------------------------------------------------

namespace {

/// Where output position o of an axis reads from, in input coordinates.
double sourceCoordinate(NodeCtx &n, const std::string &mode, int64_t o, int64_t in, int64_t out, double scale,
                        double resized) {
  double x = double(o);
  if (mode == "half_pixel")
    return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return resized == 1 ? 0.0 : x * double(in - 1) / (resized - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  n.fail("coordinate_transformation_mode '" + mode + "' is not supported");
}

int64_t nearestIndex(NodeCtx &n, const std::string &mode, double x, int64_t in) {
  double i;
  if (mode == "floor")
    i = std::floor(x);
  else if (mode == "ceil")
    i = std::ceil(x);
  else if (mode == "round_prefer_floor")
    i = x - std::floor(x) == 0.5 ? std::floor(x) : std::round(x);
  else if (mode == "round_prefer_ceil")
    i = std::round(x);
  else
    n.fail("nearest_mode '" + mode + "' is not supported");
  return std::clamp<int64_t>(int64_t(i), 0, in - 1);
}

/// Resize one axis: nearest is a gather of known rows, linear a blend of two gathers with known weights.
/// `resized` is the output length before rounding (in * scale), which align_corners divides by.
const UOp *resizeAxis(NodeCtx &n, const UOp *x, int64_t axis, int64_t out, double scale, double resized,
                      const std::string &mode, const std::string &coord, const std::string &nearest) {
  int64_t in = x->shape()[size_t(axis)];
  n.tableSize(out, "the index table of the resized axis");
  std::vector<int64_t> lo, hi;
  std::vector<double> frac;
  for (int64_t o = 0; o < out; ++o) {
    double src = sourceCoordinate(n, coord, o, in, out, scale, resized);
    if (mode == "nearest") {
      lo.push_back(nearestIndex(n, nearest, src, in));
      continue;
    }
    src = std::clamp(src, 0.0, double(in - 1));
    int64_t i0 = int64_t(std::floor(src));
    lo.push_back(i0);
    hi.push_back(std::min(i0 + 1, in - 1));
    frac.push_back(src - double(i0));
  }
  std::string tag = "." + std::to_string(axis);
  const UOp *a = n.takeAlong(x, axis, lo, n.derivedName(tag + ".index"));
  if (mode == "nearest")
    return a;
  const UOp *b = n.takeAlong(x, axis, hi, n.derivedName(tag + ".index1"));
  Shape ws(size_t(x->rank()), 1);
  ws[size_t(axis)] = out;
  std::optional<rt::ElemType> et = interp::elemTypeOf(x->dtype());
  const UOp *w = n.constant(makeArray(*et, ws, frac), n.derivedName(tag + ".weight"));
  // a + (b - a) * w
  return n.alu(Op::Add, a, n.alu(Op::Mul, n.alu(Op::Sub, b, a), w));
}

void resize(NodeCtx &n, const std::vector<double> &scalesIn, const std::vector<int64_t> &sizesIn,
            const std::string &mode, const std::string &coord, const std::string &nearest) {
  const UOp *x = n.in(0);
  int64_t r = x->rank();
  if (mode != "nearest" && mode != "linear")
    n.fail("mode '" + mode + "' is not supported (nearest, linear)");
  if (mode == "linear" && !x->dtype().isFloat())
    n.fail("linear resizing needs a float tensor");
  std::vector<int64_t> axes = n.attrInts("axes", allAxesFrom(0, r));
  for (int64_t &a : axes)
    a = n.axis(a, r);
  if (!sizesIn.empty() ? sizesIn.size() != axes.size() : scalesIn.size() != axes.size())
    n.fail("scales or sizes need one value per axis");
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t in = x->shape()[size_t(axes[k])];
    double scale;
    int64_t out;
    if (!sizesIn.empty()) {
      out = sizesIn[k];
      scale = in == 0 ? 1.0 : double(out) / double(in);
    } else {
      scale = scalesIn[k];
      double len = std::floor(double(in) * scale);
      if (!(len >= 0 && len < double(int64_t(1) << 31)))
        n.fail("scale " + std::to_string(scale) + " gives an output size tgc cannot make");
      out = int64_t(len);
    }
    if (out < 0 || out >= (int64_t(1) << 31) || scale <= 0 || !std::isfinite(scale))
      n.fail("scales and sizes must be positive and give sizes below 2^31");
    if (out == in && scale == 1.0)
      continue;
    double resized = sizesIn.empty() ? double(in) * scale : double(out);
    x = resizeAxis(n, x, axes[k], out, scale, resized, mode, coord, nearest);
  }
  n.out(0, x);
}

} // namespace

void importResize(NodeCtx &n) {
  std::string mode = n.attrString("mode", "nearest");
  std::string coord = n.attrString("coordinate_transformation_mode", n.opset() < 11 ? "asymmetric" : "half_pixel");
  std::string nearest = n.attrString("nearest_mode", n.opset() < 11 ? "floor" : "round_prefer_floor");
  n.ignoreAttr("cubic_coeff_a");
  n.ignoreAttr("extrapolation_value"); // only for tf_crop_and_resize
  if (n.attrInt("exclude_outside", 0) != 0 || n.attrInt("antialias", 0) != 0)
    n.fail("exclude_outside and antialias are not supported");
  if (n.attrString("keep_aspect_ratio_policy", "stretch") != "stretch")
    n.fail("keep_aspect_ratio_policy other than stretch is not supported");
  size_t scalesAt = n.opset() < 11 ? 1 : 2;
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (n.has(scalesAt) && n.host(scalesAt) && n.host(scalesAt)->numel() > 0)
    scales = n.doubles(scalesAt, "scales");
  else if (n.opset() >= 11 && n.has(3))
    sizes = n.ints(3, "sizes");
  else
    n.fail("scales or sizes must be known when the model is compiled (the output shape depends on them)");
  resize(n, scales, sizes, mode, coord, nearest);
}

void importUpsample(NodeCtx &n) {
  std::string mode = n.attrString("mode", "nearest");
  std::vector<double> scales = n.opset() < 9 ? n.attrFloats("scales") : n.doubles(1, "scales");
  resize(n, scales, {}, mode, "asymmetric", "floor");
}

} // namespace tgc::onnximport
