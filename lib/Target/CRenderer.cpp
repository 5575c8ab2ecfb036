//===- CRenderer.cpp - Linearized kernels to readable C ---------*- C++ -*-===//
// One C function per kernel with the runtime's calling convention; loops are `for`, values are named variables.
//===----------------------------------------------------------------------===//
//
// The C is compiled with -fwrapv (tgc's integers wrap) and -fno-math-errno. Float constants are printed as hex
// floats, so they are exact. C has no portable bfloat16 (nor OpenCL C a half type without cl_khr_fp16), so their
// values are floats holding bf16 (f16) values and memory holds the 16-bit patterns; emulate-floats has already
// written their arithmetic in float32, and a conversion to them rounds (to nearest even, as the interpreter does;
// from doubles and integers once, through round-to-odd to float). Float max has been written as compares.

#include "Target/CRenderer.h"

#include "IR/Infer.h"
#include "IR/SymbolicDims.h"
#include "Passes/Targets.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace tgc {

/// What differs between the C-style languages tgc writes (tinygrad's CStyleLanguage attributes).
struct CDialect {
  const char *name;
  bool gpu;            // a __kernel with one typed parameter per buffer, launched over work-items
  const char *kernel;  // before the function's return type
  const char *global;  // qualifier of buffer parameters
  const char *local;   // qualifier of local (shared) buffers
  const char *barrier; // statement waiting for the work-group, local memory visible
  const char *groupId; // expression of work-group index N (printf %d)
  const char *localId; // expression of work-item index N within the group
  const char *helper;  // storage and linkage of helper functions
  bool suffixedMath;   // expf/exp2f for float (C) or overloaded exp2 (OpenCL)
  TargetId target;     // the row of Targets.def whose native flags say which half types are emulated
  const char *prelude; // includes, typedefs, pragmas
};

const CDialect kCDialect = {
    "c",  false,       "",
    "",   "",          "",
    "",   "",          "static inline ",
    true, TargetId::C, "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\n"};

/// OpenCL C 1.2: fixed-width integer names as typedefs, float16 without cl_khr_fp16 (vload_half/vstore_half, which
/// every device has), no contraction of a*b+c (results round like the interpreter's).
const CDialect kOpenCLDialect = {
    "opencl",
    true,
    "__kernel ",
    "__global ",
    "__local ",
    "barrier(CLK_LOCAL_MEM_FENCE);",
    "get_group_id(%d)",
    "get_local_id(%d)",
    "",
    false,
    TargetId::OpenCL,
    "#pragma OPENCL FP_CONTRACT OFF\n"
    "#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
    "typedef char int8_t;\ntypedef uchar uint8_t;\ntypedef short int16_t;\ntypedef ushort uint16_t;\n"
    "typedef int int32_t;\ntypedef uint uint32_t;\ntypedef long int64_t;\ntypedef ulong uint64_t;\n\n"};

