//===- TargetDesc.cpp - What the lowering passes know of a target -*- C++ -*-===//
// Host descriptions from the CPU's features as the compiler's runtime checks report them.
//===----------------------------------------------------------------------===//

#include "Passes/TargetDesc.h"

#include <algorithm>

namespace tgc {

static int hostVectorBits() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return 512;
  if (__builtin_cpu_supports("avx"))
    return 256;
#endif
  return 128;
}

static bool hostHasFMA() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("fma") || __builtin_cpu_supports("avx512f");
#elif defined(__aarch64__)
  return true; // AArch64's fmla is part of the base ISA
#else
  return false;
#endif
}

bool hasFMAOfFeatures(const std::string &features) {
  return features.find("+fma") != std::string::npos || features.find("+avx512f") != std::string::npos;
}

int vectorBitsOfFeatures(const std::string &features) {
  if (features.find("+avx512f") != std::string::npos)
    return 512;
  if (features.find("+avx") != std::string::npos)
    return 256;
  return 128;
}

void setVectorBits(TargetDesc &d, int bits) {
  d.vectorBits = bits;
  d.vectorRegisters = bits >= 512 ? 32 : 16;
  d.maskedVectors = bits >= 512; // AVX-512's masked moves (no other CPU target has 512-bit vectors)
}

TargetDesc hostTargetDesc(TargetId id) {
  TargetDesc d;
  d.id = id;
  setVectorBits(d, hostVectorBits());
  d.contract = hostHasFMA();
  d.vectorALU = d.target().rendersLLVM(); // the C renderer writes scalar C; the C compiler vectorizes the lanes
  d.native = d.target().native;
  return d;
}

/// The launch limits of a GPU architecture (Targets.def's TGC_GPU_ARCH row).
static TargetDesc gpuDesc(const TargetRecord &target, const GpuArch &g) {
  TargetDesc d;
  d.id = target.id;
  d.gpuArch = g.arch;
  d.vectorBits = 128;
  d.vectorALU = false; // one scalar per work-item; upcast lanes become independent registers
  d.maxVectorAccess = 4;
  d.hasThreads = false; // parallelism comes from the launch, not from the runtime's thread pool
  d.hasLocal = true;
  d.hasShared = true;
  d.arenaViews = false;
  d.native = target.native;
  d.contract = true; // every GPU has fused multiply-add
  d.maxLanes = 64;   // registers per work-item are few: keep upcast tiles small
  d.vectorRegisters = 16;
  d.maxGlobal[0] = (int64_t(1) << 31) - 1;
  d.maxGlobal[1] = d.maxGlobal[2] = 65535;
  d.maxLocal[0] = d.maxLocal[1] = std::min<int64_t>(1024, g.maxLocalProduct);
  d.maxLocal[2] = 64;
  d.maxLocalProduct = g.maxLocalProduct;
  d.localMemoryBytes = g.localMemory;
  d.warpSize = g.warp;
  d.tensorCores = g.tensorCores;
  return d;
}

std::optional<TargetDesc> gpuTargetDesc(const TargetRecord &target, const std::string &arch, std::string &error) {
  std::string known;
  for (const GpuArch *g : target.archs()) {
    if (arch.empty() ? g->isDefault : arch == g->arch)
      return gpuDesc(target, *g);
    if (*g->arch)
      known += std::string(known.empty() ? "" : ", ") + g->arch;
  }
  if (known.empty())
    error = "--gpu-arch does not apply to the " + std::string(target.name) +
            " target (its device is chosen when "
            "the program runs)";
  else
    error = "unknown --gpu-arch '" + arch + "' for target '" + target.name + "' (available: " + known + ")";
  return std::nullopt;
}

std::optional<TargetDesc> targetDescFor(const std::string &name, const std::string &arch, std::string &error) {
  const TargetRecord *target = findTarget(name);
  if (!target) {
    error = "unknown target '" + name + "' (available: " + targetNames() + ")";
    return std::nullopt;
  }
  if (target->gpu)
    return gpuTargetDesc(*target, arch, error);
  if (!arch.empty()) {
    error = "--gpu-arch applies only to GPU targets (" + targetNames([](const TargetRecord &t) { return t.gpu; }) +
            "), not '" + name + "'";
    return std::nullopt;
  }
  return hostTargetDesc(target->id);
}

} // namespace tgc
