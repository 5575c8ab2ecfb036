//===- Transcendental.cpp - exp2, log2 and sin as polynomials ---*- C++ -*-===//
// For targets without native (or vectorizable) versions: range reduction plus a polynomial, in float32 arithmetic.
//===----------------------------------------------------------------------===//
//
// Accuracy (measured against the C library in test/unit/TranscendentalTest.cpp, on float32):
//   exp2: x clamped to [-151, 129] (below: -254, whose 2^q is exactly 0), q = round(x) (adding 1.5 * 2^23),
//         s = x - q in [-1/2, 1/2], 2^s by a degree-6 minimax polynomial (SLEEF's coefficients), scaled by 2^q built
//         from the exponent bits (in two halves, so 2^q never overflows early and underflows through the
//         denormals). Inf above 128, 0 below -150, NaN stays NaN; about 20 vector instructions, no conversion and
//         no select after the clamp.
//   log2: x = m * 2^e with m in [0.75, 1.5) from the exponent bits (denormals scaled by 2^64 first), then
//         log2(m) = 2/ln2 * atanh(t), t = (m-1)/(m+1), by its odd series to t^9. -inf at 0, NaN below 0, inf at inf.
//   sin:  q = round(x * 2/pi), r = x - q*pi/2 with pi/2 in three parts (Cody-Waite), then the sine or cosine
//         series of r by the quadrant q mod 4. Inf, NaN and |x| > 1.6e7 give NaN.
//   pow:  where the target has none, exp2(y * log2|x|) with C's special cases, then as above (<= 96 ulp for
//         |y log2 x| <= 100).
// float16 and bfloat16 compute in float32 and round once; float64 keeps the native operation. Only kernel-level
// (unshaped) ops are rewritten: the pass runs after rangeify.

#include "IR/Rewrite.h"
#include "Passes/Pass.h"

#include <cmath>
#include <vector>

namespace tgc {
namespace {

/// Scalar kernel-level arithmetic on one dtype, for writing the formulas.
class F {
public:
  F(const UOp *u) : u_(u) {}
  const UOp *u() const { return u_; }
  Context &ctx() const { return u_->ctx(); }
  DType dt() const { return u_->dtype(); }

