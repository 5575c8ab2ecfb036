//===- LLVMRenderer.h - Linearized kernels to LLVM IR -----------*- C++ -*-===//
// The cpu target's renderer; LLVMBackend.h optimizes and compiles what it builds.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/CompileTarget.h"
#include "Target/KernelInfo.h"

#include <llvm/IR/Module.h>

#include <string>

namespace tgc {

/// Add `void function(ptr bufs, i64 begin, i64 end)` for a linearized kernel to `m`, as target `t` wants it:
/// t.fpContract: float multiplies and adds may fuse into FMAs; t.streamingStoreBytes: a CPU kernel that stores
/// at least this many bytes writes its vector stores past the caches (non-temporal, where the address is aligned).
/// CPU: `void function(ptr bufs, i64 begin, i64 end)`, the runtime's calling convention. AMDGPU: an
/// amdgpu_kernel with one `ptr addrspace(1)` per buffer slot, launch indices from the work-group and work-item id
/// intrinsics, local buffers in LDS (addrspace 3), barriers as s_barrier between work-group fences. The module's
/// triple and data layout must be set before (register arrays are allocas in the target's alloca address space).
/// NVPTX: a ptx_kernel (annotated "kernel" and "maxntid" in nvvm.annotations), ctaid/tid special registers,
/// shared memory in addrspace 3, barriers as bar.sync 0.
enum class LLVMFlavor { CPU, AMDGPU, NVPTX };

/// The flavor of a target that renders LLVM IR (TargetRecord::rendersLLVM).
inline LLVMFlavor llvmFlavorOf(TargetCodegen codegen) {
  return codegen == TargetCodegen::LLVMAMDGPU  ? LLVMFlavor::AMDGPU
         : codegen == TargetCodegen::LLVMNVPTX ? LLVMFlavor::NVPTX
                                               : LLVMFlavor::CPU;
}

void renderKernelLLVM(const UOp *linear, const KernelInfo &info, const std::string &function, llvm::Module &m,
                      const CompileTarget &t, LLVMFlavor flavor = LLVMFlavor::CPU);

} // namespace tgc
