//===- CompilerRt.cpp - Conversions LLVM calls that not every runtime library has -*- C++ -*-===//
// __truncsfbf2 (float to bfloat16): libgcc has it from GCC 13 on, compiler-rt always; Debian 12's libgcc does not.
//===----------------------------------------------------------------------===//
//
// LLVM's x86 backend calls it to round floats to bfloat16 on CPUs without AVX512-BF16: the renderer rounds its own
// arithmetic in integer operations, but the backend still widens bfloat16 selects and phis to float and back. The
// executable and library pick it up from the runtime archive; tgc's JIT maps it (Jit::add).

#include "Runtime/CompilerRt.h"

#include "Runtime/Half.h"

#include <bit>

#if TGC_HAS_TRUNCSFBF2
extern "C" __bf16 __truncsfbf2(float f) { return std::bit_cast<__bf16>(tgc::rt::floatToBF16(f)); }
#endif
