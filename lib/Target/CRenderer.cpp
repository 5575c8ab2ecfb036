//===- CRenderer.cpp - Linearized kernels to readable C ---------*- C++ -*-===//
// One C function per kernel with the runtime's calling convention; loops are `for`, values are named variables.
//===----------------------------------------------------------------------===//
//
// The C is compiled with -fwrapv (tgc's integers wrap) and -fno-math-errno. Float constants are printed as hex
// floats, so they are exact. `max` of floats propagates NaN like tgc's max. bfloat16 is not supported by this
// target (C has no portable bfloat16 arithmetic); the cpu target supports it.

#include "Target/CRenderer.h"

#include "IR/Infer.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace tgc {
namespace {

std::string ctype(DType d) { return std::string(scalarCName(d.element().scalar())); }

std::string floatLiteral(double v, DType d) {
  bool single = d.scalar() != Scalar::F64;
  if (std::isnan(v))
    return single ? "NAN" : "(double)NAN";
  if (std::isinf(v))
    return std::string(v < 0 ? "-" : "") + (single ? "INFINITY" : "(double)INFINITY");
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  std::string s = buf;
  if (d.scalar() == Scalar::F32)
    return s + "f";
  if (d.scalar() == Scalar::F16)
    return "(_Float16)" + s + "f";
  return s;
}

std::string constLiteral(const UOp *u) {
  DType d = u->dtype();
  const Arg &a = u->arg();
  if (a.isBool())
    return a.getBool() ? "1" : "0";
  if (a.isFloat())
    return floatLiteral(a.getFloat(), d);
  int64_t v = a.getInt();
  if (d.isUnsigned())
    return "((" + ctype(d) + ")" + std::to_string(uint64_t(v)) + "ULL)";
  if (d.scalar() == Scalar::I32 && v >= 0)
    return std::to_string(v); // a C int literal is int32_t on every target tgc supports
  if (v == INT64_MIN)
    return "((int64_t)(-9223372036854775807LL - 1))";
  return "((" + ctype(d) + ")" + std::to_string(v) + "LL)";
}

class CKernel {
public:
  CKernel(const UOp *linear, const KernelInfo &info, const std::string &fn) : linear_(linear), info_(info), fn_(fn) {}

  std::string render() {
    body_ += "void " + fn_ + "(void *const *bufs, int64_t begin, int64_t end) {\n";
    depth_ = 1;
    for (const UOp *u : linear_->src())
      emit(u);
    body_ += "  (void)begin;\n  (void)end;\n}\n";
    return helpers() + body_;
  }

private:
  std::string &name(const UOp *u) { return names_[u]; }

  std::string expr(const UOp *u) {
    if (u->op() == Op::Const)
      return constLiteral(u);
    auto it = names_.find(u);
    if (it == names_.end())
      internalError("c renderer: '" + std::string(opName(u->op())) + "' used before it is defined");
    return it->second;
  }

  void line(const std::string &s) { body_ += std::string(size_t(depth_) * 2, ' ') + s + "\n"; }

  std::string fresh(const char *prefix) { return prefix + std::to_string(counter_++); }

  void define(const UOp *u, const std::string &value) {
    std::string v = fresh("v");
    line(ctype(u->dtype()) + " " + v + " = " + value + ";");
    name(u) = v;
  }

  /// A pointer and its validity (index with a valid operand).
  std::string validOf(const UOp *ptr) {
    auto it = valid_.find(ptr);
    return it == valid_.end() ? "" : it->second;
  }

  void emit(const UOp *u) {
    switch (u->op()) {
    case Op::Const:
    case Op::Sink:
    case Op::Noop:
      return;
    case Op::DefineGlobal: {
      std::string v = "data" + std::to_string(u->arg().getInt());
      line(ctype(u->dtype()) + " *restrict " + v + " = (" + ctype(u->dtype()) + " *)bufs[" +
           std::to_string(u->arg().getInt()) + "];");
      name(u) = v;
      return;
    }
    case Op::DefineReg:
    case Op::DefineLocal: {
      std::string v = "acc" + std::to_string(counter_++);
      line(ctype(u->dtype()) + " " + v + "[" + std::to_string(u->arg().getTuple()[1].getInt()) + "];");
      name(u) = v;
      return;
    }
    case Op::Range: {
      std::string v = "r" + std::to_string(u->arg().getTuple()[0].getInt()) + "_" + std::to_string(counter_++);
      std::string t = ctype(u->dtype());
      if (u == info_.parallel)
        line("for (" + t + " " + v + " = (" + t + ")begin; " + v + " < (" + t + ")end; ++" + v + ") {");
      else
        line("for (" + t + " " + v + " = 0; " + v + " < " + expr(u->src(0)) + "; ++" + v + ") {");
      ++depth_;
      name(u) = v;
      return;
    }
    case Op::End:
      --depth_;
      line("}");
      return;
    case Op::After:
      name(u) = expr(u->src(0));
      if (auto v = validOf(u->src(0)); !v.empty())
        valid_[u] = v;
      return;
    case Op::Index: {
      name(u) = "(" + expr(u->src(0)) + " + " + expr(u->src(1)) + ")";
      std::string v = validOf(u->src(0));
      if (u->numSrc() == 3)
        v = v.empty() ? expr(u->src(2)) : "(" + v + " && " + expr(u->src(2)) + ")";
      if (!v.empty())
        valid_[u] = v;
      return;
    }
    case Op::Load: {
      std::string cond = validOf(u->src(0));
      std::string alt = "0";
      if (u->numSrc() == 3) {
        cond = cond.empty() ? expr(u->src(2)) : "(" + cond + " && " + expr(u->src(2)) + ")";
        alt = expr(u->src(1));
      }
      std::string read = "*" + expr(u->src(0));
      define(u, cond.empty() ? read : "(" + cond + " ? " + read + " : " + alt + ")");
      return;
    }
    case Op::Store: {
      std::string cond = validOf(u->src(0));
      if (u->numSrc() == 3)
        cond = cond.empty() ? expr(u->src(2)) : "(" + cond + " && " + expr(u->src(2)) + ")";
      std::string st = "*" + expr(u->src(0)) + " = " + expr(u->src(1)) + ";";
      line(cond.empty() ? st : "if (" + cond + ") " + st);
      return;
    }
    default:
      break;
    }
    if (group::elementwise().contains(u->op()) || u->op() == Op::Mulacc) {
      define(u, alu(u));
      return;
    }
    internalError("c renderer: cannot render '" + std::string(opName(u->op())) + "'");
  }

