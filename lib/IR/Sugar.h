//===- Sugar.h - Tensor-level conveniences made explicit --------*- C++ -*-===//
// numpy broadcasting, negative axes and 1-D matmul operands, rewritten into explicit nodes when a tensor op is built.
//===----------------------------------------------------------------------===//
//
// The IR itself stays strict (elementwise operands of one shape, axes in [0, rank), matmul of rank >= 2), so passes
// never see the conveniences; the parser (and any importer) calls desugar() before building a tensor-level node:
//   add(x[4, 1], y[3])       -> add(expand(x) [4, 3], expand(reshape(y) [1, 3]) [4, 3])   (rank-0 operands stay)
//   reduce_axis(x) [add, [-1]] -> reduce_axis(x) [add, [rank - 1]]   (every op's axes: permute, flip, softmax, ...)
//   matmul(v[K], m[K, N])    -> reshape(matmul(reshape(v) [1, K], m)) [N]   (a right vector likewise, as [K, 1])

#pragma once

#include "IR/UOp.h"

#include <optional>
#include <string>
#include <vector>

namespace tgc {

struct Desugared {
  std::vector<const UOp *> src;
  Arg arg;
  /// When set, the op's result is reshaped to this shape (1-D matmul drops the vector's axis).
  std::optional<Shape> reshapeResult;
};

/// The operands and arg to build a tensor-level `op` with, the conveniences made explicit (new nodes are made in
/// ctx); nullopt with `err` set when the operands do not broadcast.
std::optional<Desugared> desugar(Context &ctx, Op op, std::vector<const UOp *> src, Arg arg, std::string &err);

/// Where a problem found by buildNode lies: in the op and its operands, or in the type written for the result.
enum class BuildErrorSite { Op, Type };

/// Make a tensor- or kernel-level node the way the parser does: the dtype inferred unless given, the operand count
/// checked, the conveniences desugared, the shape inferred (or the given one checked). nullptr with `err` (and
/// `site`) set when something does not fit. Every frontend builds nodes through this.
/// `dimVars` gives the variable of each axis of `shape` (empty: none): inputs, constants and expands take them as
/// given; for other ops they must agree with what the operands give (SymbolicDims.h).
const UOp *buildNode(Context &ctx, Op op, std::vector<const UOp *> src, Arg arg, std::optional<DType> dtype,
                     const std::optional<Shape> &shape, std::string &err, BuildErrorSite *site = nullptr, Arg tag = {},
                     std::span<const UOp *const> dimVars = {});

/// The numpy broadcast of two shapes (trailing axes aligned, 1 stretches), nullopt when they do not broadcast.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);

} // namespace tgc
