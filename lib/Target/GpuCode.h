//===- GpuCode.h - GPU programs to the code their devices load ---*- C++ -*-===//
// OpenCL C, HSA code objects through LLVM's AMDGPU backend and ld.lld, cubins through LLVM's NVPTX backend and ptxas.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/CompileTarget.h"
#include "Target/ProgramDesc.h"

#include <filesystem>
#include <string>

namespace tgc {

/// Whether the target's renderer and backend have code for every op of p's kernels (wmma needs tensor cores; the
/// AMDGPU and NVPTX backends cannot lower pow or float64 transcendentals without the vendors' device libraries);
/// false with the kernel and the op.
bool renderable(const ProgramDesc &p, const CompileTarget &t, std::string &error);

/// The code a GPU program's device loads (OpenCL C, an HSA code object, a cubin with its PTX as `fallback`), and the
/// runtime's name for that device (Targets.def's device). With `dir`, the kernels' sources are written there too.
bool gpuCode(const ProgramDesc &p, const CompileTarget &t, const std::string &prefix, const std::filesystem::path &dir,
             std::string &code, std::string &fallback, std::string &device, std::string &error);

} // namespace tgc
