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

/// Run a toolchain step (runProcess, or runLinkerInProcess for an ld.lld command); false with the command and its
/// output in `error`.
bool runTool(const std::vector<std::string> &argv, std::string &error, bool linkerInProcess = false);

/// Write a generated file (a kernel's source, an object); false with a one-line reason.
bool writeText(const std::string &path, const std::string &text, std::string &error);

/// --debug=4 prints every generated source: `text` under a line naming `what`.
void showSource(const std::string &what, const std::string &text);

/// The C compiler (CC, else cc), C++ compiler for linking (CXX, else c++), archiver (AR, else ar).
std::string cCompiler();
std::string cxxCompiler();
std::string archiver();
/// ld.lld for AMDGPU code objects (LLD, else the one found at build time); "" when there is none.
std::string lldLinker();
/// The CUDA toolkit's ptxas (PTXAS, else the one found at build time) and cuobjdump; "" when there is none.
std::string ptxasAssembler();
std::string cuobjdump();

/// The arguments of a command as a compiler driver's `-###` prints it: each double-quoted, with \" and \\ escapes.
/// Empty when `line` is not of that form.
std::vector<std::string> splitDriverCommand(const std::string &line);

/// The linker command that links `inputs` (objects, then archives) into the executable `output`, as the build's C++
/// compiler runs it, for tgc to run directly: the driver's start-up is half of a small model's link. Empty when the
/// link must go through the driver: cxxCompiler() is not the build's (CXX names another, or it is gone), the build did
/// not record the command, or a file it names (the linker, the C runtime's start files) is gone.
std::vector<std::string> directLinkCommand(const std::vector<std::string> &inputs, const std::string &output);

/// Whether tgc was built with lld's ELF driver as a library (liblld-19-dev).
bool haveInProcessLinker();
/// Run ld.lld's command `argv` (from directLinkCommand) in this process, with its output captured; status 0 on
/// success. A separate ld.lld spends as long loading libLLVM as it does linking a small model.
ProcessResult runLinkerInProcess(const std::vector<std::string> &argv);

struct RuntimeFiles {
  std::string library;    // libtgcruntime.a
  std::string includeDir; // holds tgc_runtime.h
  std::string linkFlags;  // extra flags for linking against it (a sanitizer's runtime), space-separated
};

/// Locate the runtime: TGC_RUNTIME_DIR (library and header together), the install layout next to the tgc
/// executable (../lib, ../include/tgc), or the build tree. Returns false with `error` set when none is found.
bool findRuntime(RuntimeFiles &out, std::string &error);

} // namespace tgc
