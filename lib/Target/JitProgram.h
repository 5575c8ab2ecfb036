//===- JitProgram.h - A program compiled into this process -------*- C++ -*-===//
// The back half of `tgc run` and of BEAM's timings: kernels through LLVM's JIT, tables in memory for the runtime.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"
#include "Runtime/tgc_runtime.h"
#include "Target/CompileTarget.h"

#include <memory>
#include <string>

namespace tgc {

/// A program compiled into this process (LLVM's JIT), described for the runtime.
class JitProgram {
public:
  JitProgram();
  ~JitProgram();
  bool build(const UOp *root, const std::string &name, const CompileTarget &target, std::string &error);
  const tgc_program_info *program() const;

private:
  bool buildGpu(const CompileTarget &target, std::string &error);
  struct Storage;
  std::unique_ptr<Storage> s_;
};

} // namespace tgc
