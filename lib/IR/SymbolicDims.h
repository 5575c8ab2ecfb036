//===- SymbolicDims.h - Tensor dimensions that are variables ----*- C++ -*-===//
// Which axes of a tensor are define_var variables: derived from the operands, checked, and bound to values.
//===----------------------------------------------------------------------===//
//
// A tensor axis may be a variable (`input "x" : f32[N, 784]` with `define_var ["N", 1, 256]`). The node's shape
// holds the variable's upper bound on that axis and UOp::dimVars() the variable, so everything that sizes memory or
// computes strides sees the bound. That layout agrees with the dense tensor of the actual size on every axis that
// only size-1 axes precede (where tensors cross the program's boundary, inputs and outputs, variables must sit
// there); inside the program any axis may be a variable, and only the loops over it run to the variable's value.

#pragma once

#include "IR/UOp.h"

#include <map>
#include <string>
#include <vector>

namespace tgc {

/// The variables of a node's axes from its operands: an axis keeps the variable of the same axis of an operand of
/// the same rank and size (permute and reshape map axes first; reshape keeps an axis whose size and element stride
/// are unchanged). Empty when no axis is a variable.
std::vector<const UOp *> deriveDimVars(Op op, std::span<const UOp *const> src, const Arg &arg, const Shape &shape);

/// The variable of each axis of `full`, the numpy broadcast of the shapes of `src` (trailing axes aligned): an
/// operand's, where its axis has the full size. Empty when none. Broadcasts expand to these.
std::vector<const UOp *> broadcastVars(std::span<const UOp *const> src, const Shape &full);

/// Why `u`'s variable axes are not valid (a variable axis resized, merged or reduced away by a composite, a static
/// operand axis meeting a variable one, a variable inside an input's layout), or "".
std::string checkDimVars(const UOp *u);

/// `[N, 784]`: the shape with each variable axis written as its name.
std::string symbolicShapeStr(const UOp *u);
std::string symbolicShape(std::span<const int64_t> shape, std::span<const UOp *const> vars);

/// Every variable used by the shapes of the graph, sorted by name.
std::vector<const UOp *> shapeVariables(const UOp *root);

/// The graph with each variable replaced by its value (by name): variable axes become static, and define_var nodes
/// constants. Values must lie within the bounds (checked by the caller).
const UOp *bindVariables(const UOp *root, const std::map<std::string, int64_t> &values);

/// Why a define_var is malformed (dtype not a scalar integer, arg not ["name", lo, hi], bounds empty or not in the
/// dtype), or "". The accessors below need a well-formed one.
std::string checkDefineVarArg(const UOp *var);

/// A define_var's name, lower and upper bound.
const std::string &varName(const UOp *var);
int64_t varMin(const UOp *var);
int64_t varMax(const UOp *var);

} // namespace tgc
