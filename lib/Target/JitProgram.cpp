//===- JitProgram.cpp - A program compiled into this process -----*- C++ -*-===//
// `tgc run` and BEAM: kernels through LLVM's JIT (or a GPU's device code), described for the runtime in memory.
//===----------------------------------------------------------------------===//

#include "Target/JitProgram.h"

#include "Target/GpuCode.h"
#include "Target/LLVMBackend.h"
#include "Target/LLVMRenderer.h"
#include "Target/ProgramDesc.h"
#include "Target/Toolchain.h"

#include <algorithm>

namespace tgc {

namespace {

/// A buffer's runtime description; it points into `b`.
tgc_buffer_info bufferInfo(const BufferDesc &b) {
  return {b.kind,
          b.name.c_str(),
          runtimeDType(b.dtype),
          int(b.shape.size()),
          b.shape.data(),
          b.bytes,
          b.offset,
          nullptr,
          b.dimVars.empty() ? nullptr : b.dimVars.data(),
          b.varMin,
          b.varMax};
}

} // namespace

struct JitProgram::Storage {
  Jit jit;
  ProgramDesc desc;
  std::string code, fallback, device;
  std::vector<tgc_buffer_info> buffers;
  std::vector<tgc_call_info> calls;
  std::vector<std::vector<int>> args;
  tgc_program_info program{};
};

JitProgram::JitProgram() : s_(std::make_unique<Storage>()) {}

JitProgram::~JitProgram() = default;

const tgc_program_info *JitProgram::program() const { return &s_->program; }

bool JitProgram::build(const UOp *root, const std::string &name, const CompileTarget &target, std::string &error) {
  Storage &s = *s_;
  if (!describeProgram(root, name, s.desc, error) || !renderable(s.desc, target, error))
    return false;
  if (isGpuTarget(target))
    return buildGpu(target, error);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>(name, *ctx);
  for (const KernelDesc &k : s.desc.kernels)
    renderKernelLLVM(k.linear, k.info, k.symbol, *m, target);
  std::vector<Effort> efforts = kernelEfforts(s.desc); // one module: LLVM's vectorizers when some kernel needs them
  bool scalar = std::any_of(efforts.begin(), efforts.end(), [](Effort e) { return e == Effort::Scalar; });
  if (!optimizeModule(*m, target, error, false, scalar ? Effort::Scalar : Effort::Vectorized))
    return false;
  showSource(name + " (optimized LLVM IR)", printModuleIR(*m));
  if (!s.jit.add(std::move(m), std::move(ctx), error))
    return false;
  std::vector<tgc_kernel_fn> fns;
  for (const KernelDesc &k : s.desc.kernels) {
    uint64_t addr = s.jit.lookup(k.symbol, error);
    if (!addr)
      return false;
    fns.push_back(reinterpret_cast<tgc_kernel_fn>(addr));
  }
  for (const BufferDesc &b : s.desc.buffers)
    s.buffers.push_back(bufferInfo(b));
  s.args.reserve(s.desc.calls.size());
  for (const CallDesc &c : s.desc.calls) {
    s.args.push_back(c.args);
    const KernelDesc &k = s.desc.kernels[c.kernel];
    s.calls.push_back({k.info.name.c_str(),
                       fns[c.kernel],
                       int(c.args.size()),
                       s.args.back().data(),
                       k.info.parallelExtent,
                       k.info.flops,
                       k.info.bytes,
                       nullptr,
                       {},
                       {},
                       c.once ? 1 : 0,
                       c.parallelVar,
                       {-1, -1, -1}});
  }
  s.program = {s.desc.name.c_str(),
               int(s.buffers.size()),
               s.buffers.data(),
               int(s.calls.size()),
               s.calls.data(),
               s.desc.arenaBytes,
               nullptr,
               nullptr,
               nullptr,
               0,
               nullptr,
               0};
  return true;
}

/// A GPU program: its device code, and calls naming kernels with their launch sizes.
bool JitProgram::buildGpu(const CompileTarget &target, std::string &error) {
  Storage &s = *s_;
  if (!gpuCode(s.desc, target, "", {}, s.code, s.fallback, s.device, error))
    return false;
  for (const BufferDesc &b : s.desc.buffers)
    s.buffers.push_back(bufferInfo(b));
  s.args.reserve(s.desc.calls.size());
  for (const CallDesc &c : s.desc.calls) {
    s.args.push_back(c.args);
    const KernelDesc &k = s.desc.kernels[c.kernel];
    int params = int(callArgCount(s.desc, c, /*gpu=*/true));
    tgc_call_info call{k.info.name.c_str(),
                       nullptr,
                       params,
                       s.args.back().data(),
                       0,
                       k.info.flops,
                       k.info.bytes,
                       k.symbol.c_str(),
                       {},
                       {},
                       c.once ? 1 : 0,
                       -1,
                       {c.gridVar[0], c.gridVar[1], c.gridVar[2]}};
    std::copy(k.info.grid, k.info.grid + 3, call.grid);
    std::copy(k.info.block, k.info.block + 3, call.block);
    s.calls.push_back(call);
  }
  s.program = {s.desc.name.c_str(),
               int(s.buffers.size()),
               s.buffers.data(),
               int(s.calls.size()),
               s.calls.data(),
               s.desc.arenaBytes,
               nullptr,
               s.device.c_str(),
               s.code.data(),
               int64_t(s.code.size()),
               s.fallback.empty() ? nullptr : s.fallback.c_str(),
               int64_t(s.fallback.size())};
  return true;
}

} // namespace tgc
