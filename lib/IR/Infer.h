//===- Infer.h - Dtype and shape inference ----------------------*- C++ -*-===//
// The dtype rule and the shape rule of every op, shared by the builders, the parser and the verifier.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <optional>
#include <span>
#include <string>

namespace tgc {

/// The dtype an op produces from its operands and arg, or nullopt (with `err` set) when it cannot be inferred and
/// must be written (const, cast, input, define_global, ...) or when the operands disagree.
std::optional<DType> inferDType(Op op, std::span<const UOp *const> src, const Arg &arg, std::string &err);

struct InferredShape {
  std::optional<Shape> shape; // nullopt: the node is unshaped
  std::string error;          // non-empty: the shapes do not fit
};

/// The shape of a node from its operands and arg. `declared` is the shape written in the source (or given by a
/// builder): it is required where the op cannot infer it (input, weight, reshape, expand) and checked elsewhere.
InferredShape inferShape(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg,
                         const std::optional<Shape> &declared);

/// The shape rule of composite ops (InferComposite.cpp).
InferredShape compositeShape(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg);

std::string shapeStr(std::span<const int64_t> shape);

} // namespace tgc
