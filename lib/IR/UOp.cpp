//===- UOp.cpp - The one node type of tgc, and its Context ------*- C++ -*-===//
// Interning, builders, topological order and dtype value conversion.
//===----------------------------------------------------------------------===//

#include "IR/UOp.h"

#include "IR/Infer.h"
#include "IR/NodeIdMap.h"
#include "IR/SymbolicDims.h"
#include "IR/ValueRange.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace tgc {

void internalError(const std::string &message) {
  std::fprintf(stderr, "tgc: internal error: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

int64_t UOp::numel() const {
  int64_t n = 1;
  for (int64_t d : shape())
    n *= d;
  return n;
}

bool UOp::isConstValue(double v) const {
  if (op_ != Op::Const)
    return false;
  return constDouble() == v;
}

int64_t UOp::constInt() const {
  if (arg_.isBool())
    return arg_.getBool();
  if (arg_.isInt())
    return arg_.getInt();
  internalError("constInt() on a non-integer const");
}

double UOp::constDouble() const {
  if (arg_.isBool())
    return arg_.getBool();
  if (arg_.isInt())
    return double(arg_.getInt());
  if (arg_.isFloat())
    return arg_.getFloat();
  internalError("constDouble() on a non-numeric const");
}

bool UOp::structuralLess(const UOp *a, const UOp *b) {
  // Iterative lexicographic comparison of (op, dtype, arg, shape, hash, srcs). Hash first keeps it cheap; full
  // comparison only on hash collisions between different nodes.
  while (a != b) {
    if (a->op_ != b->op_)
      return a->op_ < b->op_;
    if (a->dtype_ != b->dtype_)
      return a->dtype_.bitsKey() < b->dtype_.bitsKey();
    if (int c = Arg::compare(a->arg_, b->arg_))
      return c < 0;
    if (a->hash_ != b->hash_)
      return a->hash_ < b->hash_;
    if (a->rank_ != b->rank_)
      return a->rank_ < b->rank_;
    for (int i = 0; i < a->rank_; ++i)
      if (a->shape_[i] != b->shape_[i])
        return a->shape_[i] < b->shape_[i];
    for (int i = 0; i < a->rank_ && (a->vars_ || b->vars_); ++i)
      if (a->dimVar(size_t(i)) != b->dimVar(size_t(i)))
        return a->dimVar(size_t(i)) == nullptr ||
               (b->dimVar(size_t(i)) != nullptr && a->dimVar(size_t(i))->id() < b->dimVar(size_t(i))->id());
    if (a->nsrc_ != b->nsrc_)
      return a->nsrc_ < b->nsrc_;
    size_t i = 0;
    while (i < a->nsrc_ && a->src_[i] == b->src_[i])
      ++i;
    if (i == a->nsrc_)
      return Arg::compare(a->tag_, b->tag_) < 0;
    a = a->src_[i];
    b = b->src_[i];
  }
  return false;
}

// --- Context ------------------------------------------------------------------------------------------------------

Context::Context() = default;
Context::~Context() {
  for (UOp *u : nodes_)
    u->~UOp();
}

void *Context::allocate(size_t bytes, size_t align) {
  size_t pad = (align - reinterpret_cast<uintptr_t>(chunkPtr_) % align) % align;
  if (chunkPtr_ == nullptr || pad + bytes > chunkLeft_) {
    size_t size = std::max(bytes + align, chunkSize_);
    chunkSize_ = std::min<size_t>(2 * chunkSize_, 1024 * 1024);
    chunks_.push_back(std::unique_ptr<char[]>(new char[size])); // not zeroed: pages are touched as they are used
    chunkPtr_ = chunks_.back().get();
    chunkLeft_ = size;
    pad = (align - reinterpret_cast<uintptr_t>(chunkPtr_) % align) % align;
  }
  char *p = chunkPtr_ + pad;
  chunkPtr_ = p + bytes;
  chunkLeft_ -= pad + bytes;
  return p;
}

const int64_t *Context::internShape(const Shape &shape) {
  if (shape.empty())
    return nullptr;
  auto *p = static_cast<int64_t *>(allocate(shape.size() * sizeof(int64_t), alignof(int64_t)));
  std::memcpy(p, shape.data(), shape.size() * sizeof(int64_t));
  return p;
}

const UOp *const *Context::storeSrc(std::span<const UOp *const> src) {
  if (src.empty())
    return nullptr;
  auto *p = static_cast<const UOp **>(allocate(src.size() * sizeof(UOp *), alignof(UOp *)));
  std::memcpy(p, src.data(), src.size() * sizeof(UOp *));
  return p;
}

static uint64_t nodeHash(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg,
                         const std::optional<Shape> &shape, const Arg &tag, std::span<const UOp *const> vars) {
  uint64_t h = hashCombine(uint64_t(op), dtype.bitsKey());
  h = hashCombine(h, arg.hash());
  h = hashCombine(h, tag.hash());
  if (shape) {
    h = hashCombine(h, shape->size() + 1);
    for (int64_t d : *shape)
      h = hashCombine(h, uint64_t(d));
  }
  for (const UOp *s : src)
    h = hashCombine(h, s->hash());
  for (const UOp *v : vars)
    h = hashCombine(h, v ? v->hash() : 0x9e37);
  return h;
}

static bool sameNode(const UOp *u, Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg,
                     const std::optional<Shape> &shape, const Arg &tag, std::span<const UOp *const> vars) {
  if (u->op() != op || u->dtype() != dtype || u->numSrc() != src.size())
    return false;
  if (!std::equal(vars.begin(), vars.end(), u->dimVars().begin(), u->dimVars().end()))
    return false;
  if (u->hasShape() != shape.has_value())
    return false;
  if (shape && !std::equal(shape->begin(), shape->end(), u->shape().begin(), u->shape().end()))
    return false;
  for (size_t i = 0; i < src.size(); ++i)
    if (u->src(i) != src[i])
      return false;
  return u->arg() == arg && u->tag() == tag;
}

const UOp *Context::make(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg,
                         const std::optional<Shape> &shape, const Arg &tag, std::span<const UOp *const> dimVars) {
  for (const UOp *s : src)
    if (s == nullptr || &s->ctx() != this)
      internalError(std::string("operand of '") + std::string(opName(op)) + "' is null or from another context");
  std::vector<const UOp *> derived;
  if (dimVars.empty() && shape)
    derived = deriveDimVars(op, src, arg, *shape);
  else if (!shape || std::all_of(dimVars.begin(), dimVars.end(), [](const UOp *v) { return v == nullptr; }))
    dimVars = {};
  std::span<const UOp *const> vars = dimVars.empty() ? std::span<const UOp *const>(derived) : dimVars;
  if (!vars.empty() && vars.size() != shape->size())
    internalError(std::string("'") + std::string(opName(op)) + "': one dimension variable per axis expected");
  uint64_t h = nodeHash(op, dtype, src, arg, shape, tag, vars);
  if (2 * (nodes_.size() + 1) > table_.size())
    growTable();
  size_t mask = table_.size() - 1, slot = slotOf(h);
  for (; table_[slot]; slot = (slot + 1) & mask) {
    if (table_[slot] >> 32 != h >> 32)
      continue;
    const UOp *c = nodes_[uint32_t(table_[slot]) - 1];
    if (c->hash_ == h && sameNode(c, op, dtype, src, arg, shape, tag, vars))
      return c;
  }
  if (nodes_.size() >= UINT32_MAX) // ids are 32 bits, and the table stores id + 1
    internalError("more than 2^32 - 1 nodes in one context");
  UOp &u = *new (allocate(sizeof(UOp), alignof(UOp))) UOp();
  nodes_.push_back(&u);
  u.op_ = op;
  u.dtype_ = dtype;
  u.nsrc_ = uint32_t(src.size());
  u.src_ = storeSrc(src);
  u.rank_ = shape ? int32_t(shape->size()) : -1;
  u.shape_ = shape ? internShape(*shape) : nullptr;
  u.vars_ = storeSrc(vars);
  u.arg_ = arg;
  u.tag_ = tag;
  u.hash_ = h;
  u.id_ = uint32_t(nodes_.size() - 1);
  u.ctx_ = this;
  ValueRange r = computeRange(&u);
  u.hasRange_ = r.known;
  u.vmin_ = r.lo;
  u.vmax_ = r.hi;
  table_[slot] = tableEntry(h, u.id_);
  return &u;
}

void Context::growTable() {
  table_.assign(std::max<size_t>(1024, 2 * table_.size()), 0);
  tableShift_ = 64 - unsigned(std::countr_zero(table_.size()));
  size_t mask = table_.size() - 1;
  for (const UOp *u : nodes_) {
    size_t slot = slotOf(u->hash_);
    while (table_[slot])
      slot = (slot + 1) & mask;
    table_[slot] = tableEntry(u->hash_, u->id_);
  }
}

NodeIdMap<const UOp *> &Context::memo(const void *key) {
  std::unique_ptr<NodeIdMap<const UOp *>> &m = memos_[key];
  if (!m)
    m = std::make_unique<NodeIdMap<const UOp *>>();
  return *m;
}

static std::optional<Shape> shapeOf(const UOp *u) {
  if (!u->hasShape())
    return std::nullopt;
  return u->shapeVec();
}

const UOp *Context::withSrc(const UOp *u, std::span<const UOp *const> src) {
  if (src.size() == u->numSrc() && std::equal(src.begin(), src.end(), u->src().begin()))
    return u;
  return make(u->op(), u->dtype(), src, u->arg(), shapeOf(u), u->tag(), u->dimVars());
}

const UOp *Context::withArg(const UOp *u, const Arg &arg) {
  if (arg == u->arg())
    return u;
  return make(u->op(), u->dtype(), u->src(), arg, shapeOf(u), u->tag(), u->dimVars());
}

const UOp *Context::withTag(const UOp *u, const Arg &tag) {
  if (tag == u->tag())
    return u;
  return make(u->op(), u->dtype(), u->src(), u->arg(), shapeOf(u), tag, u->dimVars());
}

const UOp *Context::withDType(const UOp *u, DType dtype) {
  if (dtype == u->dtype())
    return u;
  return make(u->op(), dtype, u->src(), u->arg(), shapeOf(u), u->tag(), u->dimVars());
}

static Arg constArg(DType dtype, double value) {
  DType e = dtype.element();
  if (e.isBool())
    return Arg(value != 0);
  if (e.isInt())
    return Arg(int64_t(roundToDType(value, e)));
  return Arg(roundToDType(value, e));
}

const UOp *Context::constant(DType dtype, double value, const std::optional<Shape> &shape) {
  return make(Op::Const, dtype, {}, constArg(dtype, value), shape);
}

const UOp *Context::constInt(DType dtype, int64_t value, const std::optional<Shape> &shape) {
  DType e = dtype.element();
  if (e.isBool())
    return make(Op::Const, dtype, {}, Arg(value != 0), shape);
  if (e.isInt())
    return make(Op::Const, dtype, {}, Arg(wrapInt(value, e)), shape);
  return make(Op::Const, dtype, {}, Arg(roundToDType(double(value), e)), shape);
}

const UOp *Context::constLike(const UOp *like, double value) {
  return make(Op::Const, like->dtype(), {}, constArg(like->dtype(), value), shapeOf(like), {}, like->dimVars());
}

const UOp *Context::constLikeInt(const UOp *like, int64_t value) {
  const UOp *c = constInt(like->dtype(), value);
  return make(Op::Const, like->dtype(), {}, c->arg(), shapeOf(like), {}, like->dimVars());
}

const UOp *Context::alu(Op op, std::initializer_list<const UOp *> src) {
  return alu(op, std::span<const UOp *const>(src.begin(), src.size()));
}

const UOp *Context::alu(Op op, std::span<const UOp *const> src) {
  std::string err;
  std::optional<DType> dtype = inferDType(op, src, Arg(), err);
  if (!dtype)
    internalError("alu: " + err);
  auto shaped = [](const UOp *s) { return s->hasShape(); };
  if (group::elementwise().contains(op) && std::none_of(src.begin(), src.end(), shaped)) // kernel arithmetic
    return make(op, *dtype, src);
  InferredShape shape = inferShape(op, *dtype, src, Arg(), std::nullopt);
  if (!shape.error.empty())
    internalError("alu: " + shape.error);
  return make(op, *dtype, src, Arg(), shape.shape);
}

const UOp *Context::cast(const UOp *x, DType to) {
  if (x->dtype() == to)
    return x;
  return make(Op::Cast, to, {x}, Arg(), shapeOf(x));
}

void Context::setLoc(const UOp *u, Loc loc) { locs_.emplace(u, std::move(loc)); }

const Loc *Context::loc(const UOp *u) const {
  auto it = locs_.find(u);
  return it == locs_.end() ? nullptr : &it->second;
}

// --- graph walking ------------------------------------------------------------------------------------------------

std::vector<const UOp *> toposort(const UOp *root) {
  ScratchNodeIdMap<uint8_t> seen(root->ctx()); // visit marks
  std::vector<const UOp *> order;
  std::vector<std::pair<const UOp *, size_t>> stack;
  stack.emplace_back(root, 0);
  seen->insert(root, 1);
  while (!stack.empty()) {
    auto &[u, next] = stack.back();
    if (next < u->numSrc()) {
      const UOp *s = u->src(next++);
      if (seen->insert(s, 1).second)
        stack.emplace_back(s, 0);
      continue;
    }
    order.push_back(u);
    stack.pop_back();
  }
  return order;
}

bool dependsOn(const UOp *u, const UOp *of) {
  for (const UOp *n : toposort(u))
    if (n == of)
      return true;
  return false;
}

// --- dtype value conversion ---------------------------------------------------------------------------------------

int64_t wrapInt(int64_t v, DType d) {
  if (d.isBool())
    return v != 0;
  int bits = d.bits();
  if (bits >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = uint64_t(v) & mask;
  if (d.isSigned() && (u >> (bits - 1)) & 1)
    u |= ~mask;
  return int64_t(u);
}

/// Round to a binary float format with `p` significand bits, minimum normal exponent `emin` and largest finite
/// value `maxFinite`, directly from double (no double rounding), round to nearest even.
static double roundToFormat(double v, int p, int emin, double maxFinite) {
  if (std::isnan(v) || std::isinf(v) || v == 0)
    return v;
  int e = std::ilogb(v);
  if (e < emin)
    e = emin;
  double scaled = std::ldexp(v, p - 1 - e);
  double r = std::nearbyint(scaled);
  double out = std::ldexp(r, e - (p - 1));
  if (std::fabs(out) > maxFinite)
    return std::copysign(std::numeric_limits<double>::infinity(), v);
  return out;
}

double roundToDType(double v, DType d) {
  switch (d.scalar()) {
  case Scalar::Bool: return v != 0;
  case Scalar::F64: return v;
  case Scalar::F32: return roundToFormat(v, 24, -126, 3.40282346638528859811704183484516925440e38);
  case Scalar::F16: return roundToFormat(v, 11, -14, 65504.0);
  case Scalar::BF16: return roundToFormat(v, 8, -126, 3.38953138925153547590470800371487866880e38);
  default: break;
  }
  if (d.isInt()) {
    if (std::isnan(v))
      return 0;
    double t = std::trunc(v);
    // Out-of-range conversions are undefined in C; clamp to the int64 range before wrapping so this is total.
    if (t >= 9223372036854775807.0)
      return double(wrapInt(std::numeric_limits<int64_t>::max(), d));
    if (t <= -9223372036854775808.0)
      return double(wrapInt(std::numeric_limits<int64_t>::min(), d));
    return double(wrapInt(int64_t(t), d));
  }
  return v;
}

} // namespace tgc
