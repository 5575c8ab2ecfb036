//===- TargetDesc.cpp - What the lowering passes know of a target -*- C++ -*-===//
// Host descriptions from the CPU's features as the compiler's runtime checks report them.
//===----------------------------------------------------------------------===//

#include "Passes/TargetDesc.h"

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
}

std::optional<TargetDesc> hostTargetDesc(const std::string &name) {
  if (name != "cpu" && name != "c")
    return std::nullopt;
  TargetDesc d;
  d.name = name;
  setVectorBits(d, hostVectorBits());
  d.vectorALU = name == "cpu"; // the C renderer writes scalar C; the C compiler vectorizes the unrolled lanes
  return d;
}

} // namespace tgc
