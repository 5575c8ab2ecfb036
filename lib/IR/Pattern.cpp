//===- Pattern.cpp - UPat, rules and the PatternMatcher ---------*- C++ -*-===//
// Backtracking matcher with per-root-op dispatch and early rejection on operand ops.
//===----------------------------------------------------------------------===//

#include "IR/Pattern.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <spdlog/spdlog.h>

namespace tgc {

bool dclassAccepts(DClass c, DType d) {
  switch (c) {
  case DClass::Any: return true;
  case DClass::Int: return d.isInt();
  case DClass::Float: return d.isFloat();
  case DClass::Bool: return d.isBool();
  case DClass::IntOrBool: return d.isInt() || d.isBool();
  case DClass::NotFloat: return !d.isFloat();
  }
  return false;
}

// --- UPat ---------------------------------------------------------------------------------------------------------

UPat::UPat(OpSet ops, std::vector<UPat> src, const char *name)
    : ops_(ops), srcMode_(SrcMode::Exact), src_(std::move(src)), name_(name) {}

UPat UPat::var(const char *name, DClass dclass) {
  UPat p;
  p.name_ = name;
  p.dclass_ = dclass;
  return p;
}

UPat UPat::cvar(const char *name, DClass dclass) {
  UPat p;
  p.ops_ = OpSet{Op::Const};
  p.name_ = name;
  p.dclass_ = dclass;
  return p;
}

UPat UPat::cnst(double value, DClass dclass) {
  UPat p;
  p.ops_ = OpSet{Op::Const};
  p.constValue_ = value;
  p.dclass_ = dclass;
  return p;
}

UPat UPat::cnstExact(double value) {
  UPat p = cnst(value);
  p.constExact_ = true;
  return p;
}

UPat UPat::op(Op op, std::vector<UPat> src, const char *name) { return UPat(OpSet{op}, std::move(src), name); }

UPat UPat::any(OpSet ops, const char *name) {
  UPat p;
  p.ops_ = ops;
  p.name_ = name;
  return p;
}

UPat &UPat::named(const char *name) {
  name_ = name;
  return *this;
}

UPat &UPat::dclass(DClass c) {
  dclass_ = c;
  return *this;
}

UPat &UPat::withArg(Arg arg) {
  arg_ = std::move(arg);
  return *this;
}

UPat &UPat::repeatSrc(UPat p) {
  src_ = {std::move(p)};
  srcMode_ = SrcMode::Repeat;
  return *this;
}

UPat &UPat::allowAnyLen() {
  anyLen_ = true;
  return *this;
}

// --- Match --------------------------------------------------------------------------------------------------------

const UOp *Match::operator[](const char *name) const {
  for (int i = 0; i < n_; ++i)
    if (names_[i] == name || std::strcmp(names_[i], name) == 0)
      return nodes_[i];
  internalError(std::string("pattern callback asked for unbound name '") + name + "'");
}

bool Match::bind(const char *name, const UOp *u) {
  for (int i = 0; i < n_; ++i)
    if (names_[i] == name || std::strcmp(names_[i], name) == 0)
      return nodes_[i] == u;
  if (n_ == kMaxBindings)
    internalError("pattern binds too many names");
  names_[n_] = name;
  nodes_[n_] = u;
  ++n_;
  return true;
}

// --- matching -----------------------------------------------------------------------------------------------------

static bool constMatches(const UPat &p, double want, bool exact, const UOp *u) {
  (void)p;
  if (u->op() != Op::Const || u->dtype().isVector())
    return false;
  const Arg &a = u->arg();
  if (exact)
    return a.isFloat() && std::bit_cast<uint64_t>(a.getFloat()) == std::bit_cast<uint64_t>(want);
  if (!a.isInt() && !a.isFloat() && !a.isBool())
    return false;
  return u->constDouble() == want;
}

struct Matcher {
  static bool node(const UPat &p, const UOp *u, Match &m) {
    if (!p.ops_.empty() && !p.ops_.contains(u->op()))
      return false;
    if (!dclassAccepts(p.dclass_, u->dtype()))
      return false;
    if (p.constValue_ && !constMatches(p, *p.constValue_, p.constExact_, u))
      return false;
    if (p.arg_ && !(*p.arg_ == u->arg()))
      return false;
    int mark = m.size();
    if (p.name_ && !m.bind(p.name_, u))
      return false;
    if (srcs(p, u, m))
      return true;
    m.truncate(mark);
    return false;
  }