  F c(double v) const { return ctx().constant(dt(), v); }
  F ci(int64_t v) const { return ctx().constInt(dt(), v); }
  F op(Op o, const F &b) const { return ctx().alu(o, {u_, b.u_}); }
  F operator+(const F &b) const { return op(Op::Add, b); }
  F operator-(const F &b) const { return op(Op::Sub, b); }
  F operator*(const F &b) const { return op(Op::Mul, b); }
  F operator+(double b) const { return *this + c(b); }
  F operator*(double b) const { return *this * c(b); }
  F lt(const F &b) const { return op(Op::Cmplt, b); }
  F ne(const F &b) const { return op(Op::Cmpne, b); }
  F eq(const F &b) const { return op(Op::Cmpeq, b); }
  F operator&&(const F &b) const { return op(Op::And, b); }
  F operator||(const F &b) const { return op(Op::Or, b); }
  F where(const F &a, const F &b) const { return ctx().alu(Op::Where, {u_, a.u_, b.u_}); }
  F cast(DType d) const { return ctx().cast(u_, d); }
  F bitcast(DType d) const { return ctx().make(Op::Bitcast, d, {u_}); }
  F neg() const { return ctx().alu(Op::Neg, {u_}); }

private:
  const UOp *u_;
};

F poly(const F &x, std::initializer_list<double> coeffs) {
  auto it = coeffs.begin();
  F acc = x.c(*it++);
  for (; it != coeffs.end(); ++it)
    acc = acc * x + *it;
  return acc;
}

/// round half away from zero, as an integer (x is in range)
F roundToInt(const F &x) {
  F half = x.lt(x.c(0)).where(x.c(-0.5), x.c(0.5));
  return (x + half).cast(dt::I32);
}

/// 2^k for integer k in [-126, 127], from the exponent bits
F pow2i(const F &k) { return ((k + k.ci(127)).op(Op::Shl, k.ci(23))).bitcast(dt::F32); }

/// x clamped to [lo, hi]; NaN becomes 0 so conversions to integers stay defined (callers restore NaN)
F clampDefined(const F &x, double lo, double hi) {
  F c = x.lt(x.c(lo)).where(x.c(lo), x.c(hi).lt(x).where(x.c(hi), x));
  return x.ne(x).where(x.c(0), c);
}

F exp2f(const F &x0) {
  // above 129 the result is inf: x becomes 129. Below -151 it is 0: x becomes -254, whose halves of 2^q are both
  // 2^-127, the bits of +0.0, so the product is 0 without an underflow (an underflowing multiply costs a microcode
  // assist on Intel CPUs: the -inf lanes of a causal mask made GPT-2's softmax 4x slower). NaN fails both compares.
  F x = x0.lt(x0.c(-151)).where(x0.c(-254), x0.c(129).lt(x0).where(x0.c(129), x0));
  // q = round(x) by adding 1.5 * 2^23, whose last bit is the unit (ties to even); as an integer, from the sum's bits.
  // A NaN x gives some q, and s = NaN makes the result NaN.
  F t = x + 12582912.0;
  F qf = t - x.c(12582912.0);
  F bits = t.bitcast(dt::I32);
  F q = bits - bits.ci(0x4b400000);
  F s = x - qf;
  F u = poly(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476, 0.6931471825, 1.0});
  F half = q.op(Op::Shr, q.ci(1));
  return u * pow2i(half) * pow2i(q - half);
}

F log2f(const F &x0) {
  F tiny = x0.lt(x0.c(1.1754943508222875e-38)); // denormal or smaller: scale by 2^64 first
  F x = tiny.where(x0 * 18446744073709551616.0, x0);
  F bits = (x * (1.0 / 0.75)).bitcast(dt::I32);
  F e = (bits.op(Op::Shr, bits.ci(23)).op(Op::And, bits.ci(0xff))) - bits.ci(127);
  // m = x * 2^-e, by subtracting e from the exponent field
  F m = (x.bitcast(dt::I32) - e.op(Op::Shl, e.ci(23))).bitcast(dt::F32);
  F num = m + (-1.0);
  F den = m + 1.0;
  F tt = x.ctx().alu(Op::Fdiv, {num.u(), den.u()});
  F t2 = tt * tt;
  double k = 2.0 / M_LN2;
  F series = poly(t2, {k / 9, k / 7, k / 5, k / 3, k}) * tt;
  F r = e.cast(dt::F32) + tiny.where(x.c(-64), x.c(0)) + series;
  r = x0.lt(x0.c(0)).where(x0.c(NAN), r);
  r = x0.ne(x0.c(0)).where(r, x0.c(-INFINITY));
  r = x0.ne(x0.c(INFINITY)).where(r, x0);
  return x0.ne(x0).where(x0, r);
}

F sinf(const F &x0) {
  // beyond 2^24 the reduction is meaningless: such inputs (and inf, NaN) give NaN, with a defined computation
  F big = x0.c(1.6e7).lt(x0.ctx().alu(Op::Max, {x0.u(), x0.neg().u()}));
  F x = clampDefined(x0, -1.6e7, 1.6e7);
  F q = roundToInt(x * (2.0 / M_PI));
  F qf = q.cast(dt::F32);
  // pi/2 in three parts of 8, 12 and 24 bits: q*A and q*B are exact for |q| < 2^12 (Cody-Waite)
  F r = x - qf * 1.5703125;
  r = r - qf * 0.0004837512969970703;
  r = r - qf * 7.549790126404332e-08;
  F r2 = r * r;
  F s = r + r * r2 * poly(r2, {1.0 / 362880, -1.0 / 5040, 1.0 / 120, -1.0 / 6});
  F c = poly(r2, {-1.0 / 3628800, 1.0 / 40320, -1.0 / 720, 1.0 / 24, -0.5, 1.0});
  F quadrant = q.op(Op::And, q.ci(3));
  F odd = quadrant.op(Op::And, quadrant.ci(1)).ne(quadrant.ci(0));
  F negative = quadrant.op(Op::And, quadrant.ci(2)).ne(quadrant.ci(0));
  F v = odd.where(c, s);
  v = negative.where(v.neg(), v);
  F undefined = big.op(Op::Or, x0.ne(x0));
  return undefined.where(x0.c(NAN), v);
}

F unary(Op o, const F &x) { return x.ctx().alu(o, {x.u()}); }

/// |x| by clearing the sign bit (exact for -0 and NaN)
F absf(const F &x) {
  F bits = x.bitcast(dt::I32);
  return bits.op(Op::And, bits.ci(0x7fffffff)).bitcast(dt::F32);
}

/// C's powf as exp2(y * log2|x|): a negative x takes the sign of odd integer powers and gives NaN for non-integer
/// ones; pow(x, 0), pow(1, y) and pow(-1, +-inf) are 1. exp2 and log2 stay ops, for the target or for the polynomials.
F powf(const F &x, const F &y) {
  F ax = absf(x);
  F ay = absf(y);
  F l = unary(Op::Log2, ax);
  F r = unary(Op::Exp2, y * l);
  F integer = unary(Op::Trunc, y).eq(y);
  // floats from 2^24 up are even integers; below, the integer's low bit says odd
  F low = clampDefined(y, -16777216.0, 16777216.0).cast(dt::I32);
  F odd = integer && ay.lt(y.c(16777216.0)) && low.op(Op::And, low.ci(1)).ne(low.ci(0));
  F bits = x.bitcast(dt::I32);
  F negative = bits.lt(bits.ci(0)); // the sign bit, so -0 counts
  r = (negative && odd).where(r.neg(), r);
  F finiteNegative = x.lt(x.c(0)) && x.c(-INFINITY).lt(x);
  r = (finiteNegative && integer.ne(integer.c(1))).where(x.c(NAN), r);
  F one = y.eq(y.c(0)) || x.eq(x.c(1)) || (ax.eq(x.c(1)) && ay.eq(y.c(INFINITY)));
  return one.where(x.c(1), r);
}

/// u computed by `f` on its sources in float32 (float16 and bfloat16 are widened and the result rounded once);
/// nullptr for float64, which keeps the op, and for tensor-level or vector ops
template <typename Fn> const UOp *inFloat32(const UOp *u, Fn f) {
  DType d = u->dtype();
  if (u->hasShape() || d.isVector() ||
      (d.scalar() != Scalar::F32 && d.scalar() != Scalar::F16 && d.scalar() != Scalar::BF16))
    return nullptr;
  std::vector<F> x;
  for (const UOp *s : u->src())
    x.push_back(d.scalar() == Scalar::F32 ? F(s) : F(s).cast(dt::F32));
  F r = f(x);
  return d.scalar() == Scalar::F32 ? r.u() : r.cast(d).u();
}

const UOp *decompose(const Match &m) {
  Op op = m.root()->op();
  return inFloat32(m.root(), [op](const std::vector<F> &x) {
    return op == Op::Exp2 ? exp2f(x[0]) : op == Op::Log2 ? log2f(x[0]) : sinf(x[0]);
  });
}

const UOp *decomposePow(const Match &m) {
  return inFloat32(m.root(), [](const std::vector<F> &x) { return powf(x[0], x[1]); });
}

} // namespace

const UOp *runDecomposeTranscendentals(const UOp *root, PassContext &pc) {
  static const PatternMatcher pm("decompose-transcendentals",
                                 {{UPat::any({Op::Exp2, Op::Log2, Op::Sin}), decompose,
                                   "exp2/log2/sin(x) -> range reduction + polynomial (float32 arithmetic)"}});
  static const PatternMatcher powRule(
      "decompose-pow",
      {{UPat::any({Op::Pow}), decomposePow, "pow(x, y) -> exp2(y * log2|x|) with C's sign and special cases"}});
  if (!pc.target.has(native::Pow))
    root = graphRewrite(root, powRule); // its exp2 and log2 are decomposed below where the target has none
  if (pc.target.has(native::Transc))
    return root; // the renderer has exact-enough versions of its own
  return graphRewrite(root, pm);
}

} // namespace tgc
