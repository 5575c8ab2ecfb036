//===- ProgramDesc.cpp - A lowered program, ready for code generation -*- C++ -*-===//
// Reads buffer args, dedupes kernels by node, makes kernel symbols unique and deterministic.
//===----------------------------------------------------------------------===//

#include "Target/ProgramDesc.h"

#include "Passes/ProgramQueries.h"

#include <algorithm>
#include <map>
#include <set>

namespace tgc {

tgc_dtype runtimeDType(DType d) {
  int code = scalarRuntimeCode(d.element().scalar());
  if (code < 0)
    internalError("a buffer of " + d.str() + " has no runtime dtype");
  return tgc_dtype(code);
}

const char *runtimeDTypeName(DType d) {
  static const char *const names[] = {
#define TGC_SCALAR(Enum, text, bits, kind, cname, runtime) #runtime,
#include "IR/DTypes.def"
  };
  runtimeDType(d); // checks that there is one
  return names[size_t(d.element().scalar())];
}

static tgc_buffer_kind kindOf(const std::string &k) {
  if (k == "input")
    return TGC_INPUT;
  if (k == "weight")
    return TGC_WEIGHT;
  if (k == "output")
    return TGC_OUTPUT;
  if (k == "variable")
    return TGC_VARIABLE;
  return TGC_TEMP;
}

bool describeProgram(const UOp *root, const std::string &name, ProgramDesc &out, std::string &error) {
  if (root->op() != Op::Linear) {
    error = "code generation needs a scheduled program (a linear of calls)";
    return false;
  }
  out.name = name;
  out.arenaBytes = root->arg().isInt() ? root->arg().getInt() : 0;
  std::map<int64_t, const UOp *> byId;
  for (const UOp *u : toposort(root))
    if (u->op() == Op::Buffer)
      byId[u->arg().getTuple()[0].getInt()] = u;
  std::map<const UOp *, int> index;
  std::map<std::string, int> variableIndex;
  for (auto &[id, b] : byId) {
    const auto &t = b->arg().getTuple();
    DType e = b->dtype().pointee();
    index[b] = int(out.buffers.size());
    tgc_buffer_kind kind = kindOf(t[2].getString());
    bool isVar = kind == TGC_VARIABLE;
    if (isVar)
      variableIndex[t[3].getString()] = int(out.buffers.size());
    out.buffers.push_back({kind, t[3].getString(), e, isVar ? Shape{} : bufferShape(t[4]),
                           t[1].getInt() * (e.isBool() ? 1 : e.itemSize()), t[5].getInt()});
    if (isVar) {
      out.buffers.back().varMin = t[4].getTuple()[0].getInt();
      out.buffers.back().varMax = t[4].getTuple()[1].getInt();
    }
  }
  for (auto &[id, b] : byId) { // variable axes of inputs and outputs point at their variable's buffer
    std::vector<std::string> names;
    if (b->arg().getTuple()[2].getString() == "variable")
      continue;
    bufferShape(b->arg().getTuple()[4], &names);
    if (std::all_of(names.begin(), names.end(), [](const std::string &n) { return n.empty(); }))
      continue;
    for (const std::string &n : names)
      out.buffers[size_t(index[b])].dimVars.push_back(n.empty() ? -1 : variableIndex.at(n));
  }
  std::map<const UOp *, size_t> kernelOf;
  std::set<std::string> symbols;
  for (const UOp *call : root->src()) {
    const UOp *k = call->src(0);
    if (k->op() != Op::Linear) {
      error = "kernel '" + (call->arg().isString() ? call->arg().getString() : std::string("?")) +
              "' is not linearized (run the codegen pipeline)";
      return false;
    }
    auto [it, fresh] = kernelOf.emplace(k, out.kernels.size());
    if (fresh) {
      KernelInfo info = analyzeKernel(k);
      std::string sym = symbolName(info.name);
      for (int n = 2; symbols.count(sym); ++n)
        sym = symbolName(info.name) + "_" + std::to_string(n);
      symbols.insert(sym);
      out.kernels.push_back({k, sym, info});
    }
    CallDesc c{it->second, {}, isRunOnceCall(call)};
    for (size_t i = 1; i < call->numSrc(); ++i)
      c.args.push_back(index.at(call->src(i)));
    KernelInfo &info = out.kernels[it->second].info;
    size_t vars = info.variables.size();
    size_t bufferArgs = c.args.size() - vars;           // the variables come last (kernelVariables)
    if (vars && info.params.size() - vars < bufferArgs) // slots the kernel no longer reads come before them
      info.params.insert(info.params.end() - long(vars), bufferArgs - (info.params.size() - vars), dt::Void);
    auto argOf = [&](const UOp *var) { return c.args[info.variableSlot(var)]; };
    if (info.parallelVar)
      c.parallelVar = argOf(info.parallelVar);
    for (int d = 0; d < 3; ++d)
      if (info.gridVar[d])
        c.gridVar[d] = argOf(info.gridVar[d]);
    out.calls.push_back(c);
  }
  return true;
}

} // namespace tgc
