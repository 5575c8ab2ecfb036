//===- Verifier.cpp - Well-formedness of graphs at each stage ---*- C++ -*-===//
// Each rule is {ops it applies to, check}; a check returns "" or a message. Stage tables are listed at the end.
//===----------------------------------------------------------------------===//

#include "IR/Verifier.h"

#include "IR/Infer.h"
#include "IR/NodeIdMap.h"
#include "IR/NodeMap.h"
#include "IR/SymbolicDims.h"
#include "IR/TensorCore.h"

#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace tgc {

std::string_view stageName(Stage s) {
  switch (s) {
  case Stage::Tensor: return "tensor";
  case Stage::Kernel: return "kernel";
  case Stage::Program: return "program";
  }
  return "?";
}

std::optional<Stage> stageFromName(std::string_view name) {
  for (Stage s : {Stage::Tensor, Stage::Kernel, Stage::Program})
    if (stageName(s) == name)
      return s;
  return std::nullopt;
}

Stage detectStage(const UOp *root) {
  if (!root)
    return Stage::Tensor;
  bool kernel = false;
  for (const UOp *u : toposort(root)) {
    uint32_t f = opFlags(u->op());
    if ((f & opflag::P) && !(f & opflag::T) && !(f & opflag::K))
      return Stage::Program;
    // kernel-only ops, or values without a tensor shape, mean a kernel graph
    if (((f & opflag::K) && !(f & opflag::T)) || (!u->hasShape() && u->op() != Op::Sink))
      kernel = true;
  }
  return kernel ? Stage::Kernel : Stage::Tensor;
}

