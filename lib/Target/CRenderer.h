//===- CRenderer.h - Linearized kernels to readable C -----------*- C++ -*-===//
// The c and opencl targets' renderer: C or OpenCL C source for one kernel (one C-style family, dialects in a table).
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/KernelInfo.h"

#include <set>
#include <string>
#include <vector>

namespace tgc {

/// A C-style language: C (kCDialect) or OpenCL C (kOpenCLDialect); see CRenderer.cpp for what differs.
struct CDialect;
extern const CDialect kCDialect;
extern const CDialect kOpenCLDialect;

/// Source (with its includes and helpers) of one linearized kernel. C: `void function(void *const *bufs, int64_t
/// begin, int64_t end)`; OpenCL: `__kernel void function(__global T *data0, ...)`, one parameter per buffer slot.
std::string renderKernelC(const UOp *linear, const KernelInfo &info, const std::string &function,
                          const CDialect &dialect = kCDialect);

struct OpenCLKernel {
  const UOp *linear;
  const KernelInfo *info;
  std::string function;
};

/// One OpenCL C program with every kernel (helpers once, then the __kernel functions in order).
std::string renderProgramOpenCL(const std::vector<OpenCLKernel> &kernels);

} // namespace tgc
