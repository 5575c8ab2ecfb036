//===- ProgramQueries.h - Kernels, and what calls read and write -*- C++ -*-===//
// Which nodes are kernels, range ids/kinds/sizes, and the buffer accesses of kernel calls, shared by the passes.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <functional>
#include <string>
#include <vector>

namespace tgc {

struct CallAccess {
  std::vector<const UOp *> reads;  // buffers the kernel loads from
  std::vector<const UOp *> writes; // buffers the kernel stores to
};

/// Whether `u` is the root of a kernel: a sink or linear whose items are neither calls (a program) nor outputs (a
/// tensor graph).
bool isKernelRoot(const UOp *u);

/// `root` with each kernel k reachable from it replaced by fn(k) (k itself when fn returns nullptr or k). The walk
/// does not enter kernels, so a pass that rewrites whole kernels costs nothing per node of the kernels it leaves.
const UOp *mapKernels(const UOp *root, const std::function<const UOp *(const UOp *kernel)> &fn);

/// A range's axis id and kind ("loop", "reduce", "upcast", "unroll"): its arg [id, kind].
int64_t rangeId(const UOp *range);
const std::string &rangeKind(const UOp *range);
/// The trip count of a range whose bound is a constant.
inline int64_t rangeSize(const UOp *range) { return range->src(0)->constInt(); }
/// Ranges ordered by axis id.
inline bool rangeIdLess(const UOp *a, const UOp *b) { return rangeId(a) < rangeId(b); }

/// The define_var nodes a kernel reads, sorted by name: calls pass their values after the buffers, in this order.
std::vector<const UOp *> kernelVariables(const UOp *kernel);

/// A buffer's shape arg: one entry per axis, the size, or [name, upper bound] for a variable axis.
Arg bufferShapeArg(const UOp *tensor);
/// Reads it back: the sizes (upper bounds for variable axes) and each axis's variable name ("" when static).
Shape bufferShape(const Arg &shape, std::vector<std::string> *varNames = nullptr);

/// A kernel's (or call's) name, "kernel" when it has none.
inline std::string kernelName(const UOp *kernel) {
  return kernel->arg().isString() ? kernel->arg().getString() : "kernel";
}

/// The buffers a call reads and writes (through its kernel's define_global slots).
CallAccess callAccess(const UOp *call);

/// The buffer a call passes for the define_global that `ptr` (an index) addresses, or nullptr.
const UOp *slotBuffer(const UOp *call, const UOp *ptr);

/// Whether buffer b is a temporary (plan-memory places it in the arena).
bool isTempBuffer(const UOp *b);
/// The bytes of one element of buffer b (bool: 1).
int64_t bufferElementBytes(const UOp *b);

/// For each call of a linear program: whether its results depend on the weights alone, so the runtime need run it
/// only once (a weight packed by pack-matmul, a constant table, the parts of a concat of weights). Such a call reads
/// only weights and temporaries written by such calls, and writes only temporaries that no other call writes. Their
/// temporaries must keep their values from one run to the next (plan-memory gives them arena space of their own).
std::vector<bool> weightOnlyCalls(const UOp *linear);

/// The tag plan-memory puts on such calls (`call(...) "name" {tag = "once"}`); the runtime runs them once.
inline constexpr const char *kRunOnceTag = "once";
inline bool isRunOnceCall(const UOp *call) { return call->tag().isString() && call->tag().getString() == kRunOnceTag; }

} // namespace tgc
