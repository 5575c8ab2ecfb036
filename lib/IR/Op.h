//===- Op.h - The op enum, its names, groups and properties -----*- C++ -*-===//
// Everything here is generated from Ops.def; nothing about an individual op is written twice.
//===----------------------------------------------------------------------===//

#pragma once

#include <bitset>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace tgc {

enum class Op : uint8_t {
#define TGC_OP(Enum, text, arity, group, flags) Enum,
#include "IR/Ops.def"
};

constexpr int kNumOps = 0
#define TGC_OP(Enum, text, arity, group, flags) +1
#include "IR/Ops.def"
    ;

enum class OpGroup : uint8_t {
  Meta,
  Leaf,
  Movement,
  Unary,
  Binary,
  Ternary,
  Cast,
  Reduce,
  Define,
  Memory,
  Control,
  Program,
  Composite
};

/// Property bits of the flags column of Ops.def.
namespace opflag {
enum : uint32_t {
  Comm = 1u << 0,
  Assoc = 1u << 1,
  Idem = 1u << 2,
  T = 1u << 3, // allowed in tensor graphs
  K = 1u << 4, // allowed in kernel graphs
  P = 1u << 5, // allowed in programs
  Flt = 1u << 6,  // operands and result are floats (the verifier checks it)
  Int = 1u << 7,  // operands and result are integers
  Bits = 1u << 8, // bitwise: integers or bools
  Cost = 1u << 9, // costly enough that recomputing it per iteration of an inner loop is worse than a buffer
};
} // namespace opflag

std::string_view opName(Op op);
std::optional<Op> opFromName(std::string_view text);
/// Number of operands, or -1 when it varies.
int opArity(Op op);
OpGroup opGroup(Op op);
uint32_t opFlags(Op op);

inline bool isCommutative(Op op) { return opFlags(op) & opflag::Comm; }
inline bool isAssociative(Op op) { return opFlags(op) & opflag::Assoc; }
inline bool isIdempotent(Op op) { return opFlags(op) & opflag::Idem; }
inline bool isFloatOnly(Op op) { return opFlags(op) & opflag::Flt; }
inline bool isIntOnly(Op op) { return opFlags(op) & opflag::Int; }
inline bool isBitwise(Op op) { return opFlags(op) & opflag::Bits; }
inline bool isCostly(Op op) { return opFlags(op) & opflag::Cost; }

/// A set of ops, used by patterns and by the verifier.
class OpSet {
public:
  OpSet() = default;
  OpSet(std::initializer_list<Op> ops) {
    for (Op o : ops)
      bits_.set(size_t(o));
  }
  static OpSet ofGroup(OpGroup g);
  static OpSet withFlag(uint32_t flag);

  bool contains(Op o) const { return bits_.test(size_t(o)); }
  void insert(Op o) { bits_.set(size_t(o)); }
  bool empty() const { return bits_.none(); }
  /// Whether every op of `o` is in this set.
  bool containsAll(const OpSet &o) const { return (o.bits_ & ~bits_).none(); }
  OpSet operator|(const OpSet &o) const {
    OpSet r;
    r.bits_ = bits_ | o.bits_;
    return r;
  }
  template <typename F> void forEach(F f) const {
    for (int i = 0; i < kNumOps; ++i)
      if (bits_.test(size_t(i)))
        f(Op(i));
  }

private:
  std::bitset<kNumOps> bits_;
};

/// tinygrad's GroupOp sets.
namespace group {
const OpSet &unary();
const OpSet &binary();
const OpSet &ternary();
/// Unary, binary and ternary arithmetic.
const OpSet &alu();
/// ALU plus casts: ops that act on each element independently.
const OpSet &elementwise();
const OpSet &movement();
const OpSet &comparison();
const OpSet &composite();
} // namespace group

} // namespace tgc