  std::string math(const char *f, DType d) {
    bool single = d.scalar() != Scalar::F64;
    return std::string(f) + (single ? "f" : "");
  }

  std::string alu(const UOp *u) {
    auto s = [&](size_t i) { return expr(u->src(i)); };
    DType d = u->dtype();
    std::string t = ctype(d);
    switch (u->op()) {
    case Op::Add:
      return s(0) + " + " + s(1);
    case Op::Sub:
      return s(0) + " - " + s(1);
    case Op::Mul:
      return s(0) + " * " + s(1);
    case Op::Fdiv:
    case Op::Idiv:
      return s(0) + " / " + s(1);
    case Op::Mod:
      return s(0) + " % " + s(1);
    case Op::Cmplt:
      return s(0) + " < " + s(1);
    case Op::Cmpne:
      return s(0) + " != " + s(1);
    case Op::Cmpeq:
      return s(0) + " == " + s(1);
    case Op::And:
      return s(0) + " & " + s(1);
    case Op::Or:
      return s(0) + " | " + s(1);
    case Op::Xor:
      return s(0) + " ^ " + s(1);
    case Op::Shl:
      return "(" + t + ")(" + s(0) + " << " + s(1) + ")";
    case Op::Shr:
      return s(0) + " >> " + s(1);
    case Op::Neg:
      return "-" + s(0);
    case Op::Max:
      if (d.isFloat()) {
        needMax_ = true;
        return "tgc_max_" + t + "(" + s(0) + ", " + s(1) + ")";
      }
      return s(0) + " > " + s(1) + " ? " + s(0) + " : " + s(1);
    case Op::Where:
      return s(0) + " ? " + s(1) + " : " + s(2);
    case Op::Mulacc:
      return s(0) + " * " + s(1) + " + " + s(2);
    case Op::Recip:
      return "(" + t + ")1 / " + s(0);
    case Op::Exp2:
      return math("exp2", d) + "(" + s(0) + ")";
    case Op::Log2:
      return math("log2", d) + "(" + s(0) + ")";
    case Op::Sin:
      return math("sin", d) + "(" + s(0) + ")";
    case Op::Sqrt:
      return math("sqrt", d) + "(" + s(0) + ")";
    case Op::Trunc:
      return math("trunc", d) + "(" + s(0) + ")";
    case Op::Pow:
      return math("pow", d) + "(" + s(0) + ", " + s(1) + ")";
    case Op::Cast:
      if (d.isBool())
        return s(0) + " != 0";
      return "(" + t + ")" + s(0);
    case Op::Bitcast: {
      std::string from = ctype(u->src(0)->dtype());
      bitcasts_.insert({from, t});
      return "tgc_bitcast_" + from + "_" + t + "(" + s(0) + ")";
    }
    default:
      internalError("c renderer: no C for '" + std::string(opName(u->op())) + "'");
    }
  }

  std::string helpers() {
    std::string h = "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\n";
    if (needMax_)
      for (const char *t : {"float", "double", "_Float16"})
        h += std::string("static inline ") + t + " tgc_max_" + t + "(" + t + " a, " + t +
             " b) { return a != a || a > b || (a == b && !signbit(a)) ? a : b; }\n";
    for (const auto &[from, to] : bitcasts_)
      h += "static inline " + to + " tgc_bitcast_" + from + "_" + to + "(" + from + " x) { " + to +
           " y; memcpy(&y, &x, sizeof y); return y; }\n";
    return h + "\n";
  }

  const UOp *linear_;
  const KernelInfo &info_;
  std::string fn_;
  std::string body_;
  int depth_ = 0;
  int counter_ = 0;
  bool needMax_ = false;
  std::set<std::pair<std::string, std::string>> bitcasts_;
  std::unordered_map<const UOp *, std::string> names_;
  std::unordered_map<const UOp *, std::string> valid_;
};

} // namespace

std::string renderKernelC(const UOp *linear, const KernelInfo &info, const std::string &function) {
  for (const UOp *u : linear->src())
    if (u->dtype().element().scalar() == Scalar::BF16 || u->dtype().isVector())
      internalError("the c target does not support " + u->dtype().str() + " (use -target=cpu)");
  return CKernel(linear, info, function).render();
}

} // namespace tgc
