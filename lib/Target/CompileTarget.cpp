//===- CompileTarget.cpp - The target one compile is for --------*- C++ -*-===//
// CPU targets ask LLVM for the host CPU and its features.
//===----------------------------------------------------------------------===//

#include "Target/CompileTarget.h"

#include "Target/LLVMBackend.h"

#include <llvm/ADT/StringMap.h>

#include <algorithm>
#include <llvm/TargetParser/Host.h>
#include <vector>

namespace tgc {

static std::string hostFeatures() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::string out;
  std::vector<std::string> names;
  for (auto &f : features)
    names.push_back((f.second ? "+" : "-") + f.first().str());
  std::sort(names.begin(), names.end()); // deterministic
  for (const std::string &n : names)
    out += (out.empty() ? "" : ",") + n;
  return out;
}

std::optional<FpContract> parseFpContract(const std::string &text) {
  if (text == "off")
    return FpContract::Off;
  if (text == "on")
    return FpContract::On;
  if (text == "fast")
    return FpContract::Fast;
  return std::nullopt;
}

void setFpContract(CompileTarget &t, FpContract mode) {
  bool fast = mode == FpContract::Fast;
  t.fpContract = fast;
  bool fma = isGpuTarget(t) || hasFMAOfFeatures(cpuFeatureSummary(t.triple, t.cpu, t.features));
  t.desc.contract = mode != FpContract::Off && fma;
  std::string from = fast ? "-ffp-contract=off" : "-ffp-contract=fast";
  std::string to = fast ? "-ffp-contract=fast" : "-ffp-contract=off";
  if (size_t at = t.cflags.find(from); at != std::string::npos)
    t.cflags.replace(at, from.size(), to);
}

/// A GPU target: kernels for the GPU (Targets.def's triple and features, --gpu-arch as the LLVM CPU), host code
/// for this machine.
static std::optional<CompileTarget> gpuTargetFor(const TargetRecord &target, const std::string &cpu,
                                                 const std::string &gpuArch, std::string &error) {
  std::optional<TargetDesc> d = gpuTargetDesc(target, gpuArch, error);
  if (!d)
    return std::nullopt;
  CompileTarget t;
  t.desc = *d;
  if (*target.triple) {
    t.triple = target.triple;
    t.cpu = d->gpuArch;
    t.features = target.features;
  }
  t.cflags = "-O2 -fPIC" + (cpu.empty() ? std::string() : " -march=" + cpu);
  return t;
}

std::optional<CompileTarget> targetFor(const std::string &name, const std::string &cpu, const std::string &features,
                                       std::string &error, const std::string &gpuArch) {
  std::optional<TargetDesc> desc = targetDescFor(name, gpuArch, error);
  if (!desc)
    return std::nullopt;
  if (desc->target().gpu)
    return gpuTargetFor(desc->target(), cpu, gpuArch, error);
  CompileTarget t;
  t.triple = llvm::sys::getDefaultTargetTriple();
  t.cpu = cpu.empty() || cpu == "native" ? llvm::sys::getHostCPUName().str() : cpu;
  t.features = features.empty() ? (cpu.empty() || cpu == "native" ? hostFeatures() : "") : features;
  if (!checkCpuAndFeatures(t.triple, t.cpu, features, error))
    return std::nullopt;
  if (t.triple.rfind("x86_64", 0) == 0) { // expand's broadcasts stay loads + shuffles: gathers are slower here
    t.features += std::string(t.features.empty() ? "" : ",") + "+prefer-no-gather,+prefer-no-scatter";
    t.streamingStoreBytes = 32.0 * 1024 * 1024;
  }
  t.desc = *desc;
  // the CPU's own features (x86-64-v3: AVX2 and FMA) with --mattr's changes, as LLVM's CPU tables list them
  std::string vectorFeatures = cpuFeatureSummary(t.triple, t.cpu, t.features);
  setVectorBits(t.desc, vectorBitsOfFeatures(vectorFeatures));
  t.desc.contract = hasFMAOfFeatures(vectorFeatures);
  t.rangeMax = vectorFeatures.find("+avx512dq") != std::string::npos;
  t.cflags =
      "-O3 -fwrapv -fno-math-errno -ffp-contract=off -fPIC -march=" + (cpu.empty() ? std::string("native") : cpu);
  return t;
}

} // namespace tgc
