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

std::optional<TargetDesc> hostTargetDesc(const std::string &name) {
  if (name != "cpu" && name != "c")
    return std::nullopt;
  TargetDesc d;
  d.name = name;
  setVectorBits(d, hostVectorBits());
  d.contract = hostHasFMA();
  d.vectorALU = name == "cpu"; // the C renderer writes scalar C; the C compiler vectorizes the unrolled lanes
  return d;
}

namespace {

/// The GPUs tgc knows, with the limits their vendors document (AMD: ROCm's gfx ISA tables; OpenCL: the least a
/// conforming full-profile device offers, so that any device can run the kernels).
struct GpuArch {
  const char *target;
  const char *arch;
  int warp;
  int64_t localMemory;
  int64_t maxLocalProduct;
};

constexpr GpuArch kGpuArchs[] = {
    {"amd", "gfx942", 64, 64 * 1024, 1024},  // MI300 (CDNA3)
    {"amd", "gfx90a", 64, 64 * 1024, 1024},  // MI200 (CDNA2)
    {"amd", "gfx1100", 32, 64 * 1024, 1024}, // RX 7900 (RDNA3)
    {"opencl", "", 1, 16 * 1024, 256},       // OpenCL 1.2: 16 KiB local memory; 256 work-items is common
    {"cuda", "sm_90", 32, 48 * 1024, 1024},  // H100/H200 (Hopper): 48 KiB of static shared memory per block
    {"cuda", "sm_80", 32, 48 * 1024, 1024},  // A100 (Ampere)
    {"cuda", "sm_89", 32, 48 * 1024, 1024},  // L4, RTX 4090 (Ada)
};

} // namespace

std::optional<TargetDesc> gpuTargetDesc(const std::string &name, const std::string &arch, std::string &error) {
  std::string want = !arch.empty() ? arch : name == "amd" ? "gfx942" : name == "cuda" ? "sm_90" : "";
  std::string known;
  for (const GpuArch &g : kGpuArchs) {
    if (name != g.target)
      continue;
    known += std::string(known.empty() ? "" : ", ") + g.arch;
    if (want != g.arch)
      continue;
    TargetDesc d;
    d.name = name;
    d.gpuArch = g.arch;
    d.vectorBits = 128;
    d.vectorALU = false; // one scalar per work-item; upcast lanes become independent registers
    d.maxVectorAccess = 4;
    d.hasThreads = false; // parallelism comes from the launch, not from the runtime's thread pool
    d.hasLocal = true;
    d.hasShared = true;
    d.arenaViews = false;
    // AMD GPUs have exp2, log2 and sin instructions LLVM selects; NVPTX lowers only approximate ones (ex2.approx,
    // sin.approx), so cuda gets decompose-transcendentals' polynomials (exact to a few ulp, like the cpu target)
    d.nativeTranscendentals = name != "cuda";
    d.nativePow = name == "opencl"; // LLVM's AMDGPU and NVPTX backends have no pow without the vendors' libraries
    d.contract = true;              // every GPU has fused multiply-add
    d.maxLanes = 64;                // registers per work-item are few: keep upcast tiles small
    d.vectorRegisters = 16;
    d.maxGlobal[0] = (int64_t(1) << 31) - 1;
    d.maxGlobal[1] = d.maxGlobal[2] = 65535;
    d.maxLocal[0] = d.maxLocal[1] = std::min<int64_t>(1024, g.maxLocalProduct);
    d.maxLocal[2] = 64;
    d.maxLocalProduct = g.maxLocalProduct;
    d.localMemoryBytes = g.localMemory;
    d.warpSize = g.warp;
    d.tensorCores = name == "cuda"; // every listed sm_XX (sm_80 and newer) has mma.sync m16n8k16 for f16 and bf16
    return d;
  }
  if (known.empty())
    error = "unknown target '" + name + "'";
  else if (name == "opencl")
    error = "--gpu-arch does not apply to the opencl target (its device is chosen when the program runs)";
  else
    error = "unknown --gpu-arch '" + arch + "' for target '" + name + "' (available: " + known + ")";
  return std::nullopt;
}

std::optional<TargetDesc> targetDescFor(const std::string &name, const std::string &arch, std::string &error) {
  if (std::optional<TargetDesc> d = hostTargetDesc(name)) {
    if (!arch.empty()) {
      error = "--gpu-arch applies only to GPU targets, not '" + name + "'";
      return std::nullopt;
    }
    return d;
  }
  return gpuTargetDesc(name, arch, error);
}

} // namespace tgc
