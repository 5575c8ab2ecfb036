//===- Toolchain.h - Running the system compiler, archiver and linker -*- C++ -*-===//
// Subprocesses with captured output, and where the runtime library and its header are.
//===----------------------------------------------------------------------===//

#pragma once

#include <string>
#include <vector>

namespace tgc {

struct ProcessResult {
  int status = -1;    // exit status, or -1 when the program could not run
  std::string output; // stdout and stderr
};

/// Run argv[0] (found on PATH) with the arguments; waits for it.
ProcessResult runProcess(const std::vector<std::string> &argv);

/// The C compiler (CC, else cc), C++ compiler for linking (CXX, else c++), archiver (AR, else ar).
std::string cCompiler();
std::string cxxCompiler();
std::string archiver();
/// ld.lld for AMDGPU code objects (LLD, else the one found at build time); "" when there is none.
std::string lldLinker();
/// The CUDA toolkit's ptxas (PTXAS, else the one found at build time) and cuobjdump; "" when there is none.
std::string ptxasAssembler();
std::string cuobjdump();

struct RuntimeFiles {
  std::string library;    // libtgcruntime.a
  std::string includeDir; // holds tgc_runtime.h
  std::string linkFlags;  // extra flags for linking against it (a sanitizer's runtime), space-separated
};

/// Locate the runtime: TGC_RUNTIME_DIR (library and header together), the install layout next to the tgc
/// executable (../lib, ../include/tgc), or the build tree. Returns false with `error` set when none is found.
bool findRuntime(RuntimeFiles &out, std::string &error);

} // namespace tgc
