//===- Interpreter.h - The reference interpreter ----------------*- C++ -*-===//
// Executes a module at any stage (tensor graph, kernel graph, program) in plain, obviously correct code.
//===----------------------------------------------------------------------===//
//
// It is the oracle of the test suite: `tgc run --interp`, `tgc-opt --check-semantics` and the comparisons with
// compiled code all trust it. It favours clarity over speed: tensors are vectors of Args, every element operation
// goes through Eval.h, composite ops are written as loops in double precision (CompositeEval.cpp), and every memory
// access is bounds-checked.

#pragma once

#include "IR/Module.h"
#include "Runtime/Array.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tgc::interp {

/// One tensor at a program's boundary.
struct TensorSpec {
  enum class Role { Input, Weight, Output, InOut, Variable };
  std::string name;
  DType dtype;
  Shape shape;
  Role role;
  int64_t lo = 0; // a Variable's inclusive bounds; its value is a rank-0 array
  int64_t hi = 0;
  /// Per axis, the variable it is ("" when static), or empty when no axis is; `shape` has their upper bounds.
  std::vector<std::string> dimVars;
  /// The variables of dimVars, by name, with their bounds.
  std::map<std::string, std::pair<int64_t, int64_t>> varBounds;
};

std::string_view roleName(TensorSpec::Role r);

/// `[N, 784]`: a spec's shape with its variable axes by name.
std::string specShapeStr(const TensorSpec &s);

/// The inputs, weights and outputs of a module. Tensor graphs: input/weight/output nodes; programs: their named
/// buffers; kernel graphs: every define_global, as an InOut named "slot<N>", sized by the largest index the kernel
/// can use, then every define_var by name, as a Variable (an i64 value, whatever the variable's width, so that
/// lower-index does not change the signature). Returns false with a one-line reason.
bool signature(const Module &m, std::vector<TensorSpec> &out, std::string &error);

using ArrayMap = std::map<std::string, rt::Array>;

/// Run `m`. `inputs` maps the name of every input, weight and InOut to its data (checked against the signature);
/// `outputs` receives every output (and InOut) by name. Returns false with a one-line reason.
bool run(const Module &m, const ArrayMap &inputs, ArrayMap &outputs, std::string &error);

/// The value of every dimension variable, read from the shapes of the inputs that have it (nullopt with `error`
/// when an input's shape does not fit its spec, two inputs disagree, or a value is outside its bounds).
std::optional<std::map<std::string, int64_t>> variableValues(const std::vector<TensorSpec> &sig, const ArrayMap &inputs,
                                                             std::string &error);

/// A buffer bound to one kernel parameter: `count` elements of `elem` at `data`. `name` is a variable's name
/// (define_var reads its i64 value by it), otherwise how messages call the buffer.
struct Memory {
  uint8_t *data;
  int64_t count;
  DType elem;
  std::string name;
};

/// Run one kernel (a kernel graph or a linearized kernel) with define_global slot i bound to buffers[i] and the
/// variables it reads after them (tgc run --bisect). Returns false with a one-line reason.
bool runKernel(const UOp *kernel, std::vector<Memory> &buffers, std::string &error);

/// Deterministic contents for a spec (rt::fillRandom with the spec's name); variable axes at rt::generatedDimension.
rt::Array randomArray(const TensorSpec &spec, uint64_t seed);

/// The runtime element type of a dtype (nullopt for void, index, vectors and pointers).
std::optional<rt::ElemType> elemTypeOf(DType d);
DType dtypeOf(rt::ElemType t);

} // namespace tgc::interp
