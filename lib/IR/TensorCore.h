//===- TensorCore.h - Warp-level matrix multiply shapes ---------*- C++ -*-===//
// Which element of A, B and C each lane of a warp holds for one `wmma` shape: the layout the tc action, the
// interpreter's semantics of `wmma` and the renderers share.
//===----------------------------------------------------------------------===//
//
// A tensor core computes D[m x n] = A[m x k] * B[k x n] + C for one warp: every lane holds `aElems` values of A,
// `bElems` of B and `cElems` of C and D (PTX ISA, "Matrix fragments for mma.m16n8k16 with floating point type").
// Each coordinate of element j of lane l's fragment is  g * (l / 4) + t * (l % 4) + off(j)  (l / 4 is PTX's
// groupID, l % 4 its threadID_in_group), so passes can write it as index arithmetic of the lane.

#pragma once

#include "IR/DType.h"

#include <string_view>

namespace tgc {

/// One coordinate of a fragment element: g * (lane / 4) + t * (lane % 4) + off.
struct FragCoord {
  int g = 0;
  int t = 0;
  int off = 0;

  int at(int lane) const { return g * (lane / 4) + t * (lane % 4) + off; }
};

struct TensorCore {
  const char *name; // the `wmma` op's arg
  int m, n, k;
  int warp;
  int aElems, bElems, cElems;

  /// Element j of a lane's A fragment: (row in M, column in K).
  std::pair<FragCoord, FragCoord> a(int j) const;
  /// Element j of a lane's B fragment: (row in K, column in N).
  std::pair<FragCoord, FragCoord> b(int j) const;
  /// Element j of a lane's C and D fragments: (row in M, column in N).
  std::pair<FragCoord, FragCoord> c(int j) const;

  /// Do inputs of this element type go in (f16 and bf16; the accumulator is always f32)?
  bool takes(DType input) const;
};

/// The tensor core named `name` ("m16n8k16"), nullptr for an unknown one.
const TensorCore *findTensorCore(std::string_view name);
/// The tensor core targets with tensor cores use (NVIDIA sm_80 and newer: mma.sync m16n8k16).
const TensorCore &defaultTensorCore();

} // namespace tgc
