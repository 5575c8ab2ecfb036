//===- CRenderer.cpp - Linearized kernels to readable C ---------*- C++ -*-===//
// One C function per kernel with the runtime's calling convention; loops are `for`, values are named variables.
//===----------------------------------------------------------------------===//
//
// The C is compiled with -fwrapv (tgc's integers wrap) and -fno-math-errno. Float constants are printed as hex
// floats, so they are exact. `max` of floats propagates NaN like tgc's max. C has no portable bfloat16, so bf16 is
// emulated: values are floats holding bf16 values, memory is uint16_t, and every op producing a bf16 rounds its
// float result to bf16 (to nearest even, as the interpreter does). Conversions from doubles and integers round
// once, through round-to-odd to float.

#include "Target/CRenderer.h"

#include "IR/Infer.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace tgc {
namespace {

bool isBF16(DType d) { return d.element().scalar() == Scalar::BF16; }

/// The C type of a value (bf16 values are floats).
std::string ctype(DType d) { return isBF16(d) ? "float" : std::string(scalarCName(d.element().scalar())); }
/// The C type of a buffer's elements (bf16 buffers hold the 16-bit patterns).
std::string memtype(DType d) { return isBF16(d) ? "uint16_t" : ctype(d); }

std::string floatLiteral(double v, DType d) {
  bool single = d.scalar() != Scalar::F64;
  if (std::isnan(v))
    return single ? "NAN" : "(double)NAN";
  if (std::isinf(v))
    return std::string(v < 0 ? "-" : "") + (single ? "INFINITY" : "(double)INFINITY");
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  std::string s = buf;
  if (d.scalar() == Scalar::F32 || d.scalar() == Scalar::BF16)
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

/// bf16 emulation: conversions between bit patterns and floats, rounding to nearest even.
const char *kBF16Helpers =
    "static inline float tgc_bf16_to_f32(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; "
    "memcpy(&f, &u, 4); return f; }\n"
    "static inline uint16_t tgc_f32_to_bf16(float f) { uint32_t u; memcpy(&u, &f, 4); "
    "if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); "
    "return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }\n"
    "static inline float tgc_round_bf16(float f) { return tgc_bf16_to_f32(tgc_f32_to_bf16(f)); }\n"
    "/* double -> bf16 rounding once: round to odd into float (24 >= 8 + 2 bits), then to nearest even */\n"
    "static inline float tgc_round_bf16_d(double d) { float f = (float)d; "
    "if (d == d && (double)f != d && f - f == 0) { uint32_t u; memcpy(&u, &f, 4); "
    "if (!(u & 1u)) { u += fabs((double)f) > fabs(d) ? (uint32_t)-1 : 1u; memcpy(&f, &u, 4); } } "
    "return tgc_round_bf16(f); }\n";

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
      line(memtype(u->dtype()) + " *restrict " + v + " = (" + memtype(u->dtype()) + " *)bufs[" +
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
      if (inMemoryAsBits(u->src(0)))
        read = "tgc_bf16_to_f32(" + read + ")";
      define(u, cond.empty() ? read : "(" + cond + " ? " + read + " : " + alt + ")");
      return;
    }
    case Op::Store: {
      std::string cond = validOf(u->src(0));
      if (u->numSrc() == 3)
        cond = cond.empty() ? expr(u->src(2)) : "(" + cond + " && " + expr(u->src(2)) + ")";
      std::string value = expr(u->src(1));
      if (inMemoryAsBits(u->src(0)))
        value = "tgc_f32_to_bf16(" + value + ")";
      std::string st = "*" + expr(u->src(0)) + " = " + value + ";";
      line(cond.empty() ? st : "if (" + cond + ") " + st);
      return;
    }
    default:
      break;
    }
    if (group::elementwise().contains(u->op()) || u->op() == Op::Mulacc) {
      define(u, roundedALU(u));
      return;
    }
    internalError("c renderer: cannot render '" + std::string(opName(u->op())) + "'");
  }

  /// A bf16 global buffer: its elements are bit patterns (registers hold floats).
  bool inMemoryAsBits(const UOp *ptr) {
    return isBF16(ptr->dtype()) && ptr->dtype().addrSpace() == AddrSpace::Global;
  }

  /// The C of an ALU op, rounded to bf16 when it produces one.
  std::string roundedALU(const UOp *u) {
    DType d = u->dtype();
    if (!isBF16(d) || u->op() == Op::Bitcast)
      return alu(u);
    Op op = u->op();
    if (op == Op::Neg || op == Op::Max || op == Op::Where || op == Op::Trunc)
      return alu(u); // exact on bf16 values
    if (op == Op::Cast) {
      DType from = u->src(0)->dtype();
      bool viaDouble = !(from.isFloat() && from.scalar() != Scalar::F64) && !from.isBool();
      return viaDouble ? "tgc_round_bf16_d((double)" + expr(u->src(0)) + ")"
                       : "tgc_round_bf16((float)" + expr(u->src(0)) + ")";
    }
    return "tgc_round_bf16(" + alu(u) + ")";
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
      // bf16 values are floats: go through their bit patterns
      std::string from = memtype(u->src(0)->dtype());
      std::string to = memtype(d);
      std::string x = isBF16(u->src(0)->dtype()) ? "tgc_f32_to_bf16(" + s(0) + ")" : s(0);
      bitcasts_.insert({from, to});
      std::string y = "tgc_bitcast_" + from + "_" + to + "(" + x + ")";
      return isBF16(d) ? "tgc_bf16_to_f32(" + y + ")" : y;
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
    h += kBF16Helpers;
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
    if (u->dtype().isVector())
      internalError("the c target got a vector " + u->dtype().str() + " (devectorize should have split it)");
  return CKernel(linear, info, function).render();
}

} // namespace tgc