namespace {

bool isBF16(DType d) { return d.element().scalar() == Scalar::BF16; }
bool isF16(DType d) { return d.element().scalar() == Scalar::F16; }

std::string floatLiteral(double v, DType d, bool halfAsFloat) {
  bool single = d.scalar() != Scalar::F64;
  if (std::isnan(v))
    return single ? "NAN" : "(double)NAN";
  if (std::isinf(v))
    return std::string(v < 0 ? "-" : "") + (single ? "INFINITY" : "(double)INFINITY");
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  std::string s = buf;
  if (d.scalar() == Scalar::F32 || d.scalar() == Scalar::BF16 || (halfAsFloat && d.scalar() == Scalar::F16))
    return s + "f";
  if (d.scalar() == Scalar::F16)
    return "(_Float16)" + s + "f";
  return s;
}

std::string constLiteral(const UOp *u, bool halfAsFloat) {
  DType d = u->dtype();
  const Arg &a = u->arg();
  if (a.isBool())
    return a.getBool() ? "1" : "0";
  if (a.isFloat())
    return floatLiteral(a.getFloat(), d, halfAsFloat);
  int64_t v = a.getInt();
  std::string t(scalarCName(d.element().scalar()));
  if (d.isUnsigned())
    return "((" + t + ")" + std::to_string(uint64_t(v)) + "ULL)";
  if (d.scalar() == Scalar::I32 && v >= 0)
    return std::to_string(v); // a C int literal is int32_t on every target tgc supports
  if (v == INT64_MIN)
    return "((int64_t)(-9223372036854775807LL - 1))";
  return "((" + t + ")" + std::to_string(v) + "LL)";
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

/// OpenCL versions of the 16-bit float helpers (as_uint/as_float instead of memcpy; half through vload/vstore).
const char *kOpenCLHelpers =
    "float tgc_bf16_to_f32(ushort b) { return as_float((uint)b << 16); }\n"
    "ushort tgc_f32_to_bf16(float f) { uint u = as_uint(f); "
    "if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40); "
    "return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }\n"
    "float tgc_round_bf16(float f) { return tgc_bf16_to_f32(tgc_f32_to_bf16(f)); }\n"
    "float tgc_round_f16(float f) { ushort h; vstore_half_rte(f, 0, (half *)&h); return vload_half(0, (half *)&h); }\n"
    "#ifdef cl_khr_fp64\n"
    "/* double -> 16-bit float rounding once: round to odd into float, then to nearest even */\n"
    "float tgc_round_odd(double d) { float f = (float)d; "
    "if (d == d && (double)f != d && f - f == 0) { uint u = as_uint(f); "
    "if (!(u & 1u)) { u += fabs((double)f) > fabs(d) ? (uint)-1 : 1u; f = as_float(u); } } return f; }\n"
    "float tgc_round_bf16_d(double d) { return tgc_round_bf16(tgc_round_odd(d)); }\n"
    "float tgc_round_f16_d(double d) { return tgc_round_f16(tgc_round_odd(d)); }\n"
    "#endif\n";

class CKernel {
public:
  CKernel(const UOp *linear, const KernelInfo &info, const std::string &fn, const CDialect &d)
      : linear_(linear), info_(info), fn_(fn), d_(d) {}

  std::string render() {
    std::string b = body();
    return helpers() + b;
  }

  /// The function alone (its helpers are helpers()).
  std::string body() {
    body_ += signature() + " {\n";
    depth_ = 1;
    for (const UOp *u : linear_->src())
      emit(u);
    if (!d_.gpu)
      body_ += "  (void)begin;\n  (void)end;\n";
    body_ += "}\n";
    return body_;
  }

  /// The includes, typedefs and helper functions the kernel's body uses.
  std::string helpers() {
    std::string h = d_.prelude;
    if (d_.gpu) {
      h += kOpenCLHelpers;
      h += "ushort tgc_f32_to_f16_bits(float f) { ushort h; vstore_half_rte(f, 0, (half *)&h); return h; }\n"
           "float tgc_f16_bits_to_f32(ushort h) { return vload_half(0, (half *)&h); }\n";
      return h + "\n";
    }
    h += kBF16Helpers;
    for (const auto &[from, to] : bitcasts_)
      h += "static inline " + to + " tgc_bitcast_" + from + "_" + to + "(" + from + " x) { " + to +
           " y; memcpy(&y, &x, sizeof y); return y; }\n";
    return h + "\n";
  }

private:
  std::string signature() {
    if (!d_.gpu)
      return "void " + fn_ + "(void *const *bufs, int64_t begin, int64_t end)";
    std::string params;
    for (size_t i = 0; i < info_.params.size(); ++i) {
      DType e = info_.params[i].isVoid() ? dt::U8 : info_.params[i];
      params += std::string(i ? ", " : "") + d_.global + memtype(e) + " *restrict data" + std::to_string(i);
    }
    return std::string(d_.kernel) + "void " + fn_ + "(" + params + ")";
  }

  /// Values of this dtype are floats holding 16-bit float values: the target has no such arithmetic (bf16 on c and
  /// opencl, f16 on opencl, which has no half without cl_khr_fp16).
  bool emulated(DType d) const {
    const TargetRecord &t = targetRecord(d_.target);
    return (isBF16(d) && !t.has(native::BF16)) || (isF16(d) && !t.has(native::F16));
  }

  /// The C type of a value (emulated 16-bit floats are floats).
  std::string ctype(DType d) const {
    if (emulated(d))
      return "float";
    return std::string(scalarCName(d.element().scalar()));
  }

  /// The C type of a buffer's elements (bf16 buffers hold the 16-bit patterns; OpenCL bools are bytes).
  std::string memtype(DType d) const {
    if (emulated(d))
      return isBF16(d) ? "uint16_t" : "half";
    if (d_.gpu && d.element().isBool())
      return "uchar";
    return ctype(d);
  }

  std::string roundHelper(DType d) const { return isBF16(d) ? "tgc_round_bf16" : "tgc_round_f16"; }

  std::string &name(const UOp *u) { return names_[u]; }

  std::string expr(const UOp *u) {
    if (u->op() == Op::Const)
      return constLiteral(u, emulated(dt::F16));
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
    case Op::Noop: return;
    case Op::DefineGlobal: return globalBuffer(u);
    case Op::DefineVar: return variable(u);
    case Op::DefineReg:
    case Op::DefineLocal: return array(u);
    case Op::Special: return launchIndex(u);
    case Op::Barrier: return line(d_.barrier);
    case Op::Range: return loop(u);
    case Op::End: --depth_; return line("}");
    case Op::After:
      name(u) = expr(u->src(0));
      if (auto v = validOf(u->src(0)); !v.empty())
        valid_[u] = v;
      return;
    case Op::Index: return index(u);
    case Op::Load: return load(u);
    case Op::Store: return store(u);
    default: break;
    }
    if (group::elementwise().contains(u->op()) || u->op() == Op::Mulacc)
      return define(u, emulated(u->dtype()) ? emulatedALU(u) : alu(u));
    internalError("c renderer: cannot render '" + std::string(opName(u->op())) + "'");
  }

  /// A buffer parameter: `data0` (CPU kernels take it from the runtime's `bufs` array).
  void globalBuffer(const UOp *u) {
    std::string v = "data" + std::to_string(u->arg().getInt());
    if (!d_.gpu)
      line(memtype(u->dtype()) + " *restrict " + v + " = (" + memtype(u->dtype()) + " *)bufs[" +
           std::to_string(u->arg().getInt()) + "];");
    name(u) = v;
  }

  /// A variable's value is passed like a buffer, after the buffers (KernelInfo::variables).
  void variable(const UOp *u) {
    std::string slot = std::to_string(info_.variableSlot(u));
    std::string v = "var_" + symbolName(varName(u));
    std::string value = d_.gpu ? "data" + slot + "[0]" : "*(const int64_t *)bufs[" + slot + "]";
    line(std::string(ctype(u->dtype())) + " " + v + " = (" + ctype(u->dtype()) + ")" + value + ";");
    name(u) = v;
  }

  /// A register array (accumulators) or a work-group's local array.
  void array(const UOp *u) {
    std::string v = (u->op() == Op::DefineLocal ? "shared" : "acc") + std::to_string(counter_++);
    std::string q = u->op() == Op::DefineLocal ? d_.local : "";
    line(q + ctype(u->dtype()) + " " + v + "[" + std::to_string(u->arg().getTuple()[1].getInt()) + "];");
    name(u) = v;
  }

  void launchIndex(const UOp *u) {
    const std::string &n = u->arg().getString();
    char buf[64];
    std::snprintf(buf, sizeof(buf), n.rfind("lidx", 0) == 0 ? d_.localId : d_.groupId, n.back() - '0');
    define(u, "(" + ctype(u->dtype()) + ")" + buf);
  }

  /// A `for` loop; the parallel loop of a CPU kernel runs over the thread's [begin, end).
  void loop(const UOp *u) {
    std::string v = "r" + std::to_string(u->arg().getTuple()[0].getInt()) + "_" + std::to_string(counter_++);
    std::string t = ctype(u->dtype());
    if (u == info_.parallel && !d_.gpu)
      line("for (" + t + " " + v + " = (" + t + ")begin; " + v + " < (" + t + ")end; ++" + v + ") {");
    else
      line("for (" + t + " " + v + " = 0; " + v + " < " + expr(u->src(0)) + "; ++" + v + ") {");
    ++depth_;
    name(u) = v;
  }

  /// A pointer expression; its validity (the index's and its buffer's) is kept for the load or store.
  void index(const UOp *u) {
    name(u) = "(" + expr(u->src(0)) + " + " + expr(u->src(1)) + ")";
    std::string v = validOf(u->src(0));
    if (u->numSrc() == 3)
      v = v.empty() ? expr(u->src(2)) : "(" + v + " && " + expr(u->src(2)) + ")";
    if (!v.empty())
      valid_[u] = v;
  }

  /// A read, `cond ? *p : alt` when gated; emulated 16-bit floats are converted from their bits.
  void load(const UOp *u) {
    std::string cond = validOf(u->src(0));
    std::string alt = "0";
    if (u->numSrc() == 3) {
      cond = cond.empty() ? expr(u->src(2)) : "(" + cond + " && " + expr(u->src(2)) + ")";
      alt = expr(u->src(1));
    }
    std::string read = "*" + expr(u->src(0));
    if (inMemoryAsBits(u->src(0)))
      read = isBF16(u->dtype()) ? "tgc_bf16_to_f32(" + read + ")" : "vload_half(0, " + expr(u->src(0)) + ")";
    define(u, cond.empty() ? read : "(" + cond + " ? " + read + " : " + alt + ")");
  }

  /// A write, under `if (cond)` when gated; emulated 16-bit floats are converted to their bits.
  void store(const UOp *u) {
    std::string cond = validOf(u->src(0));
    if (u->numSrc() == 3)
      cond = cond.empty() ? expr(u->src(2)) : "(" + cond + " && " + expr(u->src(2)) + ")";
    std::string value = expr(u->src(1));
    std::string st = "*" + expr(u->src(0)) + " = " + value + ";";
    if (inMemoryAsBits(u->src(0)))
      st = isBF16(u->src(1)->dtype()) ? "*" + expr(u->src(0)) + " = tgc_f32_to_bf16(" + value + ");"
                                      : "vstore_half_rte(" + value + ", 0, " + expr(u->src(0)) + ");";
    line(cond.empty() ? st : "if (" + cond + ") " + st);
  }

  /// A global buffer of an emulated 16-bit float: its elements are not the registers' floats.
  bool inMemoryAsBits(const UOp *ptr) {
    return emulated(ptr->dtype().pointee()) && ptr->dtype().addrSpace() == AddrSpace::Global;
  }

  /// The C of an op producing an emulated 16-bit float: a conversion rounds; selects and bitcasts are exact;
  /// emulate-floats has moved all arithmetic to float32.
  std::string emulatedALU(const UOp *u) {
    DType d = u->dtype();
    Op op = u->op();
    if (op == Op::Where || op == Op::Bitcast)
      return alu(u);
    if (op != Op::Cast)
      internalError("c renderer: " + d.str() + " '" + std::string(opName(op)) +
                    "' reached the renderer (emulate-floats "
                    "writes it in float32)");
    DType from = u->src(0)->dtype();
    if (emulated(from) && (isBF16(d) == isBF16(from)))
      return expr(u->src(0));
    bool viaDouble = !(from.isFloat() && from.scalar() != Scalar::F64) && !from.isBool();
    return viaDouble ? roundHelper(d) + "_d((double)" + expr(u->src(0)) + ")"
                     : roundHelper(d) + "((float)" + expr(u->src(0)) + ")";
  }

  std::string math(const char *f, DType d) {
    bool single = d.scalar() != Scalar::F64;
    return std::string(f) + (single && d_.suffixedMath ? "f" : "");
  }

  /// x / y or x % y; for a signed scalar y that is not a constant, y = -1 gives -x and 0 (INT_MIN idiv -1 wraps,
  /// docs/ops.md), where the CPU's division would trap.
  std::string divide(const UOp *u, const std::string &x, const std::string &y) {
    const char *op = u->op() == Op::Idiv ? " / " : " % ";
    bool guard = u->dtype().isSigned() && !u->dtype().isVector() && u->src(1)->op() != Op::Const;
    if (!guard)
      return x + op + y;
    std::string minusOne = y + " == -1 ? " + (u->op() == Op::Idiv ? "-" + x : "0") + " : ";
    return "(" + minusOne + x + op + y + ")";
  }

  std::string alu(const UOp *u) {
    auto s = [&](size_t i) { return expr(u->src(i)); };
    DType d = u->dtype();
    std::string t = ctype(d);
    switch (u->op()) {
    case Op::Add: return s(0) + " + " + s(1);
    case Op::Sub: return s(0) + " - " + s(1);
    case Op::Mul: return s(0) + " * " + s(1);
    case Op::Fdiv: return s(0) + " / " + s(1);
    case Op::Idiv:
    case Op::Mod: return divide(u, s(0), s(1));
    case Op::Cmplt: return s(0) + " < " + s(1);
    case Op::Cmpne: return s(0) + " != " + s(1);
    case Op::Cmpeq: return s(0) + " == " + s(1);
    case Op::And: return s(0) + " & " + s(1);
    case Op::Or: return s(0) + " | " + s(1);
    case Op::Xor: return s(0) + " ^ " + s(1);
    case Op::Shl: return "(" + t + ")(" + s(0) + " << " + s(1) + ")";
    case Op::Shr: return s(0) + " >> " + s(1);
    case Op::Neg: return "-" + s(0);
    case Op::Max:
      if (d.isFloat()) // C's fmax returns the other operand of a NaN
        internalError("c renderer: float max reached the renderer (emulate-floats writes it with compares)");
      return s(0) + " > " + s(1) + " ? " + s(0) + " : " + s(1);
    case Op::Where: return s(0) + " ? " + s(1) + " : " + s(2);
    case Op::Mulacc: // floats: one rounding
      if (d.isFloat())
        return math("fma", d) + "(" + s(0) + ", " + s(1) + ", " + s(2) + ")";
      return s(0) + " * " + s(1) + " + " + s(2);
    case Op::Recip: return "(" + t + ")1 / " + s(0);
    case Op::Exp2: return math("exp2", d) + "(" + s(0) + ")";
    case Op::Log2: return math("log2", d) + "(" + s(0) + ")";
    case Op::Sin: return math("sin", d) + "(" + s(0) + ")";
    case Op::Sqrt: return math("sqrt", d) + "(" + s(0) + ")";
    case Op::Trunc: return math("trunc", d) + "(" + s(0) + ")";
    case Op::Pow: return math("pow", d) + "(" + s(0) + ", " + s(1) + ")";
    case Op::Cast:
      if (d.isBool())
        return s(0) + " != 0";
      return "(" + t + ")" + s(0);
    case Op::Bitcast: {
      // emulated 16-bit floats are floats: go through their bit patterns
      std::string from = bitsType(u->src(0)->dtype());
      std::string to = bitsType(d);
      std::string x = s(0);
      if (emulated(u->src(0)->dtype()))
        x = isBF16(u->src(0)->dtype()) ? "tgc_f32_to_bf16(" + x + ")" : "tgc_f32_to_f16_bits(" + x + ")";
      std::string y;
      if (d_.gpu) {
        y = "as_" + openclName(to) + "((" + openclName(from) + ")" + x + ")";
      } else {
        bitcasts_.insert({from, to});
        y = "tgc_bitcast_" + from + "_" + to + "(" + x + ")";
      }
      if (emulated(d))
        return isBF16(d) ? "tgc_bf16_to_f32(" + y + ")" : "tgc_f16_bits_to_f32(" + y + ")";
      return y;
    }
    default: internalError("c renderer: no C for '" + std::string(opName(u->op())) + "'");
    }
  }

  /// The integer or float type holding a value's bits for a bitcast (16-bit floats: uint16_t).
  std::string bitsType(DType d) const { return emulated(d) ? "uint16_t" : ctype(d); }

  static std::string openclName(const std::string &c) {
    static const std::pair<const char *, const char *> names[] = {
        {"int8_t", "char"}, {"uint8_t", "uchar"}, {"int16_t", "short"}, {"uint16_t", "ushort"},
        {"int32_t", "int"}, {"uint32_t", "uint"}, {"int64_t", "long"},  {"uint64_t", "ulong"}};
    for (const auto &[from, to] : names)
      if (c == from)
        return to;
    return c;
  }

  const UOp *linear_;
  const KernelInfo &info_;
  std::string fn_;
  const CDialect &d_;
  std::string body_;
  int depth_ = 0;
  int counter_ = 0;
  std::set<std::pair<std::string, std::string>> bitcasts_;
  std::unordered_map<const UOp *, std::string> names_;
  std::unordered_map<const UOp *, std::string> valid_;
};

} // namespace

std::string renderProgramOpenCL(const std::vector<OpenCLKernel> &kernels) {
  std::string bodies, helpers;
  for (const OpenCLKernel &k : kernels) {
    CKernel r(k.linear, *k.info, k.function, kOpenCLDialect);
    bodies += "\n" + r.body();
    if (helpers.empty())
      helpers = r.helpers();
  }
  if (helpers.empty())
    helpers = kOpenCLDialect.prelude;
  return helpers + bodies;
}

std::string renderKernelC(const UOp *linear, const KernelInfo &info, const std::string &function,
                          const CDialect &dialect) {
  for (const UOp *u : linear->src())
    if (u->dtype().isVector())
      internalError("the " + std::string(dialect.name) + " target got a vector " + u->dtype().str() +
                    " (devectorize should have split it)");
  return CKernel(linear, info, function, dialect).render();
}

} // namespace tgc
