//===- OnnxOpsMath.cpp - ONNX elementwise operators -------------*- C++ -*-===//
// Arithmetic, comparisons, logic, activations, Cast, Clip and Where, each in terms of tgc's ALU and composite ops.
//===----------------------------------------------------------------------===//

#include "Frontend/OnnxImporter.h"

#include <cmath>
#include <limits>

namespace tgc::onnximport {
namespace {

/// Before opset 7, B broadcasts only with broadcast=1, its axes aligned with A's from `axis` (default: the last
/// ones); from opset 7 on, numpy broadcasting (which buildNode does).
std::pair<const UOp *, const UOp *> operands(NodeCtx &n) {
  const UOp *a = n.in(0), *b = n.in(1);
  if (n.opset() >= 7 || !n.attrInt("broadcast", 0))
    return {a, b};
  int64_t axis = n.attrInt("axis", a->rank() - b->rank());
  if (axis < 0 || axis + b->rank() > a->rank())
    n.fail("axis " + std::to_string(axis) + " does not place B inside A");
  Shape s(size_t(axis), 1);
  s.insert(s.end(), b->shape().begin(), b->shape().end());
  s.resize(size_t(a->rank()), 1);
  return {a, n.reshape(b, s)};
}

const UOp *binary(NodeCtx &n, Op op) {
  auto [a, b] = operands(n);
  return n.alu(op, a, b);
}

const UOp *notOf(NodeCtx &n, const UOp *x) { return n.alu(Op::Xor, x, n.scalar(DType(Scalar::Bool), 1)); }

/// min(a, b) = -max(-a, -b) for floats (NaN propagates, -0 < +0 as in max); a selection for integers.
const UOp *minimum(NodeCtx &n, const UOp *a, const UOp *b) {
  if (a->dtype().isFloat())
    return n.unary(Op::Neg, n.alu(Op::Max, n.unary(Op::Neg, a), n.unary(Op::Neg, b)));
  return n.where(n.alu(Op::Cmplt, a, b), a, b);
}

const UOp *floorOf(NodeCtx &n, const UOp *x) {
  const UOp *t = n.unary(Op::Trunc, x); // floor(x) = trunc(x) - (x < trunc(x))
  return n.alu(Op::Sub, t, n.cast(n.alu(Op::Cmplt, x, t), x->dtype()));
}

void requireFloat(NodeCtx &n, const UOp *x) {
  if (!x->dtype().isFloat())
    n.fail("needs a float tensor, got " + std::string(x->dtype().str()));
}

} // namespace

// --- arithmetic ---------------------------------------------------------------------------------------------------

void importAdd(NodeCtx &n) { n.out(0, binary(n, Op::Add)); }
void importSub(NodeCtx &n) { n.out(0, binary(n, Op::Sub)); }
void importMul(NodeCtx &n) { n.out(0, binary(n, Op::Mul)); }

/// Integer division truncates toward zero (as onnxruntime's).
void importDiv(NodeCtx &n) { n.out(0, binary(n, n.in(0)->dtype().isFloat() ? Op::Fdiv : Op::Idiv)); }

/// fmod=1: C's fmod (the sign of the dividend); fmod=0: Python's % (the sign of the divisor), as numpy computes
/// them. Integers map to mod and floormod. Floats: r = fmod(a, b); for fmod=0 a nonzero r whose sign differs from
/// b's gets b added, and a zero r takes b's sign.
void importMod(NodeCtx &n) {
  const UOp *a = n.in(0), *b = n.in(1);
  bool fmod = n.attrInt("fmod", 0) != 0;
  DType d = a->dtype();
  if (!d.isFloat()) {
    n.out(0, n.alu(fmod ? Op::Mod : Op::Floormod, a, b));
    return;
  }
  const UOp *zero = n.scalar(d, 0);
  // a - trunc(a / b) * b, and a itself when the quotient truncates to 0 (b = inf)
  const UOp *q = n.unary(Op::Trunc, n.alu(Op::Fdiv, a, b));
  const UOp *r = n.where(n.alu(Op::Cmpeq, q, zero), a, n.alu(Op::Sub, a, n.alu(Op::Mul, q, b)));
  r = n.where(n.alu(Op::Cmpeq, r, zero), n.alu(Op::Mul, a, zero), r); // fmod's zero has a's sign
  if (!fmod) {
    const UOp *fix = n.alu(Op::And, n.alu(Op::Cmpne, r, zero),
                           n.alu(Op::Cmpne, n.alu(Op::Cmplt, r, zero), n.alu(Op::Cmplt, b, zero)));
    r = n.where(fix, n.alu(Op::Add, r, b), r);
    // a zero result takes the divisor's sign
    r = n.where(n.alu(Op::Cmpeq, r, zero), n.where(n.alu(Op::Cmplt, b, zero), n.scalar(d, -0.0), zero), r);
  }
  n.out(0, r);
}

/// Integer powers go through double (exact while the result fits 2^53).
void importPow(NodeCtx &n) {
  const UOp *x = n.in(0), *y = n.in(1);
  DType d = x->dtype().isFloat() ? x->dtype() : DType(Scalar::F64);
  const UOp *r = n.alu(Op::Pow, n.cast(x, d), n.cast(y, d));
  n.out(0, n.cast(r, x->dtype()));
}

void importNeg(NodeCtx &n) { n.out(0, n.unary(Op::Neg, n.in(0))); }

void importAbs(NodeCtx &n) {
  const UOp *x = n.in(0);
  if (x->dtype().isUnsigned() || x->dtype().isBool())
    return n.out(0, x);
  n.out(0, n.where(n.alu(Op::Cmplt, x, n.scalar(x->dtype(), 0)), n.unary(Op::Neg, x), x));
}

void importReciprocal(NodeCtx &n) {
  requireFloat(n, n.in(0));
  n.out(0, n.unary(Op::Recip, n.in(0)));
}

void importSqrt(NodeCtx &n) {
  requireFloat(n, n.in(0));
  n.out(0, n.unary(Op::Sqrt, n.in(0)));
}

void importExp(NodeCtx &n) { n.out(0, n.make(Op::Exp, {n.in(0)})); }
void importLog(NodeCtx &n) { n.out(0, n.make(Op::Log, {n.in(0)})); }
void importErf(NodeCtx &n) { n.out(0, n.make(Op::Erf, {n.in(0)})); }
void importSin(NodeCtx &n) { n.out(0, n.unary(Op::Sin, n.in(0))); }

/// cos(x) = sin(pi/2 - x)
void importCos(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  n.out(0, n.unary(Op::Sin, n.alu(Op::Sub, n.scalar(x->dtype(), M_PI / 2), x)));
}

void importFloor(NodeCtx &n) {
  requireFloat(n, n.in(0));
  n.out(0, floorOf(n, n.in(0)));
}

/// ceil(x) = -floor(-x)
void importCeil(NodeCtx &n) {
  requireFloat(n, n.in(0));
  n.out(0, n.unary(Op::Neg, floorOf(n, n.unary(Op::Neg, n.in(0)))));
}

/// Variadic: the operands folded left to right (broadcasting).
const UOp *foldOperands(NodeCtx &n, const UOp *(*combine)(NodeCtx &, const UOp *, const UOp *)) {
  if (n.numInputs() == 0)
    n.fail("needs at least one input");
  const UOp *acc = n.in(0);
  for (size_t i = 1; i < n.numInputs(); ++i)
    acc = combine(n, acc, n.in(i));
  return acc;
}

void importSum(NodeCtx &n) {
  n.out(0, foldOperands(n, [](NodeCtx &c, const UOp *a, const UOp *b) { return c.alu(Op::Add, a, b); }));
}

void importMean(NodeCtx &n) {
  const UOp *s = foldOperands(n, [](NodeCtx &c, const UOp *a, const UOp *b) { return c.alu(Op::Add, a, b); });
  requireFloat(n, s);
  n.out(0, n.alu(Op::Mul, s, n.scalar(s->dtype(), 1.0 / double(n.numInputs()))));
}

void importMax(NodeCtx &n) {
  n.out(0, foldOperands(n, [](NodeCtx &c, const UOp *a, const UOp *b) { return c.alu(Op::Max, a, b); }));
}

void importMin(NodeCtx &n) { n.out(0, foldOperands(n, minimum)); }

// --- comparisons and logic ----------------------------------------------------------------------------------------

void importEqual(NodeCtx &n) { n.out(0, binary(n, Op::Cmpeq)); }
void importLess(NodeCtx &n) { n.out(0, binary(n, Op::Cmplt)); }
void importGreater(NodeCtx &n) { n.out(0, n.alu(Op::Cmplt, n.in(1), n.in(0))); }

/// a <= b as (a < b) | (a == b), so NaN compares false
void importLessOrEqual(NodeCtx &n) {
  const UOp *a = n.in(0), *b = n.in(1);
  n.out(0, n.alu(Op::Or, n.alu(Op::Cmplt, a, b), n.alu(Op::Cmpeq, a, b)));
}

void importGreaterOrEqual(NodeCtx &n) {
  const UOp *a = n.in(0), *b = n.in(1);
  n.out(0, n.alu(Op::Or, n.alu(Op::Cmplt, b, a), n.alu(Op::Cmpeq, a, b)));
}

void importNot(NodeCtx &n) { n.out(0, notOf(n, n.in(0))); }
void importAnd(NodeCtx &n) { n.out(0, binary(n, Op::And)); }
void importOr(NodeCtx &n) { n.out(0, binary(n, Op::Or)); }
void importXor(NodeCtx &n) { n.out(0, binary(n, Op::Xor)); }

void importWhere(NodeCtx &n) { n.out(0, n.where(n.in(0), n.in(1), n.in(2))); }

// --- conversions --------------------------------------------------------------------------------------------------

void importCast(NodeCtx &n) {
  int64_t to = n.attrInt("to", 0);
  n.ignoreAttr("saturate"); // only for 8-bit floats, which tgc does not have
  std::optional<DType> d = dtypeOfOnnx(int32_t(to));
  if (!d)
    n.fail("cannot cast to ONNX type " + std::to_string(to));
  n.out(0, n.cast(n.in(0), *d));
}

void importCastLike(NodeCtx &n) {
  n.ignoreAttr("saturate");
  n.out(0, n.cast(n.in(0), n.in(1)->dtype()));
}

void importIdentity(NodeCtx &n) { n.out(0, n.in(0)); }

/// Inference: the input unchanged; the mask (if asked for) is all true.
void importDropout(NodeCtx &n) {
  n.ignoreAttr("ratio");
  n.ignoreAttr("seed");
  n.ignoreAttr("is_test");
  if (n.host(2) && n.scalarOf(2, "training_mode") != 0)
    n.fail("training mode is not supported (tgc compiles inference)");
  if (n.has(2) && !n.host(2))
    n.fail("input 'training_mode' must be known when the model is compiled");
  const UOp *x = n.in(0);
  n.out(0, x);
  n.out(1, n.ctx().constant(DType(Scalar::Bool), 1, x->shapeVec()));
}

// --- activations --------------------------------------------------------------------------------------------------

void importRelu(NodeCtx &n) { n.out(0, n.make(Op::Relu, {n.in(0)})); }
void importSigmoid(NodeCtx &n) { n.out(0, n.make(Op::Sigmoid, {n.in(0)})); }
void importTanh(NodeCtx &n) { n.out(0, n.make(Op::Tanh, {n.in(0)})); }

void importLeakyRelu(NodeCtx &n) { n.out(0, n.make(Op::LeakyRelu, {n.in(0)}, Arg(n.attrFloat("alpha", 0.01)))); }

void importGelu(NodeCtx &n) {
  std::string approx = n.attrString("approximate", "none");
  if (approx != "none" && approx != "tanh")
    n.fail("approximate='" + approx + "' is not one of none, tanh");
  n.out(0, n.make(Op::Gelu, {n.in(0)}, Arg(approx == "none" ? "erf" : "tanh")));
}

/// elu(x) = x if x > 0 else alpha * (exp(x) - 1)
void importElu(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  double alpha = n.attrFloat("alpha", 1.0);
  const UOp *neg =
      n.alu(Op::Mul, n.alu(Op::Sub, n.make(Op::Exp, {x}), n.scalar(x->dtype(), 1)), n.scalar(x->dtype(), alpha));
  n.out(0, n.where(n.alu(Op::Cmplt, n.scalar(x->dtype(), 0), x), x, neg));
}

/// prelu(x, slope) = x if x > 0 else slope * x (slope broadcasts; before opset 7 a [C] slope is per channel)
void importPRelu(NodeCtx &n) {
  const UOp *x = n.in(0), *slope = n.in(1);
  if (n.opset() < 7 && slope->rank() == 1 && x->rank() > 2 && slope->shape()[0] == x->shape()[1] &&
      slope->shape()[0] != x->shape()[size_t(x->rank() - 1)]) {
    Shape s(size_t(x->rank() - 1), 1);
    s[0] = slope->shape()[0];
    slope = n.reshape(slope, s);
  }
  n.out(0, n.where(n.alu(Op::Cmplt, n.scalar(x->dtype(), 0), x), x, n.alu(Op::Mul, x, slope)));
}

/// softplus(x) = log(1 + exp(x))
void importSoftplus(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  n.out(0, n.make(Op::Log, {n.alu(Op::Add, n.make(Op::Exp, {x}), n.scalar(x->dtype(), 1))}));
}

/// hardsigmoid(x) = clip(alpha * x + beta, 0, 1)
void importHardSigmoid(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  double alpha = n.attrFloat("alpha", 0.2), beta = n.attrFloat("beta", 0.5);
  const UOp *y = n.alu(Op::Add, n.alu(Op::Mul, x, n.scalar(x->dtype(), alpha)), n.scalar(x->dtype(), beta));
  n.out(0, n.make(Op::Clip, {y}, Arg::tuple({Arg(0.0), Arg(1.0)})));
}

/// hardswish(x) = x * clip(x / 6 + 1/2, 0, 1)
void importHardSwish(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  const UOp *y = n.alu(Op::Add, n.alu(Op::Mul, x, n.scalar(x->dtype(), 1.0 / 6)), n.scalar(x->dtype(), 0.5));
  n.out(0, n.alu(Op::Mul, x, n.make(Op::Clip, {y}, Arg::tuple({Arg(0.0), Arg(1.0)}))));
}

/// Clip: bounds from attributes (opset < 11) or optional inputs; known bounds become the clip composite, tensor
/// bounds max and min.
void importClip(NodeCtx &n) {
  const UOp *x = n.in(0);
  double inf = std::numeric_limits<double>::infinity();
  double lo = n.attrFloat("min", -inf), hi = n.attrFloat("max", inf);
  if ((n.has(1) && !n.host(1)) || (n.has(2) && !n.host(2))) {
    const UOp *y = x;
    if (n.has(1))
      y = n.alu(Op::Max, y, n.in(1));
    if (n.has(2))
      y = minimum(n, y, n.in(2));
    return n.out(0, y);
  }
  if (n.has(1))
    lo = n.scalarOf(1, "min");
  if (n.has(2))
    hi = n.scalarOf(2, "max");
  if (!x->dtype().isFloat()) { // integer bounds beyond the dtype's range do not bind
    int bits = x->dtype().isBool() ? 1 : int(x->dtype().bits());
    double top = x->dtype().isSigned() ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
    double bottom = x->dtype().isSigned() ? -top - 1 : 0;
    lo = std::clamp(lo, bottom, top);
    hi = std::clamp(hi, bottom, top);
  }
  n.out(0, n.make(Op::Clip, {x}, Arg::tuple({Arg(lo), Arg(hi)})));
}

/// sign(x) = (0 < x) - (x < 0), NaN stays NaN
void importSign(NodeCtx &n) {
  const UOp *x = n.in(0);
  DType d = x->dtype();
  const UOp *zero = n.scalar(d, 0);
  const UOp *s = d.isUnsigned()
                     ? n.cast(n.alu(Op::Cmplt, zero, x), d)
                     : n.alu(Op::Sub, n.cast(n.alu(Op::Cmplt, zero, x), d), n.cast(n.alu(Op::Cmplt, x, zero), d));
  n.out(0, d.isFloat() ? n.where(n.alu(Op::Cmpne, x, x), x, s) : s);
}

/// selu(x) = gamma * (x if x > 0 else alpha * (exp(x) - 1))
void importSelu(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  double alpha = n.attrFloat("alpha", 1.67326319217681884765625),
         gamma = n.attrFloat("gamma", 1.05070102214813232421875);
  DType d = x->dtype();
  const UOp *neg = n.alu(Op::Mul, n.alu(Op::Sub, n.make(Op::Exp, {x}), n.scalar(d, 1)), n.scalar(d, alpha));
  n.out(0, n.alu(Op::Mul, n.where(n.alu(Op::Cmplt, n.scalar(d, 0), x), x, neg), n.scalar(d, gamma)));
}

/// celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
void importCelu(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  DType d = x->dtype();
  double alpha = n.attrFloat("alpha", 1.0);
  const UOp *e =
      n.alu(Op::Mul, n.alu(Op::Sub, n.make(Op::Exp, {n.alu(Op::Mul, x, n.scalar(d, 1 / alpha))}), n.scalar(d, 1)),
            n.scalar(d, alpha));
  n.out(0, n.alu(Op::Add, n.alu(Op::Max, x, n.scalar(d, 0)), minimum(n, e, n.scalar(d, 0))));
}

/// softsign(x) = x / (1 + |x|)
void importSoftsign(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  DType d = x->dtype();
  const UOp *abs = n.where(n.alu(Op::Cmplt, x, n.scalar(d, 0)), n.unary(Op::Neg, x), x);
  n.out(0, n.alu(Op::Fdiv, x, n.alu(Op::Add, abs, n.scalar(d, 1))));
}

/// mish(x) = x * tanh(softplus(x))
void importMish(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  const UOp *sp = n.make(Op::Log, {n.alu(Op::Add, n.make(Op::Exp, {x}), n.scalar(x->dtype(), 1))});
  n.out(0, n.alu(Op::Mul, x, n.make(Op::Tanh, {sp})));
}

/// thresholded_relu(x) = x if x > alpha else 0
void importThresholdedRelu(NodeCtx &n) {
  const UOp *x = n.in(0);
  DType d = x->dtype();
  n.out(0, n.where(n.alu(Op::Cmplt, n.scalar(d, n.attrFloat("alpha", 1.0)), x), x, n.scalar(d, 0)));
}

/// swish(x) = x * sigmoid(alpha * x)
void importSwish(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  const UOp *ax = n.alu(Op::Mul, x, n.scalar(x->dtype(), n.attrFloat("alpha", 1.0)));
  n.out(0, n.alu(Op::Mul, x, n.make(Op::Sigmoid, {ax})));
}

/// shrink(x) = x - bias if x > lambd, x + bias if x < -lambd, else 0
void importShrink(NodeCtx &n) {
  const UOp *x = n.in(0);
  DType d = x->dtype();
  double lambd = n.attrFloat("lambd", 0.5), bias = n.attrFloat("bias", 0.0);
  const UOp *zero = n.scalar(d, 0);
  const UOp *hi = n.where(n.alu(Op::Cmplt, n.scalar(d, lambd), x), n.alu(Op::Sub, x, n.scalar(d, bias)), zero);
  n.out(0, n.where(n.alu(Op::Cmplt, x, n.scalar(d, -lambd)), n.alu(Op::Add, x, n.scalar(d, bias)), hi));
}

/// tan(x) = sin(x) / cos(x)
void importTan(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  const UOp *c = n.unary(Op::Sin, n.alu(Op::Sub, n.scalar(x->dtype(), M_PI / 2), x));
  n.out(0, n.alu(Op::Fdiv, n.unary(Op::Sin, x), c));
}

/// Round half to even: floor(x + 0.5), minus one where x was a tie and the result is odd.
void importRound(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  DType d = x->dtype();
  const UOp *half = n.scalar(d, 0.5);
  const UOp *r = floorOf(n, n.alu(Op::Add, x, half));
  const UOp *tie = n.alu(Op::Cmpeq, n.alu(Op::Sub, r, x), half);
  const UOp *halfR = n.alu(Op::Mul, r, half);
  const UOp *odd = n.alu(Op::Cmpne, floorOf(n, halfR), halfR);
  n.out(0, n.where(n.alu(Op::And, tie, odd), n.alu(Op::Sub, r, n.scalar(d, 1)), r));
}

void importIsNaN(NodeCtx &n) {
  const UOp *x = n.in(0);
  n.out(0, n.alu(Op::Cmpne, x, x));
}

void importIsInf(NodeCtx &n) {
  const UOp *x = n.in(0);
  requireFloat(n, x);
  bool pos = n.attrInt("detect_positive", 1) != 0, neg = n.attrInt("detect_negative", 1) != 0;
  double inf = std::numeric_limits<double>::infinity();
  const UOp *p = n.alu(Op::Cmpeq, x, n.scalar(x->dtype(), inf));
  const UOp *m = n.alu(Op::Cmpeq, x, n.scalar(x->dtype(), -inf));
  const UOp *f = n.ctx().constant(DType(Scalar::Bool), 0, x->shapeVec());
  n.out(0, pos && neg ? n.alu(Op::Or, p, m) : pos ? p : neg ? m : f);
}

/// Shifts by a negative amount or by the width or more give 0 (the reference's numpy semantics for unsigned).
void importBitShift(NodeCtx &n) {
  std::string dir = n.attrString("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    n.fail("direction must be LEFT or RIGHT");
  auto [x, s] = operands(n);
  DType d = x->dtype();
  const UOp *nonNegative = notOf(n, n.alu(Op::Cmplt, s, n.scalar(s->dtype(), 0)));
  const UOp *inRange = n.alu(Op::And, nonNegative, n.alu(Op::Cmplt, s, n.scalar(s->dtype(), double(d.bits()))));
  const UOp *shifted = n.alu(dir == "LEFT" ? Op::Shl : Op::Shr, x, s);
  const UOp *outside = n.scalar(d, 0); // a right shift of a negative value by too much: -1 (all sign bits)
  if (dir == "RIGHT" && d.isSigned())
    outside = n.where(n.alu(Op::Cmplt, x, n.scalar(d, 0)), n.scalar(d, -1), outside);
  n.out(0, n.where(inRange, shifted, outside));
}

void importBitwiseAnd(NodeCtx &n) { n.out(0, binary(n, Op::And)); }
void importBitwiseOr(NodeCtx &n) { n.out(0, binary(n, Op::Or)); }
void importBitwiseXor(NodeCtx &n) { n.out(0, binary(n, Op::Xor)); }

void importBitwiseNot(NodeCtx &n) {
  const UOp *x = n.in(0);
  n.out(0, n.alu(Op::Xor, x, n.ctx().constInt(x->dtype(), -1, Shape{})));
}

} // namespace tgc::onnximport
