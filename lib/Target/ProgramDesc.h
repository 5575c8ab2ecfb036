//===- ProgramDesc.h - A lowered program, ready for code generation -*- C++ -*-===//
// Buffers in id order, kernels with unique symbols, and calls as (kernel, buffer indices), from a linear program.
//===----------------------------------------------------------------------===//

#pragma once

#include "Runtime/tgc_runtime.h"
#include "Target/KernelInfo.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tgc {

struct BufferDesc {
  tgc_buffer_kind kind;
  std::string name;
  DType dtype;
  Shape shape;
  int64_t bytes;
  int64_t offset;           // arena offset of a planned temporary, else -1
  std::vector<int> dimVars; // inputs/outputs with a variable axis: per axis, its variable's buffer index or -1
  int64_t varMin = 0;       // TGC_VARIABLE: the bounds of its value
  int64_t varMax = 0;
};

struct KernelDesc {
  const UOp *linear;
  std::string symbol;
  KernelInfo info;
};

struct CallDesc {
  size_t kernel; // index into kernels
  std::vector<int> args;
  bool once = false;             // depends on the weights alone (weightOnlyCalls): run on the first run only
  int parallelVar = -1;          // the buffer index of the variable that bounds the parallel loop, or -1
  int gridVar[3] = {-1, -1, -1}; // GPU: the buffer index of the variable each grid dimension runs to, or -1
};

struct ProgramDesc {
  std::string name;
  std::vector<BufferDesc> buffers;
  std::vector<KernelDesc> kernels;
  std::vector<CallDesc> calls;
  int64_t arenaBytes = 0;
};

/// Describe a linear program whose kernels are linearized. False with `error` when it is not one.
bool describeProgram(const UOp *root, const std::string &name, ProgramDesc &out, std::string &error);

/// The arguments a call passes (tgc_call_info.num_args): all of its buffers on the CPU, where a kernel reads its
/// slots from one array; on a GPU exactly the kernel's parameters, each a launch argument (a call may still name
/// buffers the kernel no longer reads). The C tables, the LLVM tables and the JIT all count them here.
inline size_t callArgCount(const ProgramDesc &p, const CallDesc &c, bool gpu) {
  return gpu ? std::min(c.args.size(), p.kernels[c.kernel].info.params.size()) : c.args.size();
}

tgc_dtype runtimeDType(DType d);
const char *runtimeDTypeName(DType d); // "TGC_F32", ...

} // namespace tgc
