//===- ProgramEmitter.h - The C file that describes a compiled program -*- C++ -*-===//
// model.c (tables for the runtime, main() or the library API) and the library's public header.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/ProgramDesc.h"

#include <string>

namespace tgc {

struct EmitOptions {
  std::string prefix;   // symbol prefix, "<model>_"
  std::string source;   // the .uop file, for comments
  bool library = false; // the C API instead of main()
  bool embedWeights = false;
  std::string weightsPath; // safetensors file read at run time when weights are not embedded
  std::string device;      // GPU programs: the runtime's device kind ("opencl", "hip"); "" for the CPU
  std::string code;        // GPU programs: the code the device loads (OpenCL C, an HSA code object, a cubin)
  std::string fallback;    // cuda: the PTX beside the cubin
};

std::string emitProgramC(const ProgramDesc &p, const EmitOptions &o);
std::string emitHeader(const ProgramDesc &p, const EmitOptions &o);

} // namespace tgc
