//===- Internal.h - Shared pieces of the reference interpreter --*- C++ -*-===//
// Dense tensors of Args, element reads and writes in memory, index helpers, and the error used inside.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Arg.h"
#include "Interp/Interpreter.h"

#include <string>
#include <vector>

namespace tgc::interp {

/// The interpreter keeps every element as an Arg; beyond this many per tensor it would exhaust memory.
constexpr int64_t kMaxInterpElements = int64_t(1) << 28;

/// Thrown inside the interpreter, caught by run(), which returns its message.
struct InterpError {
  std::string message;
};
[[noreturn]] void fail(std::string message);
/// "'op' at file:line" for messages about a node.
std::string where(const UOp *u);

/// A dense row-major tensor value.
struct Tensor {
  DType dtype;
  Shape shape;
  std::vector<Arg> data;
};

int64_t numelOf(const Shape &s);
std::vector<int64_t> stridesOf(const Shape &s);
/// Multi-index of flat position `flat` in `shape`.
void unravel(int64_t flat, const Shape &shape, std::vector<int64_t> &idx);

/// Bytes one element of dtype d occupies in memory.
int64_t elemBytes(DType d);
Arg readElem(const uint8_t *p, DType d);
void writeElem(uint8_t *p, DType d, const Arg &v);

Tensor fromArray(const rt::Array &a, DType d);
rt::Array toArray(const Tensor &t);

/// Numeric value of an element as double (ints, bools, floats).
double toDouble(const Arg &a);
/// An element of dtype d from a double (rounded to floats, truncated and wrapped for ints).
Arg fromDouble(double v, DType d);
/// An element of dtype d from an exact integer.
Arg fromInt(int64_t v, DType d);

/// Evaluate a tensor-level graph; `leaves` maps input and weight names to their values.
void runTensorGraph(const UOp *root, const ArrayMap &leaves, ArrayMap &outputs);
/// Composite ops, written directly as loops (CompositeEval.cpp).
Tensor evalComposite(const UOp *u, const std::vector<const Tensor *> &src);

/// Run one kernel graph with define_global slot i bound to buffers[i].
void runKernel(const UOp *sink, std::vector<Memory> &buffers);
/// Run a program (a linear or an unscheduled sink of calls).
void runProgram(const UOp *root, const ArrayMap &leaves, ArrayMap &outputs);

/// The elements a kernel can reach through define_global slot `slot` (largest index + 1).
int64_t kernelBufferSize(const UOp *sink, int64_t slot);

} // namespace tgc::interp
