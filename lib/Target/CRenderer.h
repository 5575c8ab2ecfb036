//===- CRenderer.h - Linearized kernels to readable C -----------*- C++ -*-===//
// The c target's renderer: C source for one kernel, compiled later by the system C compiler.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/KernelInfo.h"

#include <set>
#include <string>

namespace tgc {

/// C source (with its includes and helpers) defining `void function(void *const *bufs, int64_t begin,
/// int64_t end)` for a linearized kernel.
std::string renderKernelC(const UOp *linear, const KernelInfo &info, const std::string &function);

} // namespace tgc
