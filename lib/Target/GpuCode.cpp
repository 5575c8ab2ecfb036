//===- GpuCode.cpp - GPU programs to the code their devices load -*- C++ -*-===//
// Every kernel of a program in one module: OpenCL C as text, AMDGPU and NVPTX through LLVM and the vendors' tools.
//===----------------------------------------------------------------------===//

#include "Target/GpuCode.h"

#include "Support/FileIO.h"
#include "Support/Logging.h"
#include "Target/CRenderer.h"
#include "Target/LLVMBackend.h"
#include "Target/LLVMRenderer.h"
#include "Target/Toolchain.h"

#include <fstream>
#include <llvm/Transforms/Utils/Cloning.h>

namespace tgc {

namespace fs = std::filesystem;

namespace {

/// Ops a target's renderer has no code for: wmma without tensor cores, and what the AMDGPU and NVPTX backends
/// cannot lower without the vendors' device libraries (they would end in an LLVM fatal error).
std::string unsupportedOp(const UOp *linear, const CompileTarget &t) {
  bool llvmGpu = t.target().gpu && t.target().rendersLLVM();
  for (const UOp *u : linear->src()) {
    bool f64 = u->dtype().element().scalar() == Scalar::F64;
    bool transcendental = u->op() == Op::Exp2 || u->op() == Op::Log2 || u->op() == Op::Sin;
    bool gpuLibrary = u->op() == Op::Pow || (f64 && transcendental);
    if ((u->op() == Op::Wmma && !t.desc.tensorCores) || (llvmGpu && gpuLibrary))
      return std::string(opName(u->op())) + " of " + u->dtype().str();
  }
  return "";
}

/// Every kernel of a GPU program in one optimized module for the AMDGPU or NVPTX backend.
bool gpuModule(const ProgramDesc &p, const CompileTarget &t, const std::string &prefix, LLVMFlavor flavor,
               llvm::Module &m, std::string &error) {
  if (!prepareModule(m, t, error)) // writeArtifacts and JitProgram::build checked renderable() already
    return false;
  for (const KernelDesc &k : p.kernels) {
    renderKernelLLVM(k.linear, k.info, prefix + k.symbol, m, t, flavor);
  }
  return optimizeModule(m, t, error);
}

/// Where a GPU toolchain step writes its files: the kernels directory, which keeps them and the module's IR, or a
/// private temporary directory removed afterwards.
class WorkDir {
public:
  bool open(const fs::path &dir, const std::string &name, const std::string &ir, std::string &error) {
    path_ = dir;
    if (!dir.empty())
      return writeText(dir / (name + ".ll"), ir, error);
    path_ = makeScratchDir("tgc-gpu");
    if (path_.empty()) {
      error = "cannot create a temporary directory";
      return false;
    }
    temporary_ = true;
    return true;
  }
  ~WorkDir() {
    std::error_code ec;
    if (temporary_)
      fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string &name) const { return path_ / name; }

private:
  fs::path path_;
  bool temporary_ = false;
};

/// The bytes of a file a toolchain step wrote.
bool readOutput(const fs::path &path, std::string &out, std::string &error) {
  std::ifstream f(path, std::ios::binary);
  out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (out.empty())
    error = "cannot read '" + path.string() + "'";
  return !out.empty();
}

/// An HSA code object: every kernel in one module, compiled by LLVM's AMDGPU backend to a relocatable object and
/// linked by ld.lld into a shared object the HIP runtime loads. (ROCm comgr's link action does the same link, but
/// Debian's comgr 5.2.3 rejects gfx942 and gfx1100 and loads a second libLLVM into the compiler: ld.lld is used.)
bool amdCodeObject(const ProgramDesc &p, const CompileTarget &t, const std::string &prefix, const fs::path &dir,
                   std::string &code, std::string &error) {
  llvm::LLVMContext ctx;
  llvm::Module m(p.name, ctx);
  if (!gpuModule(p, t, prefix, LLVMFlavor::AMDGPU, m, error))
    return false;
  std::string ir = printModuleIR(m);
  showSource(p.name + ".ll (AMDGPU)", ir);
  if (debugLevel() >= 4) {
    std::string isa;
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(m);
    if (emitAssembly(*copy, t, isa, error))
      showSource(p.name + ".s (" + t.cpu + ")", isa);
  }
  std::string object;
  if (!emitObject(m, t, object, error))
    return false;
  std::string lld = lldLinker();
  if (lld.empty()) {
    error = "the amd target needs ld.lld to link code objects (install lld-19)";
    return false;
  }
  WorkDir work;
  if (!work.open(dir, p.name, ir, error))
    return false;
  fs::path obj = work / (p.name + ".o"), hsaco = work / (p.name + ".hsaco");
  return writeText(obj, object, error) &&
         runTool({lld, "-shared", "--no-undefined", obj.string(), "-o", hsaco.string()}, error) &&
         readOutput(hsaco, code, error);
}

/// A cubin and its PTX: every kernel in one module, compiled by LLVM's NVPTX backend to PTX, which the CUDA
/// toolkit's ptxas assembles ahead of time for --gpu-arch. A PTX that ptxas rejects is a compile error with its
/// message, never a crash.
bool cudaCubin(const ProgramDesc &p, const CompileTarget &t, const std::string &prefix, const fs::path &dir,
               std::string &cubin, std::string &ptx, std::string &error) {
  llvm::LLVMContext ctx;
  llvm::Module m(p.name, ctx);
  if (!gpuModule(p, t, prefix, LLVMFlavor::NVPTX, m, error))
    return false;
  std::string ir = printModuleIR(m);
  showSource(p.name + ".ll (NVPTX)", ir);
  if (!emitAssembly(m, t, ptx, error))
    return false;
  showSource(p.name + ".ptx", ptx);
  std::string ptxas = ptxasAssembler();
  if (ptxas.empty()) {
    error = "the cuda target needs ptxas from the CUDA toolkit (not found when tgc was configured; set PTXAS)";
    return false;
  }
  WorkDir work;
  if (!work.open(dir, p.name, ir, error))
    return false;
  fs::path ptxFile = work / (p.name + ".ptx"), cubinFile = work / (p.name + ".cubin");
  if (!writeText(ptxFile, ptx, error) ||
      !runTool({ptxas, "-arch=" + t.cpu, "-O3", ptxFile.string(), "-o", cubinFile.string()}, error) ||
      !readOutput(cubinFile, cubin, error))
    return false;
  if (debugLevel() >= 4) // SASS, when the toolkit's disassembler is there
    if (std::string dis = cuobjdump(); !dis.empty()) {
      ProcessResult r = runProcess({dis, "-sass", cubinFile.string()});
      if (r.status == 0)
        showSource(p.name + ".sass (" + t.cpu + ")", r.output);
    }
  return true;
}

} // namespace

bool renderable(const ProgramDesc &p, const CompileTarget &t, std::string &error) {
  for (const KernelDesc &k : p.kernels) {
    if (std::string op = unsupportedOp(k.linear, t); !op.empty()) {
      error = "kernel " + k.info.name + ": the " + t.name() + " target cannot compile " + op + " yet";
      return false;
    }
  }
  return true;
}

/// The code a GPU program's device loads (OpenCL C, an HSA code object, a cubin), and the runtime's name for that
/// device (Targets.def's device). With `dir`, the kernels' sources are written there too.
bool gpuCode(const ProgramDesc &p, const CompileTarget &t, const std::string &prefix, const fs::path &dir,
             std::string &code, std::string &fallback, std::string &device, std::string &error) {
  device = t.target().device;
  switch (t.target().codegen) {
  case TargetCodegen::OpenCLC: {
    std::vector<OpenCLKernel> kernels;
    for (const KernelDesc &k : p.kernels)
      kernels.push_back({k.linear, &k.info, prefix + k.symbol});
    code = renderProgramOpenCL(kernels);
    showSource(p.name + ".cl", code);
    return dir.empty() || writeText(dir / (p.name + ".cl"), code, error);
  }
  case TargetCodegen::LLVMAMDGPU: return amdCodeObject(p, t, prefix, dir, code, error);
  case TargetCodegen::LLVMNVPTX: return cudaCubin(p, t, prefix, dir, code, fallback, error);
  case TargetCodegen::LLVMHost:
  case TargetCodegen::CSource: break;
  }
  error = std::string("target '") + t.name() + "' has no GPU code generator";
  return false;
}

} // namespace tgc
