//===- LLVMBackend.h - Optimizing and compiling LLVM modules ----*- C++ -*-===//
// The O3 pipeline for a target CPU, object emission, and an in-process JIT for `tgc run`.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/CompileTarget.h"
#include "Target/ProgramDesc.h"

#include <llvm/IR/Module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
}

namespace tgc {

/// Initialize LLVM's native target once.
void initializeLLVM();

/// Whether LLVM knows `cpu` and every +feature/-feature of `features` for `triple`; false with a one-line error.
bool checkCpuAndFeatures(const std::string &triple, const std::string &cpu, const std::string &features,
                         std::string &error);

/// The vector and FMA features (+avx, +avx2, +fma, +avx512f, ...) that `cpu` with `features` has, as LLVM's CPU
/// tables say: what the lowering passes size vectors and register tiles by when --mcpu names another CPU.
std::string cpuFeatureSummary(const std::string &triple, const std::string &cpu, const std::string &features);

/// What LLVM does with a kernel (CPU targets; GPU targets always get the whole O3 pipeline).
enum class Effort {
  Vectorized, // optimize's actions vectorized and unrolled it: O3 without LLVM's vectorizers and unrollers
  Scalar,     // optimize found no action for it (odd sizes, --opts=none): O3 with LLVM's vectorizers and unrollers
  Once,       // only a program's first run calls it (weight packing): O1 and less aggressive code generation
};
/// "O3", "O3+vectorizers" or "O1" (tgc compile --time-passes).
const char *effortName(Effort e);
/// Per kernel of p: Once when only once-calls call it, else Vectorized or Scalar by what optimize left.
std::vector<Effort> kernelEfforts(const ProgramDesc &p);

/// Run the optimization pipeline for the target on `m` (sets its triple and data layout), with AddressSanitizer
/// when asked (functions marked by markSanitizeAddress). False with `error` on failure.
bool optimizeModule(llvm::Module &m, const CompileTarget &t, std::string &error, bool sanitize = false,
                    Effort effort = Effort::Vectorized);
/// Ask AddressSanitizer to instrument every function of `m`.
void markSanitizeAddress(llvm::Module &m);
/// The object file of an optimized module.
/// Set the module's triple and data layout for the target (before rendering into it).
bool prepareModule(llvm::Module &m, const CompileTarget &t, std::string &error);
/// The target's assembly for the module (GPU ISA for --debug=4).
bool emitAssembly(llvm::Module &m, const CompileTarget &t, std::string &text, std::string &error);
bool emitObject(llvm::Module &m, const CompileTarget &t, std::string &object, std::string &error,
                Effort effort = Effort::Vectorized);
/// LLVM assembly text of a module.
std::string printModuleIR(const llvm::Module &m);

/// Compiled code in this process.
class Jit {
public:
  Jit();
  ~Jit();
  bool add(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> c, std::string &error);
  /// Address of a function added before, or 0 with `error` set.
  uint64_t lookup(const std::string &name, std::string &error);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace tgc
