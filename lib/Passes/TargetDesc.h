//===- TargetDesc.h - What the lowering passes know of a target -*- C++ -*-===//
// Vector width, vector ALU, memory spaces and limits: the facts that parameterize optimize, expand and devectorize.
//===----------------------------------------------------------------------===//
//
// lib/Target's CompileTarget carries one of these next to how code is compiled (triple, CPU, flags); the passes see
// only this struct, so a GPU target reuses the same pipeline with other numbers.

#pragma once

#include "Passes/Targets.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace tgc {

struct TargetDesc {
  TargetId id = TargetId::Cpu;
  /// The target's row of Targets.def: its name, code generator, device library and native operations.
  const TargetRecord &target() const { return targetRecord(id); }
  const char *name() const { return target().name; }
  /// Widest vector register, in bits (SSE 128, AVX2 256, AVX-512 512).
  int vectorBits = 128;
  /// The renderer has vector types and vector ALU ops; without them devectorize splits every vector into lanes.
  bool vectorALU = true;
  /// Widest vector load or store coalesce may form, in elements (LLVM legalizes wider ones into several).
  int maxVectorAccess = 16;
  /// A vector access of any lane count up to maxVectorAccess is one masked move (x86 with AVX-512): coalesce keeps a
  /// run of 14 lanes whole instead of cutting it into 8 + 4 + 2, and the LLVM renderer loads and stores the padded
  /// vector through a lane mask.
  bool maskedVectors = false;
  /// Whether a vector of elements of `bits` bits is accessed through a lane mask (maskedVectors): 32- and 64-bit
  /// elements, which AVX-512F masks (LLVM 19 also aborts on odd-sized bfloat vectors on some AVX-512 CPUs).
  bool masksLanes(int bits) const { return maskedVectors && (bits == 32 || bits == 64); }
  bool hasThreads = true; // outer loops may be split across threads
  bool hasLocal = false;  // workgroup-local index spaces (GPUs)
  bool hasShared = false; // shared memory (GPUs)
  /// What the target computes itself (Targets.def's `native` flags): decompose-transcendentals and emulate-floats
  /// rewrite the rest. The default is the cpu row's.
  unsigned native = native::Pow | native::F16 | native::NanMax;
  bool has(native::NativeOp op) const { return (native & op) != 0; }
  /// contract may fuse f32/f64 a*b+c into mulacc (one rounding): the target has FMA instructions and the user did
  /// not ask for separate roundings (tgc --fp-contract=off).
  bool contract = false;
  /// Most lanes one value of an expanded kernel may have (upcast amounts times unroll amounts).
  int maxLanes = 256;
  /// An operand up to this size stays in the L2 cache while a kernel sweeps it once per row of tiles (a quarter of
  /// a 1 MiB L2); a larger one is read from farther away each time, so optimize prefers squarer tiles that sweep it
  /// fewer times.
  int l2OperandBytes = 256 * 1024;
  /// Temporaries are views into one arena at plan-memory's offsets, so two of them may share bytes on purpose
  /// (plan-memory's in-place copies). Off where each temporary gets memory of its own: GPUs (sub-buffers of a
  /// device arena, whose starts a device may align further) and executables built with AddressSanitizer.
  bool arenaViews = true;
  /// Vector registers (AVX-512: 32, AVX2 and SSE: 16); optimize keeps accumulators within half of them.
  int vectorRegisters = 16;

  // --- GPUs (hasLocal): launch limits, used by optimize's GPU heuristics and by gpudims --------------------------
  /// The GPU the code is for ("gfx942", "sm_90"; "" for CPUs and for OpenCL, whose device is chosen at run time).
  std::string gpuArch;
  /// Most work-groups per launch dimension (x, y, z) and most work-items per work-group per dimension.
  int64_t maxGlobal[3] = {0, 0, 0};
  int64_t maxLocal[3] = {0, 0, 0};
  /// Most work-items in one work-group (the product of the local sizes).
  int64_t maxLocalProduct = 0;
  /// Bytes of local (shared) memory one work-group may use.
  int64_t localMemoryBytes = 0;
  /// Work-items that execute in lockstep (NVIDIA warp 32, AMD CDNA wavefront 64, RDNA 32).
  int warpSize = 1;
  /// The target renders `wmma` (Targets.def's tensorCores), so optimize may use the tc action.
  bool tensorCores = false;

  bool isGPU() const { return hasLocal; }

  /// Lanes of one vector register for elements of `elemBytes`.
  int64_t vectorLanes(int elemBytes) const { return std::max<int64_t>(1, vectorBits / 8 / std::max(1, elemBytes)); }
  /// Accumulator lanes a reduce kernel's register tile may hold: half the vector registers (a quarter of that for
  /// targets without vector ALU, whose C compiler keeps fewer unrolled accumulators in registers).
  int64_t tileBudget(int elemBytes) const {
    return vectorLanes(elemBytes) * (vectorALU ? std::max(1, vectorRegisters / 2) : 4);
  }
  /// Lanes of a matmul tile's contiguous axis when its operand panel fits the L2 cache: up to 4 vector widths, at
  /// most a quarter of the tile budget (AVX2 f32: 16 of 64, a 4 x 16 tile). pack-matmul lays operands out in panels
  /// of this width, and optimize reads them with it.
  int64_t panelLanes(int elemBytes) const {
    return std::min(4 * vectorLanes(elemBytes), std::max<int64_t>(1, tileBudget(elemBytes) / 4));
  }
};

/// The description of a CPU target (cpu, c) for the machine tgc runs on.
TargetDesc hostTargetDesc(TargetId id);

/// The description of a GPU target for a --gpu-arch ("" = the target's default, Targets.def's TGC_GPU_ARCH rows);
/// nullopt with `error` set for an architecture the target does not have.
std::optional<TargetDesc> gpuTargetDesc(const TargetRecord &target, const std::string &arch, std::string &error);

/// The description of any -target= name, CPU or GPU; nullopt with `error` set for an unknown target or
/// architecture, or a --gpu-arch given to a CPU target.
std::optional<TargetDesc> targetDescFor(const std::string &name, const std::string &arch, std::string &error);

/// Set the vector width and what follows from it (AVX-512: 32 vector registers and masked accesses; else 16, none).
void setVectorBits(TargetDesc &d, int bits);

/// Vector width in bits implied by an LLVM feature string ("+avx512f,..." -> 512).
int vectorBitsOfFeatures(const std::string &features);

/// Whether an LLVM feature string has fused multiply-add instructions ("+fma", "+fma4", "+avx512f").
bool hasFMAOfFeatures(const std::string &features);

} // namespace tgc
