//===- CompileTarget.h - The target one compile is for ----------*- C++ -*-===//
// What the lowering passes know of it (TargetDesc) and how its code is compiled: triple, CPU, features, flags.
//===----------------------------------------------------------------------===//

#pragma once

#include "Passes/TargetDesc.h"

#include <optional>
#include <string>

namespace tgc {

struct CompileTarget {
  std::string triple;   // LLVM target triple
  std::string cpu;      // CPU name (e.g. znver4), "native" resolved to the host
  std::string features; // LLVM feature string (+avx2,+fma,...)
  /// What the lowering passes know of this target (vector width, vector ALU, memory spaces, limits), and its row of
  /// Targets.def (desc.target()).
  TargetDesc desc;
  const TargetRecord &target() const { return desc.target(); }
  const char *name() const { return desc.name(); }
  /// The backend may fuse any float a*b+c into an FMA (LLVM's contract flag, the C compiler's -ffp-contract=fast):
  /// results then differ from the interpreter's in the last bits. Off unless tgc --fp-contract=fast.
  bool fpContract = false;
  /// x86 CPUs: a kernel that stores at least this many bytes to memory uses non-temporal vector stores, which skip
  /// the read-for-ownership of each cache line and do not evict what the caches hold (0: never). 32 MiB: more than
  /// a Zen 4 CCD's L3 and the L3 share of a few Xeon cores, so the output would not have stayed cached anyway.
  double streamingStoreBytes = 0;
  /// x86 CPUs with AVX512DQ: float max is vrangeps/vrangepd (IEEE maximum's order of -0 and +0 in one instruction)
  /// with a NaN fix-up, 3 instructions where LLVM's llvm.maximum lowering takes 6.
  bool rangeMax = false;
  /// Flags for the system C compiler (c target).
  std::string cflags;
};

/// How float a*b+c rounds (tgc --fp-contract): Off: twice, as written; On (default): the contract pass makes it
/// one mulacc (one rounding, as the interpreter computes mulacc) where the target has FMA instructions; Fast: also
/// let the backend fuse whatever it finds (results differ from the interpreter's in the last bits).
enum class FpContract { Off, On, Fast };

/// Parse "off", "on" or "fast"; nullopt otherwise.
std::optional<FpContract> parseFpContract(const std::string &text);

/// Set the contract pass's switch (TargetDesc::contract), the LLVM renderer's contract flag and the C compiler's
/// -ffp-contract for `mode`.
void setFpContract(CompileTarget &t, FpContract mode);

/// The target for a -target= name, with optional CPU and feature overrides ("" = the host's) and, for GPU
/// targets, the GPU architecture ("" = the target's default). nullopt with `error` set for an unknown target.
std::optional<CompileTarget> targetFor(const std::string &name, const std::string &cpu, const std::string &features,
                                       std::string &error, const std::string &gpuArch = "");

/// Whether a target's kernels run on a GPU (launched by the runtime through a device library).
inline bool isGpuTarget(const CompileTarget &t) { return t.target().gpu; }

} // namespace tgc
