//===- LLVMRenderer.h - Linearized kernels to LLVM IR -----------*- C++ -*-===//
// The cpu target's renderer; LLVMBackend.h optimizes and compiles what it builds.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/KernelInfo.h"

#include <llvm/IR/Module.h>

#include <string>

namespace tgc {

/// Add `void function(ptr bufs, i64 begin, i64 end)` for a linearized kernel to `m`.
/// fpContract: float multiplies and adds may fuse into FMAs (TargetInfo::fpContract).
void renderKernelLLVM(const UOp *linear, const KernelInfo &info, const std::string &function, llvm::Module &m,
                      bool fpContract = false);

} // namespace tgc
