//===- TensorBuilder.h - Building tensor graphs like tinygrad's Tensor -*- C++ -*-===//
// A thin value type over a shaped UOp with movement, broadcasting arithmetic and reductions, for decompositions.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <string>
#include <utility>
#include <vector>

namespace tgc {

/// A movement or reduce the builder was asked for has no valid shape (say an intermediate tensor too large to
/// exist); passes that build with Tensor turn it into a located error.
struct TensorShapeError {
  std::string message;
};

class Tensor {
public:
  Tensor(const UOp *u) : u_(u) {}
  const UOp *uop() const { return u_; }
  Context &ctx() const { return u_->ctx(); }
  DType dtype() const { return u_->dtype(); }
  Shape shape() const { return u_->shapeVec(); }
  int64_t dim(int64_t axis) const; // negative axes count from the end
  int rank() const { return u_->rank(); }

  // --- creation
  /// A rank-0 constant of `like`'s dtype (broadcasts in elementwise ops).
  static Tensor scalar(const Tensor &like, double v);
  static Tensor scalarOf(Context &ctx, DType d, double v);
  /// A constant tensor of a given shape.
  static Tensor full(Context &ctx, DType d, const Shape &s, double v);
  /// A constant tensor of `like`'s shape and axis variables.
  static Tensor fullLike(const Tensor &like, DType d, double v);

  // --- movement
  Tensor reshape(const Shape &s) const;
  Tensor expand(const Shape &s) const;
  Tensor permute(const std::vector<int64_t> &order) const;
  /// Pad each axis by [before, after]; negative amounts shrink instead.
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>> &p) const;
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>> &b) const;
  Tensor flip(const std::vector<int64_t> &axes) const;
  /// Pad with a value other than zero (through a mask).
  Tensor padValue(const std::vector<std::pair<int64_t, int64_t>> &p, double v) const;
  /// numpy broadcasting to `s` (prepends axes of size 1, then expands to the axes' variables `vars`, if any).
  Tensor broadcastTo(const Shape &s, const std::vector<const UOp *> &vars = {}) const;
  Tensor transpose(int64_t a, int64_t b) const;
  /// Move `axis` to the end.
  Tensor moveToEnd(int64_t axis) const;
  /// Repeat along the last axis: [..., i] -> [..., n*i].
  Tensor repeatLast(int64_t n) const;
  /// The tensor stored in a buffer of its own (a kernel boundary that later kernels read).
  Tensor contiguous() const { return ctx().make(Op::Contiguous, dtype(), {u_}, Arg(), shape()); }

  // --- elementwise (operands broadcast numpy-style)
  Tensor alu(Op op, const Tensor &b) const;
  Tensor unary(Op op) const { return ctx().alu(op, {u_}); }
  Tensor where(const Tensor &a, const Tensor &b) const; // this is the condition
  Tensor cast(DType d) const { return ctx().make(Op::Cast, d, {u_}, Arg(), u_->shapeVec()); }
  Tensor maximum(const Tensor &b) const { return alu(Op::Max, b); }
  Tensor lt(const Tensor &b) const { return alu(Op::Cmplt, b); }
  Tensor eq(const Tensor &b) const { return alu(Op::Cmpeq, b); }
  Tensor neg() const { return unary(Op::Neg); }
  Tensor recip() const { return unary(Op::Recip); }
  Tensor sqrt() const { return unary(Op::Sqrt); }
  Tensor exp2() const { return unary(Op::Exp2); }
  Tensor log2() const { return unary(Op::Log2); }
  Tensor exp() const; // exp2(x / ln 2)
  Tensor log() const; // log2(x) * ln 2
  Tensor rsqrt() const { return sqrt().recip(); }
  Tensor square() const { return alu(Op::Mul, *this); }

  // --- reductions over axes, keeping them as size 1
  Tensor reduce(Op op, const std::vector<int64_t> &axes) const;
  Tensor sum(const std::vector<int64_t> &axes) const { return reduce(Op::Add, axes); }
  Tensor max(const std::vector<int64_t> &axes) const { return reduce(Op::Max, axes); }
  Tensor mean(const std::vector<int64_t> &axes) const;

  /// Sliding windows over the last k.size() axes: [..., i0, i1] -> [..., o0, o1, k0, k1] (tinygrad's _pool).
  Tensor pool(const std::vector<int64_t> &k, const std::vector<int64_t> &stride,
              const std::vector<int64_t> &dilation) const;

private:
  const UOp *u_;
};

Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Tensor &b); // floats: a * recip(b)
Tensor operator+(const Tensor &a, double b);
Tensor operator-(const Tensor &a, double b);
Tensor operator*(const Tensor &a, double b);

} // namespace tgc
