//===- KernelInfo.h - Facts renderers and the runtime need about a kernel -*- C++ -*-===//
// Parameters, the loop that may run in parallel, and work estimates of a linearized kernel.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <string>
#include <vector>

namespace tgc {

struct KernelInfo {
  std::string name;
  std::vector<DType> params;     // element type of each define_global slot
  std::vector<const UOp *> variables; // define_var nodes, by name: parameters params.size() + i
  const UOp *parallel = nullptr;       // the top-level loop whose iterations may run on different threads
  int64_t parallelExtent = 0;          // its trip count (its variable's upper bound when parallelVar)
  const UOp *parallelVar = nullptr;    // the define_var that is its trip count, or null when constant
  double flops = 0; // arithmetic operations executed
  double bytes = 0; // bytes loaded and stored (upper bound)
  /// GPU kernels: work-groups and work-items per group, per dimension (the extents of special gidxN and lidxN).
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
};

/// Analyze a kernel `linear`. Internal error if it is not one.
KernelInfo analyzeKernel(const UOp *linear);

/// Name usable as a C and LLVM symbol (letters, digits, '_').
std::string symbolName(const std::string &s);

} // namespace tgc
