//===- LLVMBackend.cpp - Optimizing and compiling LLVM modules --*- C++ -*-===//
// New pass manager at O3 with the target machine (so the vectorizers know the CPU), legacy codegen to objects.
//===----------------------------------------------------------------------===//

#include "Target/LLVMBackend.h"

#include "Runtime/CompilerRt.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Instrumentation/AddressSanitizer.h>

#include <llvm/MC/MCSubtargetInfo.h>

#include <map>
#include <mutex>
#include <set>

namespace tgc {

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    // GPU targets: the AMDGPU (and, for the cuda target, NVPTX) backends of the same libLLVM
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

bool checkCpuAndFeatures(const std::string &triple, const std::string &cpu, const std::string &features,
                         std::string &error) {
  initializeLLVM();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, "", ""));
  if (!cpu.empty() && !sti->isCPUStringValid(cpu)) {
    error = "unknown CPU '" + cpu + "' for " + triple + " (LLVM's names, e.g. x86-64-v3, znver4, skylake-avx512)";
    return false;
  }
  std::set<std::string> known;
  for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures())
    known.insert(kv.Key);
  llvm::SmallVector<llvm::StringRef, 16> list;
  llvm::StringRef(features).split(list, ',');
  for (llvm::StringRef f : list) {
    f = f.trim();
    if (f.empty())
      continue;
    if ((f[0] != '+' && f[0] != '-') || !known.count(f.drop_front().str())) {
      error = "unknown CPU feature '" + f.str() + "' (LLVM's syntax: +avx2,-avx512f)";
      return false;
    }
  }
  return true;
}

std::string cpuFeatureSummary(const std::string &triple, const std::string &cpu, const std::string &features) {
  initializeLLVM();
  std::string error;
  if (!llvm::Triple(triple).isX86())
    return features; // the names below are x86's (LLVM takes an unknown name as present)
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return features;
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, cpu, features));
  if (!sti)
    return features;
  std::string out;
  for (const char *f : {"+avx", "+avx2", "+fma", "+avx512f", "+avx512bw", "+avx512dq", "+avx512vl"})
    if (sti->checkFeatures(f))
      out += std::string(out.empty() ? "" : ",") + f;
  return out;
}