  static bool srcs(const UPat &p, const UOp *u, Match &m) {
    switch (p.srcMode_) {
    case UPat::SrcMode::Any: return true;
    case UPat::SrcMode::Repeat:
      for (const UOp *s : u->src())
        if (!node(p.src_[0], s, m))
          return false;
      return true;
    case UPat::SrcMode::Exact: break;
    }
    size_t n = p.src_.size();
    if (u->numSrc() < n || (!p.anyLen_ && u->numSrc() != n))
      return false;
    if (ordered(p, u, m, 0, 1))
      return true;
    // commutative binary ops: try the swapped order
    if (n == 2 && isCommutative(u->op()) && u->src(0) != u->src(1))
      return ordered(p, u, m, 1, 0);
    return false;
  }

  static bool ordered(const UPat &p, const UOp *u, Match &m, size_t first, size_t second) {
    int mark = m.size();
    size_t n = p.src_.size();
    for (size_t i = 0; i < n; ++i) {
      size_t j = n == 2 ? (i == 0 ? first : second) : i;
      if (!node(p.src_[i], u->src(j), m)) {
        m.truncate(mark);
        return false;
      }
    }
    return true;
  }
};

bool matchPattern(const UPat &p, const UOp *u, Match &m) { return Matcher::node(p, u, m); }

// --- PatternMatcher -----------------------------------------------------------------------------------------------

static std::vector<const PatternMatcher *> &registry() {
  static std::vector<const PatternMatcher *> r;
  return r;
}

const std::vector<const PatternMatcher *> &PatternMatcher::all() { return registry(); }

/// Ops an operand must have for the pattern to match, when every order of the operands needs them.
static OpSet requiredChildren(const UPat &p) {
  OpSet req;
  if (p.src().size() > 2 || p.src().empty())
    return req;
  for (const UPat &c : p.src()) {
    int count = 0;
    Op only = Op::Noop;
    c.ops().forEach([&](Op o) {
      ++count;
      only = o;
    });
    if (count == 1)
      req = req | OpSet{only};
  }
  return req;
}

PatternMatcher::PatternMatcher(const char *name, std::vector<Rule> rules, bool preservesTypes)
    : name_(name), preservesTypes_(preservesTypes), rules_(std::move(rules)), byOp_(kNumOps), stats_(rules_.size()) {
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    const UPat &p = rules_[i].pat;
    requiredChildOps_.push_back(requiredChildren(p));
    for (int o = 0; o < kNumOps; ++o)
      if (p.ops().empty() || p.ops().contains(Op(o)))
        byOp_[o].push_back(i);
  }
  registry().push_back(this);
}

PatternMatcher::~PatternMatcher() {
  auto &r = registry();
  r.erase(std::remove(r.begin(), r.end(), this), r.end());
}

void PatternMatcher::resetStats() {
  for (RuleStats &s : stats_)
    s = {};
}

/// The ops of u's operands.
static OpSet childOps(const UOp *u) {
  OpSet ops;
  for (const UOp *s : u->src())
    ops.insert(s->op());
  return ops;
}

static bool sameType(const UOp *a, const UOp *b) {
  if (a->dtype() != b->dtype() || a->hasShape() != b->hasShape())
    return false;
  return std::equal(a->shape().begin(), a->shape().end(), b->shape().begin(), b->shape().end());
}

const UOp *PatternMatcher::rewrite(const UOp *u, void *user) const {
  const std::vector<uint32_t> &candidates = byOp_[size_t(u->op())];
  if (candidates.empty())
    return nullptr;
  Match m;
  OpSet present = childOps(u);
  for (uint32_t i : candidates) {
    if (!present.containsAll(requiredChildOps_[i]))
      continue;
    m.reset(u, user);
    if (!matchPattern(rules_[i].pat, u, m))
      continue;
    ++stats_[i].tries;
    const UOp *r = rules_[i].fn(m);
    if (r && preservesTypes_ && !sameType(r, u))
      r = nullptr;
    if (r && r != u) {
      ++stats_[i].hits;
      if (spdlog::should_log(spdlog::level::debug))
        spdlog::debug("{}: {}  [{}:{}]", name_, rules_[i].identity, rules_[i].where.file_name(),
                      rules_[i].where.line());
      last_ = &rules_[i];
      return r;
    }
  }
  return nullptr;
}

} // namespace tgc
