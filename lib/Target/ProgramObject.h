//===- ProgramObject.h - An executable's program tables, built by LLVM -*- C++ -*-===//
// The object of build/NAME_model.c for CPU executables, without running a C compiler.
//===----------------------------------------------------------------------===//

#pragma once

#include "Target/CompileTarget.h"
#include "Target/ProgramDesc.h"
#include "Target/ProgramEmitter.h"

#include <string>

namespace tgc {

/// The object file of an executable's program tables (NAME_program and main(), as emitProgramC writes them for a
/// CPU program), emitted by LLVM for `t`. False with `error` set when LLVM's layout of the runtime's structs for `t`
/// is not the one tgc's C++ compiler gives them (the caller then compiles the C).
bool programObject(const ProgramDesc &p, const EmitOptions &o, const CompileTarget &t, std::string &object,
                   std::string &error);

} // namespace tgc
