//===- CompilerRt.h - Conversions LLVM calls that not every runtime library has -*- C++ -*-===//
// Declared for the JIT, which maps calls in JIT-compiled kernels to these definitions.
//===----------------------------------------------------------------------===//

#pragma once

#if defined(__x86_64__) && defined(__clang__) && __clang_major__ >= 17
#define TGC_HAS_TRUNCSFBF2 1
extern "C" __bf16 __truncsfbf2(float f);
#else
#define TGC_HAS_TRUNCSFBF2 0
#endif
