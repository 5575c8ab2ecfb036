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
  bool nativeTranscendentals;
  bool nativePow;
  const char *help;

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
