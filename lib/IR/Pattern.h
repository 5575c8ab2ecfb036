//===- Pattern.h - UPat, rules and the PatternMatcher -----------*- C++ -*-===//
// Patterns over UOps written as math (x + 0, x * c), grouped into rule tables indexed by root op.
//===----------------------------------------------------------------------===//
//
// A rule is {pattern, callback, identity}. The identity string ("x+0 -> x") is the rule's documentation and its
// name in statistics and traces. A callback receives the Match (the named nodes) and returns the replacement, or
// nullptr to decline. Commutative ops match their operands in either order, so a table needs `x + 0` only once.

#pragma once

#include "IR/UOp.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace tgc {

/// Which dtypes a pattern accepts.
enum class DClass : uint8_t { Any, Int, Float, Bool, IntOrBool, NotFloat };

bool dclassAccepts(DClass c, DType d);

class UPat {
public:
  enum class SrcMode : uint8_t { Any, Exact, Repeat };

  UPat() = default;
  /// A node with one of `ops` (empty: any op) and these operands in order (commutative ops: either order).
  UPat(OpSet ops, std::vector<UPat> src = {}, const char *name = nullptr);

  /// Any node, bound to `name`.
  static UPat var(const char *name, DClass dclass = DClass::Any);
  /// Any CONST, bound to `name`.
  static UPat cvar(const char *name, DClass dclass = DClass::Any);
  /// A CONST equal to `value` (numerically: 0 matches 0, 0.0, -0.0 and false).
  static UPat cnst(double value, DClass dclass = DClass::Any);
  /// A CONST whose float bit pattern is exactly `value` (so -0.0 is not 0.0).
  static UPat cnstExact(double value);
  /// Node of op `op` with operands `src`.
  static UPat op(Op op, std::vector<UPat> src = {}, const char *name = nullptr);
  /// Node of any op in `ops`, any operands.
  static UPat any(OpSet ops, const char *name = nullptr);

  UPat &named(const char *name);
  UPat &dclass(DClass c);
  UPat &withArg(Arg arg);
  /// Operands: any number, all matching `p`.
  UPat &repeatSrc(UPat p);
  /// Operands: at least these, more allowed.
  UPat &allowAnyLen();

  // Matching builders that read as math. `x + 0` matches ADD(x, CONST 0) in either order.
  friend UPat operator+(UPat a, UPat b) { return binary(Op::Add, a, b); }
  friend UPat operator-(UPat a, UPat b) { return binary(Op::Sub, a, b); }
  friend UPat operator*(UPat a, UPat b) { return binary(Op::Mul, a, b); }
  friend UPat operator/(UPat a, UPat b) { return binary(Op::Idiv, a, b); }
  friend UPat operator%(UPat a, UPat b) { return binary(Op::Mod, a, b); }
  friend UPat operator<(UPat a, UPat b) { return binary(Op::Cmplt, a, b); }
  friend UPat operator&(UPat a, UPat b) { return binary(Op::And, a, b); }
  friend UPat operator|(UPat a, UPat b) { return binary(Op::Or, a, b); }
  friend UPat operator^(UPat a, UPat b) { return binary(Op::Xor, a, b); }
  friend UPat operator+(UPat a, double b) { return binary(Op::Add, a, cnst(b)); }
  friend UPat operator-(UPat a, double b) { return binary(Op::Sub, a, cnst(b)); }
  friend UPat operator*(UPat a, double b) { return binary(Op::Mul, a, cnst(b)); }
  friend UPat operator/(UPat a, double b) { return binary(Op::Idiv, a, cnst(b)); }
  friend UPat operator%(UPat a, double b) { return binary(Op::Mod, a, cnst(b)); }
  friend UPat operator&(UPat a, double b) { return binary(Op::And, a, cnst(b)); }
  friend UPat operator|(UPat a, double b) { return binary(Op::Or, a, cnst(b)); }
  friend UPat operator^(UPat a, double b) { return binary(Op::Xor, a, cnst(b)); }
  static UPat binary(Op op, UPat a, UPat b) { return UPat::op(op, {std::move(a), std::move(b)}); }

  // Introspection, used by the matcher.
  const OpSet &ops() const { return ops_; }
  const std::vector<UPat> &src() const { return src_; }
  const char *name() const { return name_; }

private:
  friend class PatternMatcher;
  friend struct Matcher;

  OpSet ops_;
  DClass dclass_ = DClass::Any;
  SrcMode srcMode_ = SrcMode::Any;
  bool anyLen_ = false;
  std::optional<Arg> arg_;
  std::optional<double> constValue_;
  bool constExact_ = false;
  std::vector<UPat> src_;
  const char *name_ = nullptr;
};

/// The nodes a pattern bound, by name; plus the user context of the rewrite.
class Match {
public:
  static constexpr int kMaxBindings = 12;

  const UOp *operator[](const char *name) const;
  /// The node the whole pattern matched.
  const UOp *root() const { return root_; }
  Context &ctx() const { return root_->ctx(); }
  template <typename T> T &user() const { return *static_cast<T *>(user_); }

  // Used by the matcher.
  bool bind(const char *name, const UOp *u);
  int size() const { return n_; }
  void truncate(int n) { n_ = n; }
  void reset(const UOp *root, void *user) {
    root_ = root;
    user_ = user;
    n_ = 0;
  }

private:
  const char *names_[kMaxBindings] = {};
  const UOp *nodes_[kMaxBindings] = {};
  int n_ = 0;
  const UOp *root_ = nullptr;
  void *user_ = nullptr;
};

using RewriteFn = const UOp *(*)(const Match &);

struct Rule {
  UPat pat;
  RewriteFn fn;
  const char *identity;
  std::source_location where;

  Rule(UPat p, RewriteFn f, const char *id, std::source_location w = std::source_location::current())
      : pat(std::move(p)), fn(f), identity(id), where(w) {}
};

/// Per-rule statistics of one PatternMatcher.
struct RuleStats {
  uint64_t tries = 0;
  uint64_t hits = 0;
};

class PatternMatcher {
public:
  /// `preservesTypes`: a rewrite whose result differs from the node in dtype or shape is declined (the rule does not
  /// apply there). Simplification tables set it, so `x + 0 -> x` cannot change a broadcast's shape.
  PatternMatcher(const char *name, std::vector<Rule> rules, bool preservesTypes = false);
  PatternMatcher(const PatternMatcher &) = delete;
  ~PatternMatcher();

  /// The first rule (in table order) that matches `u` and whose callback returns a different node, or nullptr.
  const UOp *rewrite(const UOp *u, void *user = nullptr) const;
  /// The rule that produced the last successful rewrite (for diagnostics).
  const Rule *lastRule() const { return last_; }

  const char *name() const { return name_; }
  const std::vector<Rule> &rules() const { return rules_; }
  const std::vector<RuleStats> &stats() const { return stats_; }
  void resetStats();

  /// Every PatternMatcher that exists (for --stats).
  static const std::vector<const PatternMatcher *> &all();

private:
  const char *name_;
  bool preservesTypes_;
  std::vector<Rule> rules_;
  std::vector<std::vector<uint32_t>> byOp_; // rule indices per root op, in table order
  std::vector<OpSet> requiredChildOps_;     // early reject: each of these must be an operand's op
  mutable std::vector<RuleStats> stats_;
  mutable const Rule *last_ = nullptr;
};

/// True if pattern `p` matches `u`, filling `m`.
bool matchPattern(const UPat &p, const UOp *u, Match &m);

} // namespace tgc