namespace {

using Check = std::string (*)(const UOp *);

struct VerifyRule {
  OpSet ops;
  Check check;
};

std::string dt(DType d) { return d.str(); }

bool isNumeric(DType d) { return d.isInt() || d.isFloat(); }

std::string sameAsOperands(const UOp *u, size_t first) {
  for (size_t i = first; i < u->numSrc(); ++i)
    if (u->src(i)->dtype() != u->dtype())
      return "operand #" + std::to_string(i) + " has dtype " + dt(u->src(i)->dtype()) + ", expected " + dt(u->dtype());
  return "";
}

// --- shared rules -------------------------------------------------------------------------------------------------

std::string checkArity(const UOp *u) {
  int a = opArity(u->op());
  if (a >= 0 && int(u->numSrc()) != a)
    return "takes " + std::to_string(a) + " operand" + (a == 1 ? "" : "s") + ", has " + std::to_string(u->numSrc());
  return "";
}

std::string checkUnary(const UOp *u) {
  if (isFloatOnly(u->op()) && !u->dtype().isFloat())
    return "needs a float dtype, has " + dt(u->dtype());
  if (u->op() == Op::Neg && !isNumeric(u->dtype()))
    return "needs a numeric dtype, has " + dt(u->dtype());
  return sameAsOperands(u, 0);
}

std::string checkBinary(const UOp *u) {
  Op op = u->op();
  DType d = u->dtype();
  if (group::comparison().contains(op)) {
    DType in = u->src(0)->dtype();
    if (u->src(1)->dtype() != in)
      return "compares different dtypes " + dt(in) + " and " + dt(u->src(1)->dtype());
    if (in.isPtr() || in.isVoid())
      return "cannot compare values of dtype " + dt(in);
    if (d != dt::Bool.vec(in.lanes()))
      return "result must be " + dt(dt::Bool.vec(in.lanes())) + ", is " + dt(d);
    return "";
  }
  if (isIntOnly(op) && !d.isInt())
    return "needs an integer dtype, has " + dt(d);
  if (isFloatOnly(op) && !d.isFloat())
    return "needs a float dtype, has " + dt(d);
  if (isBitwise(op) && !d.isInt() && !d.isBool())
    return "needs an integer or bool dtype, has " + dt(d);
  if (!isBitwise(op) && !isNumeric(d))
    return "needs a numeric dtype, has " + dt(d);
  return sameAsOperands(u, 0);
}

std::string checkTernary(const UOp *u) {
  if (u->op() == Op::Where) {
    DType c = u->src(0)->dtype();
    if (c != dt::Bool.vec(u->dtype().isPtr() ? 1 : u->dtype().lanes()) && c != dt::Bool)
      return "condition must be bool, is " + dt(c);
    return sameAsOperands(u, 1);
  }
  if (!isNumeric(u->dtype()))
    return "needs a numeric dtype, has " + dt(u->dtype());
  return sameAsOperands(u, 0);
}

std::string checkCast(const UOp *u) {
  DType from = u->src(0)->dtype();
  DType to = u->dtype();
  if (from.isPtr() || to.isPtr() || from.isVoid() || to.isVoid())
    return "cannot convert " + dt(from) + " to " + dt(to);
  if (u->op() == Op::Cast && from.lanes() != to.lanes())
    return "cannot change the number of lanes (" + dt(from) + " to " + dt(to) + ")";
  if (u->op() == Op::Bitcast && from.itemSize() != to.itemSize())
    return "bitcast between sizes " + std::to_string(from.itemSize()) + " and " + std::to_string(to.itemSize()) +
           " bytes";
  if (!u->arg().isNone())
    return "takes no arg";
  return "";
}

std::string checkConst(const UOp *u) {
  if (u->dtype().isPtr() || u->dtype().isVoid())
    return "must have a scalar or vector dtype, has " + dt(u->dtype());
  DType d = u->dtype().element(); // a vector constant has the value in every lane
  const Arg &a = u->arg();
  if (d.isBool())
    return a.isBool() ? "" : "bool constant needs true or false, has " + a.str();
  if (d.isInt()) {
    if (!a.isInt())
      return "integer constant needs an integer value, has " + a.str();
    if (wrapInt(a.getInt(), d) != a.getInt())
      return "value " + a.str() + " does not fit " + dt(d);
    return "";
  }
  if (!a.isFloat())
    return "float constant needs a float value (like 1.0), has " + a.str();
  double v = a.getFloat();
  if (!std::isnan(v) && roundToDType(v, d) != v)
    return "value " + a.str() + " is not exactly representable in " + dt(d);
  return "";
}

std::string checkShapeRule(const UOp *u) {
  std::optional<Shape> declared;
  if (u->hasShape())
    declared = u->shapeVec();
  InferredShape s = inferShape(u->op(), u->dtype(), u->src(), u->arg(), declared);
  if (!s.error.empty())
    return s.error;
  if (s.shape.has_value() != u->hasShape())
    return u->hasShape() ? "must not have a shape here" : "must have a tensor shape";
  return "";
}

// --- tensor rules -------------------------------------------------------------------------------------------------

std::string checkNamedLeaf(const UOp *u) {
  if (!u->arg().isString() || u->arg().getString().empty())
    return "needs a name (a string arg)";
  if (u->dtype().isPtr() || u->dtype().isVoid() || u->dtype().isVector())
    return "needs a scalar element dtype, has " + dt(u->dtype());
  return "";
}

std::string checkOutput(const UOp *u) {
  if (!u->arg().isString() || u->arg().getString().empty())
    return "needs a name (a string arg)";
  return sameAsOperands(u, 0);
}

std::string checkSameDType(const UOp *u) { return sameAsOperands(u, 0); }

std::string checkReduceAxis(const UOp *u) {
  const Arg &a = u->arg();
  bool ok = a.isTuple() && a.getTuple().size() == 2 && a.getTuple()[0].isOp();
  if (ok) {
    Op r = a.getTuple()[0].getOp();
    ok = r == Op::Add || r == Op::Mul || r == Op::Max;
  }
  if (!ok)
    return "arg must be [add|mul|max, [axes]]";
  return sameAsOperands(u, 0);
}

std::string checkComposite(const UOp *u) {
  static const OpSet floatOnly = {Op::Sigmoid,   Op::Tanh,       Op::Gelu,      Op::Silu, Op::Exp, Op::Log,
                                  Op::Softmax,   Op::LogSoftmax, Op::Logsumexp, Op::Mean, Op::Var, Op::Layernorm,
                                  Op::Batchnorm, Op::Rmsnorm,    Op::AvgPool2d, Op::Erf};
  if (floatOnly.contains(u->op()) && !u->dtype().isFloat())
    return "needs a float dtype, has " + dt(u->dtype());
  if (u->dtype().isBool() && u->op() != Op::Concat && u->op() != Op::Gather && u->op() != Op::PadMode)
    return "does not take bool values";
  if (u->op() == Op::Arange)
    return "";
  return u->dtype() == u->src(0)->dtype() ? "" : "dtype must equal operand #0's, " + dt(u->src(0)->dtype());
}

std::string checkCopy(const UOp *u) {
  if (!u->arg().isString())
    return "needs the target device as a string arg";
  return sameAsOperands(u, 0);
}

std::string checkTensorSink(const UOp *u) {
  for (const UOp *s : u->src())
    if (s->op() != Op::Output)
      return "operands of a tensor-level 'sink' must be 'output' nodes, found '" + std::string(opName(s->op())) + "'";
  return "";
}

std::string checkDefineVar(const UOp *u) { return checkDefineVarArg(u); }

// --- kernel rules -------------------------------------------------------------------------------------------------

bool isIntTupleOfSize(const Arg &a, size_t n) { return a.isIntTuple() && a.getTuple().size() == n; }

std::string checkDefine(const UOp *u) {
  AddrSpace want = u->op() == Op::DefineGlobal  ? AddrSpace::Global
                   : u->op() == Op::DefineLocal ? AddrSpace::Local
                                                : AddrSpace::Reg;
  if (!u->dtype().isPtr() || u->dtype().addrSpace() != want)
    return "needs a pointer dtype in address space " + std::string(addrSpaceName(want)) + ", has " + dt(u->dtype());
  if (u->op() == Op::DefineGlobal)
    return u->arg().isInt() && u->arg().getInt() >= 0 ? "" : "arg must be the parameter slot (an integer >= 0)";
  if (!isIntTupleOfSize(u->arg(), 2) || u->arg().getTuple()[1].getInt() <= 0)
    return "arg must be [id, elements] with elements > 0";
  return "";
}

std::string checkRangeLike(const UOp *u) {
  if (!u->dtype().isInt() || u->src(0)->dtype() != u->dtype())
    return "needs an integer dtype equal to its bound's, has " + dt(u->dtype()) + " and bound " +
           dt(u->src(0)->dtype());
  if (u->op() == Op::Special)
    return u->arg().isString() ? "" : "arg must be the launch index name (a string)";
  const Arg &a = u->arg();
  bool ok = a.isTuple() && a.getTuple().size() == 2 && a.getTuple()[0].isInt() && a.getTuple()[1].isString();
  return ok ? "" : "arg must be [axis id, \"kind\"]";
}

std::string checkEndsRanges(const UOp *u) {
  if (u->numSrc() < 1)
    return "needs a value operand";
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (u->src(i)->op() != Op::Range)
      return "operand #" + std::to_string(i) + " must be a 'range'";
  if (u->op() == Op::Reduce) {
    bool ok =
        u->arg().isOp() && (u->arg().getOp() == Op::Add || u->arg().getOp() == Op::Mul || u->arg().getOp() == Op::Max);
    if (!ok)
      return "arg must be add, mul or max";
    return u->dtype() == u->src(0)->dtype() ? "" : "dtype must equal its value's";
  }
  return u->dtype().isVoid() ? "" : "must be void";
}

std::string checkIndex(const UOp *u) {
  if (u->numSrc() < 2 || u->numSrc() > 3)
    return "takes (buffer, index[, valid])";
  if (!u->src(0)->dtype().isPtr())
    return "operand #0 must be a pointer, is " + dt(u->src(0)->dtype());
  if (!u->src(1)->dtype().isInt())
    return "index must be an integer, is " + dt(u->src(1)->dtype());
  if (u->numSrc() == 3 && !u->src(2)->dtype().isBool())
    return "valid must be bool, is " + dt(u->src(2)->dtype());
  if (!u->dtype().isPtr() || u->dtype().scalar() != u->src(0)->dtype().scalar() ||
      u->dtype().addrSpace() != u->src(0)->dtype().addrSpace())
    return "result must point to the buffer's element type, is " + dt(u->dtype());
  return "";
}

std::string checkLoad(const UOp *u) {
  if (u->numSrc() != 1 && u->numSrc() != 3)
    return "takes (pointer) or (pointer, alt, gate)";
  DType p = u->src(0)->dtype();
  if (!p.isPtr())
    return "operand #0 must be a pointer, is " + dt(p);
  if (u->dtype() != p.pointee())
    return "result must be the pointee " + dt(p.pointee()) + ", is " + dt(u->dtype());
  if (u->numSrc() == 3 && (u->src(1)->dtype() != u->dtype() || !u->src(2)->dtype().isBool()))
    return "alt must have the result dtype and gate must be bool";
  return "";
}

std::string checkStore(const UOp *u) {
  if (u->numSrc() != 2 && u->numSrc() != 3)
    return "takes (pointer, value[, gate])";
  DType p = u->src(0)->dtype();
  if (!p.isPtr())
    return "operand #0 must be a pointer, is " + dt(p);
  if (u->src(1)->dtype() != p.pointee())
    return "stores " + dt(u->src(1)->dtype()) + " through " + dt(p);
  if (u->numSrc() == 3 && !u->src(2)->dtype().isBool())
    return "gate must be bool";
  return u->dtype().isVoid() ? "" : "must be void";
}

std::string checkVectorize(const UOp *u) {
  if (u->numSrc() < 2)
    return "needs at least two lanes";
  DType e = u->src(0)->dtype();
  if (e.isVector() || e.isPtr() || e.isVoid())
    return "lanes must be scalars, lane #0 is " + dt(e);
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (u->src(i)->dtype() != e)
      return "lane #" + std::to_string(i) + " is " + dt(u->src(i)->dtype()) + ", lane #0 is " + dt(e);
  return u->dtype() == e.vec(uint16_t(u->numSrc())) ? "" : "result must be " + dt(e.vec(uint16_t(u->numSrc())));
}

std::string checkGep(const UOp *u) {
  DType v = u->src(0)->dtype();
  if (!u->arg().isIntTuple() || u->arg().getTuple().empty())
    return "arg must be a list of lanes";
  for (int64_t l : u->arg().intTuple())
    if (l < 0 || l >= v.lanes())
      return "lane " + std::to_string(l) + " is out of range for " + dt(v);
  DType want = v.element().vec(uint16_t(u->arg().getTuple().size()));
  return u->dtype() == want ? "" : "result must be " + dt(want);
}

/// wmma(a, b, c, lane) [shape]: fragments of the shape's sizes, f16 or bf16 inputs, f32 accumulator; the lane is
/// an index (the range or launch index that numbers the warp's lanes).
std::string checkWmma(const UOp *u) {
  const TensorCore *tc = u->arg().isString() ? findTensorCore(u->arg().getString()) : nullptr;
  if (!tc)
    return "arg must name a tensor core shape (m16n8k16)";
  DType in = u->src(0)->dtype().element();
  if (!tc->takes(in))
    return "inputs must be f16 or bf16, not " + dt(in);
  DType a = in.vec(uint16_t(tc->aElems)), b = in.vec(uint16_t(tc->bElems)), c = dt::F32.vec(uint16_t(tc->cElems));
  if (u->src(0)->dtype() != a || u->src(1)->dtype() != b || u->src(2)->dtype() != c)
    return "operands must be " + dt(a) + ", " + dt(b) + " and " + dt(c);
  if (!u->src(3)->dtype().isInt() || u->src(3)->dtype().isVector())
    return "operand #3 must be the lane index";
  return u->dtype() == c ? "" : "result must be " + dt(c);
}

std::string checkVoid(const UOp *u) { return u->dtype().isVoid() ? "" : "must be void"; }

std::string checkKernelLinear(const UOp *u) {
  if (!u->arg().isNone() && !u->arg().isString())
    return "arg must be the kernel's name";
  return u->dtype().isVoid() ? "" : "must be void";
}

std::string checkAfter(const UOp *u) {
  if (u->numSrc() < 2)
    return "takes (value, dependencies...)";
  return u->dtype() == u->src(0)->dtype() ? "" : "dtype must equal its value's";
}

// --- program rules ------------------------------------------------------------------------------------------------

bool isVariableBuffer(const UOp *u) {
  const auto &t = u->arg().getTuple();
  return u->dtype().pointee() == dt::I64 && t[1].getInt() == 1 && t[4].isIntTuple() && t[4].getTuple().size() == 2 &&
         t[4].getTuple()[0].getInt() <= t[4].getTuple()[1].getInt() && !t[3].getString().empty();
}

std::string checkBuffer(const UOp *u) {
  if (!u->dtype().isPtr() || u->dtype().addrSpace() != AddrSpace::Global || u->dtype().isVector())
    return "needs a global pointer dtype, has " + dt(u->dtype());
  const Arg &a = u->arg();
  bool ok = a.isTuple() && a.getTuple().size() == 6;
  if (ok) {
    const auto &t = a.getTuple();
    ok = t[0].isInt() && t[1].isInt() && t[1].getInt() >= 0 && t[2].isString() && t[3].isString() && t[4].isTuple() &&
         t[5].isInt() && t[5].getInt() >= -1;
    static const std::set<std::string> kinds = {"input", "weight", "output", "temp", "variable"};
    ok = ok && kinds.count(t[2].getString());
    ok = ok && (t[2].getString() == "temp" || t[5].getInt() == -1);
    if (ok && t[2].getString() == "variable")
      return isVariableBuffer(u) ? ""
                                 : "a variable's buffer must be [id, 1, \"variable\", name, [lo, hi], -1] : ptr<i64>";
    int64_t n = 1;
    for (const Arg &d : ok ? t[4].getTuple() : Arg::Tuple{}) {
      // a variable axis (inputs and outputs) is [name, upper bound]
      bool var = d.isTuple() && d.getTuple().size() == 2 && d.getTuple()[0].isString() && d.getTuple()[1].isInt();
      ok = ok && (d.isInt() || var);
      n *= !ok ? 1 : var ? d.getTuple()[1].getInt() : d.getInt();
    }
    ok = ok && (t[2].getString() == "temp" || n == t[1].getInt());
  }
  if (!ok)
    return "arg must be [id, elements, \"input\"|\"weight\"|\"output\"|\"temp\"|\"variable\", name, [shape], "
           "offset] with elements = the shape's product and offset -1 except for planned temporaries";
  return "";
}

/// A call passes its kernel one buffer per parameter slot. A kernel may leave a slot unused (a rewrite folded
/// its loads away); the buffer stays an operand, so the program's inputs and the call's ABI do not change.
std::string checkCall(const UOp *u) {
  if (u->numSrc() < 1 || (u->src(0)->op() != Op::Sink && u->src(0)->op() != Op::Linear))
    return "operand #0 must be the kernel (its 'sink', or its 'linear' once linearized)";
  for (size_t i = 1; i < u->numSrc(); ++i)
    if (u->src(i)->op() != Op::Buffer)
      return "operand #" + std::to_string(i) + " must be a buffer";
  for (const UOp *n : toposort(u->src(0))) {
    if (n->op() != Op::DefineGlobal || !n->arg().isInt())
      continue;
    int64_t slot = n->arg().getInt();
    if (slot < 0 || slot >= int64_t(u->numSrc() - 1))
      return "kernel parameter " + std::to_string(slot) + " has no buffer (the call passes " +
             std::to_string(u->numSrc() - 1) + ")";
    if (u->src(size_t(slot) + 1)->dtype() != n->dtype())
      return "operand #" + std::to_string(slot + 1) + " must be a buffer of dtype " + dt(n->dtype());
  }
  return "";
}

std::string checkLinear(const UOp *u) {
  for (const UOp *s : u->src())
    if (s->op() != Op::Call)
      return "operands must be 'call' nodes";
  if (u->op() == Op::Linear && !u->arg().isNone() && !(u->arg().isInt() && u->arg().getInt() >= 0))
    return "arg must be the arena size in bytes";
  return u->dtype().isVoid() ? "" : "must be void";
}

// --- tables -------------------------------------------------------------------------------------------------------

const std::vector<VerifyRule> &sharedRules() {
  static const std::vector<VerifyRule> rules = {
      {group::unary(), checkUnary},     {group::binary(), checkBinary},
      {group::ternary(), checkTernary}, {OpSet::ofGroup(OpGroup::Cast), checkCast},
      {{Op::Const}, checkConst},        {{Op::DefineVar}, checkDefineVar},
  };
  return rules;
}

const std::vector<VerifyRule> &tensorRules() {
  static const std::vector<VerifyRule> rules = {
      {{Op::Input, Op::Weight}, checkNamedLeaf},
      {{Op::Output}, checkOutput},
      {group::movement() | OpSet{Op::Contiguous}, checkSameDType},
      {{Op::ReduceAxis}, checkReduceAxis},
      {{Op::Copy}, checkCopy},
      {group::composite(), checkComposite},
      {{Op::Sink}, checkTensorSink},
      {OpSet::withFlag(opflag::T), checkDimVars},
  };
  return rules;
}

const std::vector<VerifyRule> &kernelRules() {
  static const std::vector<VerifyRule> rules = {
      {{Op::DefineGlobal, Op::DefineLocal, Op::DefineReg}, checkDefine},
      {{Op::Range, Op::Special}, checkRangeLike},
      {{Op::End, Op::Reduce}, checkEndsRanges},
      {{Op::Index}, checkIndex},
      {{Op::Load}, checkLoad},
      {{Op::Store}, checkStore},
      {{Op::Vectorize}, checkVectorize},
      {{Op::Gep}, checkGep},
      {{Op::Wmma}, checkWmma},
      {{Op::Sink, Op::Barrier, Op::If, Op::Endif}, checkVoid},
      {{Op::Linear}, checkKernelLinear},
      {{Op::After}, checkAfter},
  };
  return rules;
}

const std::vector<VerifyRule> &programRules() {
  static const std::vector<VerifyRule> rules = {
      {{Op::Buffer}, checkBuffer},
      {{Op::Call}, checkCall},
      {{Op::Linear, Op::Sink}, checkLinear},
  };
  return rules;
}

uint32_t stageFlag(Stage s) {
  switch (s) {
  case Stage::Tensor: return opflag::T;
  case Stage::Kernel: return opflag::K;
  case Stage::Program: return opflag::P;
  }
  return 0;
}

class Verifier {
public:
  Verifier(const Module &m, DiagEngine &diags) : m_(m), diags_(diags) {}

