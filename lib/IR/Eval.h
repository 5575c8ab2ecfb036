//===- Eval.h - Exact scalar semantics of every ALU op ----------*- C++ -*-===//
// Evaluates one ALU op, cast or bitcast on constant scalars exactly as the dtype defines it (docs/ops.md).
//===----------------------------------------------------------------------===//
//
// Values are Args: bool, int (two's complement pattern wrapped to the dtype; u64 keeps its bit pattern in int64)
// or float (a double holding a value representable in the dtype). Integer arithmetic wraps. Division and
// remainder truncate toward zero (C). Float results are rounded to the dtype, to nearest even. The result is
// nullopt where the op is undefined and is therefore left for run time: integer division or remainder by zero,
// shifts by a negative amount or by at least the bit width, float-to-int conversion of NaN or of an out-of-range
// value.

#pragma once

#include "IR/Arg.h"
#include "IR/DType.h"
#include "IR/Op.h"

#include <optional>
#include <span>

namespace tgc {

/// Result of `op` on `args` (each of dtype `in`), giving a value of dtype `out`.
std::optional<Arg> evalAlu(Op op, DType out, DType in, std::span<const Arg> args);

/// Value conversion (CAST) of `v` from `from` to `to`.
std::optional<Arg> evalCast(const Arg &v, DType from, DType to);

/// Bit reinterpretation (BITCAST) of `v` from `from` to `to` (same size).
std::optional<Arg> evalBitcast(const Arg &v, DType from, DType to);

/// The value a reduction by `op` (add, mul, max) starts from: x op identity == x for every x of dtype `d`. Float
/// sums start from -0.0, the exact additive identity (-0.0 + -0.0 is -0.0; +0.0 would turn it into +0.0).
Arg reduceIdentity(Op op, DType d);
/// The result of reducing no elements: +0 for sums (as numpy and tinygrad), the identity otherwise.
Arg emptyReduceValue(Op op, DType d);
/// Whether reductions by `op` of dtype `d` accumulate in float32 (sums and products of float16 and bfloat16, as
/// tinygrad does): the value is computed in float32 and rounded once.
bool accumulatesInF32(Op op, DType d);

/// The bit pattern of a scalar value of dtype `d`, zero-extended to 64 bits.
uint64_t valueBits(const Arg &v, DType d);
/// The value of dtype `d` with bit pattern `bits`.
Arg valueFromBits(uint64_t bits, DType d);

} // namespace tgc
