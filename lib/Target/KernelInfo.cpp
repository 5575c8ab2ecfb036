//===- KernelInfo.cpp - Facts renderers and the runtime need about a kernel -*- C++ -*-===//
// One walk over the linear list with a stack of loop trip counts.
//===----------------------------------------------------------------------===//

#include "Target/KernelInfo.h"

#include "IR/SymbolicDims.h"
#include "Passes/ProgramQueries.h"

#include <algorithm>

#include <unordered_set>

namespace tgc {

size_t KernelInfo::variableSlot(const UOp *var) const {
  size_t i = size_t(std::find(variables.begin(), variables.end(), var) - variables.begin());
  if (i == variables.size())
    internalError("variableSlot: '" + varName(var) + "' is not a variable of kernel " + name);
  return params.size() - variables.size() + i;
}

std::string symbolName(const std::string &s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "k_" + out;
  return out;
}

/// The ALU ops that compute addresses and bounds checks (what index operands are made of): not FLOPs.
static std::unordered_set<const UOp *> addressOps(const UOp *linear) {
  std::unordered_set<const UOp *> addr;
  std::vector<const UOp *> work;
  for (const UOp *u : linear->src())
    if (u->op() == Op::Index)
      work.insert(work.end(), u->src().begin() + 1, u->src().end());
  while (!work.empty()) {
    const UOp *u = work.back();
    work.pop_back();
    if (!group::alu().contains(u->op()) || !addr.insert(u).second)
      continue;
    work.insert(work.end(), u->src().begin(), u->src().end());
  }
  return addr;
}

KernelInfo analyzeKernel(const UOp *linear) {
  if (linear->op() != Op::Linear)
    internalError("analyzeKernel: not a linearized kernel");
  std::unordered_set<const UOp *> addr = addressOps(linear);
  KernelInfo k;
  k.name = linear->arg().isString() ? linear->arg().getString() : "kernel";
  std::vector<double> trips = {1};
  int topLoops = 0;
  const UOp *firstTop = nullptr;
  bool storeOutside = false;
  for (const UOp *u : linear->src()) {
    double n = trips.back();
    switch (u->op()) {
    case Op::DefineGlobal: {
      size_t slot = size_t(u->arg().getInt());
      if (k.params.size() <= slot)
        k.params.resize(slot + 1, dt::Void);
      k.params[slot] = u->dtype().pointee();
      break;
    }
    case Op::Range: {
      double extent = double(u->src(0)->vmax()); // a variable trip count at its upper bound
      if (trips.size() == 1) {
        ++topLoops;
        firstTop = firstTop ? firstTop : u;
      }
      trips.push_back(n * extent);
      break;
    }
    case Op::End: trips.pop_back(); break;
    case Op::Special: {
      const std::string &name = u->arg().getString();
      int dim = name.back() - '0';
      bool local = name.rfind("lidx", 0) == 0;
      const UOp *extent = u->src(0);
      bool known = extent->isConst() || (!local && extent->op() == Op::DefineVar);
      if (dim < 0 || dim > 2 || !known)
        internalError("analyzeKernel: launch index '" + name + "' has no dimension 0-2 or no known extent");
      (local ? k.block : k.grid)[dim] = extent->isConst() ? extent->constInt() : extent->vmax();
      if (!extent->isConst())
        k.gridVar[dim] = extent;
      break;
    }
    case Op::Load:
    case Op::Store: {
      const UOp *ptr = u->src(0);
      DType e = ptr->dtype().pointee();
      if (ptr->dtype().addrSpace() == AddrSpace::Global) {
        double accessed = n * double(e.isBool() ? 1 : e.itemSize());
        k.bytes += accessed;
        k.storedBytes += u->op() == Op::Store ? accessed : 0;
      }
      if (u->op() == Op::Store && trips.size() == 1 && ptr->dtype().addrSpace() == AddrSpace::Global)
        storeOutside = true;
      break;
    }
    default: // arithmetic on values (a multiply-add is 2, fused or not); addresses and bounds checks are not FLOPs
      if (group::alu().contains(u->op()) && !addr.count(u))
        k.flops += n * u->dtype().lanes() * (u->op() == Op::Mulacc ? 2 : 1);
    }
  }
  double items = double(k.grid[0]) * double(k.grid[1]) * double(k.grid[2]) * double(k.block[0]) * double(k.block[1]) *
                 double(k.block[2]);
  k.flops *= items; // every work-item runs the list once
  k.bytes *= items;
  // split only a single top-level output loop with a constant trip count that holds every global store
  k.variables = kernelVariables(linear);
  k.params.insert(k.params.end(), k.variables.size(), dt::I64);
  const UOp *extent = firstTop ? firstTop->src(0) : nullptr;
  bool known = extent && (extent->isConst() || extent->op() == Op::DefineVar);
  if (topLoops == 1 && !storeOutside && known && firstTop->arg().isTuple() &&
      (firstTop->arg().getTuple()[1].getString() == "loop" || firstTop->arg().getTuple()[1].getString() == "block")) {
    k.parallel = firstTop;
    k.parallelExtent = extent->isConst() ? extent->constInt() : extent->vmax();
    k.parallelVar = extent->isConst() ? nullptr : extent;
  }
  return k;
}

} // namespace tgc