  int run(Stage stage) {
    if (!m_.root)
      return 0;
    if (stage == Stage::Tensor) { // names must be unique across the whole graph: every node, every time
      std::vector<const UOp *> order = toposort(m_.root);
      for (const UOp *u : order)
        checkNode(u, stage);
      checkUniqueNames(order);
      return errors_;
    }
    // a node's checks look at nothing but the node: one found well-formed (with everything below it) stays so
    std::vector<std::pair<const UOp *, Stage>> order = unchecked(stage);
    for (const auto &[u, s] : order)
      checkNode(u, s);
    if (errors_ == 0)
      for (const auto &[u, s] : order)
        wellFormed(s).insert(u, u);
    return errors_;
  }

private:
  /// The nodes under the root that no earlier run found well-formed, operands first, each with the stage it is
  /// checked in: a program's kernels (a call's operand #0) are kernel graphs.
  std::vector<std::pair<const UOp *, Stage>> unchecked(Stage stage) {
    struct Frame {
      const UOp *node;
      Stage stage;
      size_t next;
    };
    std::vector<std::pair<const UOp *, Stage>> order;
    NodeMap<bool> seen[2]; // kernel, program
    std::vector<Frame> stack;
    auto push = [&](const UOp *u, Stage s) {
      if (!wellFormed(s).contains(u) && seen[s == Stage::Program].insert(u, true).second)
        stack.push_back({u, s, 0});
    };
    push(m_.root, stage);
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next == f.node->numSrc()) {
        order.emplace_back(f.node, f.stage);
        stack.pop_back();
        continue;
      }
      size_t i = f.next++;
      bool kernel = f.stage == Stage::Program && f.node->op() == Op::Call && i == 0;
      push(f.node->src(i), kernel ? Stage::Kernel : f.stage); // may move the stack: f is not used after
    }
    return order;
  }

  /// The nodes found well-formed in `stage` (kernel or program), kept by the context for later runs.
  NodeIdMap<const UOp *> &wellFormed(Stage stage) {
    static const char kernelKey = 0, programKey = 0;
    NodeIdMap<const UOp *> *&table = stage == Stage::Kernel ? kernelWellFormed_ : programWellFormed_;
    if (!table) // looked up once per run: this is asked for every node
      table = &m_.root->ctx().memo(stage == Stage::Kernel ? &kernelKey : &programKey);
    return *table;
  }

  void checkNode(const UOp *u, Stage stage) {
    if (!(opFlags(u->op()) & stageFlag(stage))) {
      report(u, "is not allowed in a " + std::string(stageName(stage)) + " graph");
      return;
    }
    if (std::string e = checkArity(u); !e.empty()) {
      report(u, e);
      return;
    }
    bool ok = apply(sharedRules(), u);
    if (stage == Stage::Tensor)
      ok = apply(tensorRules(), u) && ok;
    if (stage == Stage::Kernel)
      ok = apply(kernelRules(), u) && ok;
    if (stage == Stage::Program)
      ok = apply(programRules(), u) && ok;
    if (ok)
      checkShape(u, stage);
  }

  bool apply(const std::vector<VerifyRule> &rules, const UOp *u) {
    for (const VerifyRule &r : rules) {
      if (!r.ops.contains(u->op()))
        continue;
      if (std::string e = r.check(u); !e.empty()) {
        report(u, e);
        return false;
      }
    }
    return true;
  }

  void checkShape(const UOp *u, Stage stage) {
    if (stage == Stage::Tensor && u->op() != Op::Sink && !u->hasShape()) {
      report(u, "must have a tensor shape in a tensor graph");
      return;
    }
    if (stage != Stage::Tensor && u->hasShape()) {
      report(u, "must not have a tensor shape in a " + std::string(stageName(stage)) + " graph");
      return;
    }
    if (std::string e = checkShapeRule(u); !e.empty())
      report(u, e);
  }

  void checkUniqueNames(const std::vector<const UOp *> &order) {
    std::unordered_map<std::string, const UOp *> inputs, outputs;
    for (const UOp *u : order) {
      if (!u->arg().isString())
        continue;
      auto *seen = u->op() == Op::Output                             ? &outputs
                   : (u->op() == Op::Input || u->op() == Op::Weight) ? &inputs
                                                                     : nullptr;
      if (!seen)
        continue;
      auto [it, fresh] = seen->emplace(u->arg().getString(), u);
      if (!fresh)
        report(u, "name \"" + u->arg().getString() + "\" is used by another '" + std::string(opName(it->second->op())) +
                      "'");
    }
  }

  void report(const UOp *u, const std::string &msg) {
    ++errors_;
    const Loc *loc = u->ctx().loc(u);
    Loc where = loc ? *loc : Loc{m_.fileName, 0, 0};
    diags_.error(where, "'" + std::string(opName(u->op())) + "' " + msg);
  }

  const Module &m_;
  DiagEngine &diags_;
  int errors_ = 0;
  NodeIdMap<const UOp *> *kernelWellFormed_ = nullptr;
  NodeIdMap<const UOp *> *programWellFormed_ = nullptr;
};

} // namespace

int verify(const Module &m, Stage stage, DiagEngine &diags) { return Verifier(m, diags).run(stage); }

} // namespace tgc