/// The target machine for `t` at the code generation level of `effort`, made once per thread and reused for every
/// kernel that thread compiles: building one (its subtarget, lowering tables and assembler info) cost about 1 ms,
/// twice per kernel. A TargetMachine may compile modules one after another, not from two threads at once.
static llvm::TargetMachine *machineFor(const CompileTarget &t, std::string &error, Effort effort = Effort::Vectorized) {
  initializeLLVM();
  llvm::CodeGenOptLevel level =
      effort == Effort::Once ? llvm::CodeGenOptLevel::Less : llvm::CodeGenOptLevel::Aggressive;
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  std::string key = t.triple + "/" + t.cpu + "/" + t.features + "/" + std::to_string(int(level));
  if (auto it = machines.find(key); it != machines.end())
    return it->second.get();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(t.triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions opts;
  // x86 loops start on a 64-byte line (LLVM's default is 16): where a kernel lands in the executable then no longer
  // decides whether its innermost loop spans two lines of instruction fetch or three (a 1x1 convolution's 98-byte
  // loop ran 20% slower at 32 bytes past a line than on one, the same machine code).
  if (llvm::Triple(t.triple).isX86())
    opts.LoopAlignment = 64;
  std::unique_ptr<llvm::TargetMachine> &tm = machines[key];
  tm.reset(target->createTargetMachine(t.triple, t.cpu, t.features, opts, llvm::Reloc::PIC_, std::nullopt, level));
  return tm.get();
}

void markSanitizeAddress(llvm::Module &m) {
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      f.addFnAttr(llvm::Attribute::SanitizeAddress);
}

namespace {

/// Passes of LLVM's O3 pipeline (for CPU targets) that cost much and find nothing in tgc's kernels: indvars (half of
/// the time of O3 on a convolution kernel, in ScalarEvolution over its unrolled address arithmetic; tgc's loops already
/// count from 0 by 1 to a constant), loop-idiom (memset/memcpy recognition: tgc kernels have no such loops left) and
/// dse (a kernel stores each output element once, and SROA removes the accumulators' stores; dse was 60% of the
/// optimization time of a 3x3 convolution tile that ends in 128 stores, comparing each with the others).
constexpr const char *kSkippedPasses[] = {"indvars", "loop-idiom", "dse"};
/// LLVM's partial and runtime unroller, also skipped for kernels optimize vectorized and unrolled:
/// PipelineTuningOptions::LoopUnrolling does not survive the pipeline's text (it prints the same either way). The
/// full unroller stays: it flattens only loops of a small constant trip count and body, such as a depthwise
/// convolution's 3x3 window, whose loop control cost more than its nine fused multiply-adds (1.6x on 56x56 maps).
constexpr const char *kUnrollers[] = {"loop-unroll<O3>"};

/// `text` without the pass `pass` wherever it appears in a list.
void removePass(std::string &text, const std::string &pass) {
  for (const std::string &form : {pass + ",", "," + pass + ")"}) {
    std::string replacement = form.back() == ')' ? ")" : "";
    for (size_t at = text.find(form); at != std::string::npos; at = text.find(form, at))
      text.replace(at, form.size(), replacement);
  }
}

/// LLVM's O3 module pipeline as text, without kSkippedPasses (and kUnrollers unless the tuning unrolls). Built once
/// per target machine kind and effort: the text of the default pipeline depends on the target only through its cost
/// model, which parsing it again reattaches.
std::string pipelineText(llvm::TargetMachine *tm, llvm::PipelineTuningOptions tuning) {
  llvm::PassInstrumentationCallbacks pic;
  llvm::PassBuilder pb(tm, tuning, std::nullopt, &pic);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  std::string text;
  llvm::raw_string_ostream os(text);
  mpm.printPipeline(os, [&](llvm::StringRef cls) {
    llvm::StringRef name = pic.getPassNameForClassName(cls);
    return name.empty() ? cls : name;
  });
  os.flush();
  for (const char *pass : kSkippedPasses)
    removePass(text, pass);
  if (!tuning.LoopUnrolling)
    for (const char *pass : kUnrollers)
      removePass(text, pass);
  return text;
}

} // namespace

const char *effortName(Effort e) {
  switch (e) {
  case Effort::Vectorized: return "O3";
  case Effort::Scalar: return "O3+vectorizers";
  case Effort::Once: return "O1";
  }
  return "?";
}

bool optimizeModule(llvm::Module &m, const CompileTarget &t, std::string &error, bool sanitize, Effort effort) {
  llvm::TargetMachine *tm = machineFor(t, error);
  if (!tm)
    return false;
  m.setTargetTriple(t.triple);
  m.setDataLayout(tm->createDataLayout());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  // CPU kernels come vectorized and unrolled by optimize's actions: LLVM's loop and SLP vectorizers and its
  // unrollers would only add compile time there, and runtime alias checks. Kernels optimize left scalar, and GPU
  // pipelines, keep them.
  bool gpu = isGpuTarget(t);
  bool llvmVectorizes = gpu || effort == Effort::Scalar;
  tuning.LoopVectorization = llvmVectorizes;
  tuning.SLPVectorization = llvmVectorizes;
  tuning.LoopUnrolling = llvmVectorizes;
  llvm::PassBuilder pb(tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (gpu) { // GPU backends add their own passes to O3; they keep the whole pipeline
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
    return true;
  }
  if (effort == Effort::Once) {
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
    if (sanitize)
      mpm.addPass(llvm::AddressSanitizerPass(llvm::AddressSanitizerOptions{}));
    mpm.run(m, mam);
    return true;
  }
  static std::mutex lock;
  static std::map<std::string, std::string> texts; // by triple, CPU, features and whether LLVM vectorizes
  std::string text;
  {
    std::lock_guard<std::mutex> g(lock);
    std::string &cached = texts[t.triple + "/" + t.cpu + "/" + t.features + (llvmVectorizes ? "/vectorizers" : "")];
    if (cached.empty())
      cached = pipelineText(tm, tuning);
    text = cached;
  }
  if (llvm::Error e = pb.parsePassPipeline(mpm, text)) {
    error = "LLVM pipeline: " + llvm::toString(std::move(e));
    return false;
  }
  if (sanitize)
    mpm.addPass(llvm::AddressSanitizerPass(llvm::AddressSanitizerOptions{}));
  mpm.run(m, mam);
  return true;
}

bool prepareModule(llvm::Module &m, const CompileTarget &t, std::string &error) {
  llvm::TargetMachine *tm = machineFor(t, error);
  if (!tm)
    return false;
  m.setTargetTriple(t.triple);
  m.setDataLayout(tm->createDataLayout());
  return true;
}

bool emitAssembly(llvm::Module &m, const CompileTarget &t, std::string &text, std::string &error) {
  llvm::TargetMachine *tm = machineFor(t, error);
  if (!tm)
    return false;
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    error = "the target cannot emit assembly";
    return false;
  }
  pm.run(m);
  text.assign(buffer.begin(), buffer.end());
  return true;
}

bool emitObject(llvm::Module &m, const CompileTarget &t, std::string &object, std::string &error, Effort effort) {
  llvm::TargetMachine *tm = machineFor(t, error, effort);
  if (!tm)
    return false;
  m.setTargetTriple(t.triple);
  m.setDataLayout(tm->createDataLayout());
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  pm.run(m);
  object.assign(buffer.begin(), buffer.end());
  return true;
}

std::string printModuleIR(const llvm::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

Jit::Jit() = default;
Jit::~Jit() = default;

bool Jit::add(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> c, std::string &error) {
  initializeLLVM();
  if (!jit_) {
    auto j = llvm::orc::LLJITBuilder().create();
    if (!j) {
      error = llvm::toString(j.takeError());
      return false;
    }
    jit_ = std::move(*j);
#if TGC_HAS_TRUNCSFBF2
    // the backend's bfloat16 rounding call (CompilerRt.cpp), which tgc's own process may not export
    llvm::orc::SymbolMap helpers;
    helpers[jit_->mangleAndIntern("__truncsfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&__truncsfbf2),
                                                      llvm::JITSymbolFlags::Exported};
    if (auto err = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(helpers)))) {
      error = llvm::toString(std::move(err));
      return false;
    }
#endif
  }
  if (auto err = jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(c)))) {
    error = llvm::toString(std::move(err));
    return false;
  }
  return true;
}

uint64_t Jit::lookup(const std::string &name, std::string &error) {
  auto sym = jit_->lookup(name);
  if (!sym) {
    error = llvm::toString(sym.takeError());
    return 0;
  }
  return sym->getValue();
}

/// Whether optimize's actions left any vector value in a linearized kernel.
static bool hasVectors(const UOp *linear) {
  for (const UOp *u : linear->src())
    if (u->dtype().isVector() || (u->dtype().isPtr() && u->dtype().pointee().isVector()))
      return true;
  return false;
}

std::vector<Effort> kernelEfforts(const ProgramDesc &p) {
  std::vector<Effort> effort(p.kernels.size(), Effort::Once);
  for (const CallDesc &c : p.calls)
    if (!c.once)
      effort[c.kernel] = hasVectors(p.kernels[c.kernel].linear) ? Effort::Vectorized : Effort::Scalar;
  return effort;
}

} // namespace tgc
