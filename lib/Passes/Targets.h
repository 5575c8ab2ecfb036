//===- Targets.h - The table of targets, as C++ -----------------*- C++ -*-===//
// Targets.def's rows as records, looked up by name or id; every list of targets in help and errors comes from here.
//===----------------------------------------------------------------------===//

#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

enum class TargetId {
#define TGC_TARGET(Id, ...) Id,
#include "Passes/Targets.def"
};

/// How a target's kernels become code.
enum class TargetCodegen {
  LLVMHost,   // LLVM IR for the host CPU (or --mcpu's), compiled in process
  CSource,    // C for the system C compiler
  OpenCLC,    // OpenCL C, built by the device's driver when the program runs
  LLVMAMDGPU, // LLVM IR for the AMDGPU backend, linked into an HSA code object
  LLVMNVPTX,  // LLVM IR for the NVPTX backend, assembled into a cubin by ptxas
};

/// What a target computes itself (Targets.def's `native` column); the pipeline rewrites the rest before rendering.
namespace native {
enum NativeOp : unsigned {
  None = 0,
  Transc = 1 << 0, // exp2, log2, sin
  Pow = 1 << 1,    // pow
  F16 = 1 << 2,    // float16 arithmetic
  BF16 = 1 << 3,   // bfloat16 arithmetic
  NanMax = 1 << 4, // float32/float64 max propagating NaN
};
} // namespace native

struct GpuArch {
  TargetId target;
  const char *arch;
  bool isDefault;
  int warp;
  int64_t localMemory;
  int64_t maxLocalProduct;
  bool tensorCores;
  const char *help;
};

struct TargetRecord {
  TargetId id;
  const char *name;
  bool gpu;
  TargetCodegen codegen;
  const char *device;
  const char *triple;
  const char *features;
  bool run;
  unsigned native; // native::NativeOp flags
  const char *help;

  bool has(native::NativeOp op) const { return (native & op) != 0; }

  /// The kernels are LLVM IR (cpu, amd, cuda), not C source (c, opencl).
  bool rendersLLVM() const { return codegen != TargetCodegen::CSource && codegen != TargetCodegen::OpenCLC; }
  /// This target's --gpu-arch rows, the default first.
  std::vector<const GpuArch *> archs() const;
};

/// Every target, in the table's order.
const std::vector<TargetRecord> &allTargets();
const TargetRecord &targetRecord(TargetId id);
/// The target named `name`; nullptr if there is none.
const TargetRecord *findTarget(std::string_view name);

/// The targets' names joined by ", ", those for which `keep` holds (all without it): "cpu, c, opencl, amd, cuda".
std::string targetNames(bool (*keep)(const TargetRecord &) = nullptr);
/// The same names as a list (for CLI11's IsMember).
std::vector<std::string> targetNameList(bool (*keep)(const TargetRecord &) = nullptr);
/// One line per target for --help: "cpu (LLVM, in process, ...), c (...)".
std::string targetHelp(bool (*keep)(const TargetRecord &) = nullptr);
/// The architectures --gpu-arch accepts: "amd: gfx942 (default), gfx90a, gfx1100; cuda: sm_90 (default), ...".
std::string gpuArchHelp();

} // namespace tgc
