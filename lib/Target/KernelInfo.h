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
  /// Element type of each parameter: the define_global slots, then one i64 per variable (a kernel reads a
  /// variable's value through a pointer, like a buffer's, on every target).
  std::vector<DType> params;
  std::vector<const UOp *> variables; // define_var nodes, by name: the last variables.size() parameters
  const UOp *parallel = nullptr;      // the top-level loop whose iterations may run on different threads
  int64_t parallelExtent = 0;         // its trip count (its variable's upper bound when parallelVar)
  const UOp *parallelVar = nullptr;   // the define_var that is its trip count, or null when constant
  double flops = 0;                   // arithmetic operations executed
  double bytes = 0;                   // bytes loaded and stored (upper bound)
  double storedBytes = 0;             // of those, stored
  /// GPU kernels: work-groups and work-items per group, per dimension (the extents of special gidxN and lidxN).
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  /// GPU kernels: the variable a grid dimension runs to (its extent above is the upper bound), or null.
  const UOp *gridVar[3] = {nullptr, nullptr, nullptr};

  /// The parameter slot of a variable of this kernel.
  size_t variableSlot(const UOp *var) const;
};

/// Analyze a kernel `linear`. Internal error if it is not one.
KernelInfo analyzeKernel(const UOp *linear);

/// Name usable as a C and LLVM symbol (letters, digits, '_').
std::string symbolName(const std::string &s);

} // namespace tgc
