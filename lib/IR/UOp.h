//===- UOp.h - The one node type of tgc, and its Context --------*- C++ -*-===//
// A UOp is an immutable {op, dtype, shape, src, arg, tag}; a Context interns them so equal nodes are one pointer.
//===----------------------------------------------------------------------===//
//
// Tensor-level nodes carry a shape (the tensor's static dimensions); kernel- and program-level nodes carry none.
// The shape is part of a node's identity: `reshape(%x) : f32[2, 8]` names its target shape by its own shape, so
// movement ops need no separate shape argument.
//
// Integer, index and bool nodes also carry a value range [vmin, vmax], computed once when the node is made from
// its operands' ranges (ValueRange.cpp). Symbolic simplification reads it; it is not part of the identity.

#pragma once

#include "IR/Arg.h"
#include "IR/DType.h"
#include "IR/Op.h"
#include "Support/Loc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace tgc {

class Context;
template <class V> class NodeIdMap;
using Shape = std::vector<int64_t>;

class UOp {
public:
  Op op() const { return op_; }
  DType dtype() const { return dtype_; }
  const Arg &arg() const { return arg_; }
  const Arg &tag() const { return tag_; }
  std::span<const UOp *const> src() const { return {src_, nsrc_}; }
  const UOp *src(size_t i) const { return src_[i]; }
  size_t numSrc() const { return nsrc_; }

  bool hasShape() const { return rank_ >= 0; }
  std::span<const int64_t> shape() const { return {shape_, size_t(rank_ < 0 ? 0 : rank_)}; }
  Shape shapeVec() const { return Shape(shape().begin(), shape().end()); }
  int rank() const { return rank_; }
  /// Number of elements of a shaped node (1 for rank 0).
  int64_t numel() const;
  /// The variable of each axis of a shaped node (its define_var, or null for a static axis), or empty when every
  /// axis is static. A variable axis's entry in shape() is the variable's upper bound (SymbolicDims.h).
  std::span<const UOp *const> dimVars() const { return {vars_, vars_ ? size_t(rank_) : 0}; }
  const UOp *dimVar(size_t axis) const { return vars_ ? vars_[axis] : nullptr; }
  bool hasDimVars() const { return vars_ != nullptr; }

  /// Deterministic structural hash: the same graph hashes the same on every run.
  uint64_t hash() const { return hash_; }
  /// Creation order inside the Context.
  uint32_t id() const { return id_; }
  Context &ctx() const { return *ctx_; }

  /// Value range; meaningful when hasRange().
  bool hasRange() const { return hasRange_; }
  int64_t vmin() const { return vmin_; }
  int64_t vmax() const { return vmax_; }

  bool isConst() const { return op_ == Op::Const; }
  /// True for a CONST whose value equals v (ints, bools and floats compared numerically).
  bool isConstValue(double v) const;
  /// Integer value of an int/bool CONST.
  int64_t constInt() const;
  /// Numeric value of any CONST.
  double constDouble() const;

  /// Total deterministic structural order (a < b), used for canonical operand order.
  static bool structuralLess(const UOp *a, const UOp *b);

private:
  friend class Context;
  UOp() = default;

  Op op_ = Op::Noop;
  DType dtype_;
  int32_t rank_ = -1;
  uint32_t nsrc_ = 0;
  uint32_t id_ = 0;
  bool hasRange_ = false;
  const UOp *const *src_ = nullptr;
  const int64_t *shape_ = nullptr;
  const UOp *const *vars_ = nullptr;
  Arg arg_;
  Arg tag_;
  uint64_t hash_ = 0;
  int64_t vmin_ = 0;
  int64_t vmax_ = 0;
  Context *ctx_ = nullptr;
};

/// Owns and interns every UOp of one compilation.
class Context {
public:
  Context();
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// The one node with these fields (made if new). The shape is the tensor shape, or nullopt for unshaped nodes.
  /// `dimVars` names the variable of each axis (null: static); left empty, it is derived from the operands
  /// (deriveDimVars), which is right for every op but `expand` to a variable and the leaves.
  const UOp *make(Op op, DType dtype, std::span<const UOp *const> src, const Arg &arg = {},
                  const std::optional<Shape> &shape = std::nullopt, const Arg &tag = {},
                  std::span<const UOp *const> dimVars = {});
  const UOp *make(Op op, DType dtype, std::initializer_list<const UOp *> src, const Arg &arg = {},
                  const std::optional<Shape> &shape = std::nullopt, const Arg &tag = {},
                  std::span<const UOp *const> dimVars = {}) {
    return make(op, dtype, std::span<const UOp *const>(src.begin(), src.size()), arg, shape, tag, dimVars);
  }

  /// Same node with some fields replaced; returns `u` itself when nothing changed.
  const UOp *withSrc(const UOp *u, std::span<const UOp *const> src);
  const UOp *withArg(const UOp *u, const Arg &arg);
  const UOp *withTag(const UOp *u, const Arg &tag);
  const UOp *withDType(const UOp *u, DType dtype);

  // --- builders that infer dtype and shape (internal errors on misuse) ---
  /// A constant; `value` is converted to the dtype (ints wrap, floats round).
  const UOp *constant(DType dtype, double value, const std::optional<Shape> &shape = std::nullopt);
  const UOp *constInt(DType dtype, int64_t value, const std::optional<Shape> &shape = std::nullopt);
  /// A constant with the same dtype and shape as `like`.
  const UOp *constLike(const UOp *like, double value);
  const UOp *constLikeInt(const UOp *like, int64_t value);
  const UOp *alu(Op op, std::initializer_list<const UOp *> src);
  const UOp *alu(Op op, std::span<const UOp *const> src);
  const UOp *cast(const UOp *x, DType to);

  /// Source location where a node was first written (parser) or made from (passes may copy it).
  void setLoc(const UOp *u, Loc loc);
  const Loc *loc(const UOp *u) const;

  size_t numNodes() const { return nodes_.size(); }

  /// The results of a pure function from this context's nodes to its nodes (one per `key`, e.g. a rewrite's
  /// matcher), kept as long as the context: repeated rewrites of shared subgraphs are looked up, not redone.
  NodeIdMap<const UOp *> &memo(const void *key);

private:
  const int64_t *internShape(const Shape &shape);
  const UOp *const *storeSrc(std::span<const UOp *const> src);
  void *allocate(size_t bytes, size_t align);

  /// The hash-consing table's slot for a node hash (Fibonacci hashing: the top bits of h times 2^64/phi).
  size_t slotOf(uint64_t h) const { return size_t((h * 0x9E3779B97F4A7C15ull) >> tableShift_); }
  void growTable();

  std::vector<UOp *> nodes_; // by id, placed in the chunks
  /// Every node by its hash: open addressing, linear probing, at most half full (nodes are never removed).
  /// Slot entry: the node's id + 1 in the low 32 bits (0: empty) and the top 32 bits of its hash above, so a probe
  /// passes other nodes without loading them.
  std::vector<uint64_t> table_;
  static uint64_t tableEntry(uint64_t hash, uint32_t id) { return (hash >> 32 << 32) | (uint64_t(id) + 1); }
  unsigned tableShift_ = 64;
  std::vector<std::unique_ptr<char[]>> chunks_;
  char *chunkPtr_ = nullptr;
  size_t chunkLeft_ = 0;
  size_t chunkSize_ = 64 * 1024; // the next chunk's size: doubles up to 1 MiB
  std::unordered_map<const UOp *, Loc> locs_;
  std::unordered_map<const void *, std::unique_ptr<NodeIdMap<const UOp *>>> memos_;
};

/// Every node reachable from `root`, operands before users, in a deterministic order (iterative, any depth).
std::vector<const UOp *> toposort(const UOp *root);
/// Whether `of` is `u` or reachable from it through operands (u is computed from of).
bool dependsOn(const UOp *u, const UOp *of);

/// Convert a double to a value representable in dtype `d` (ints wrap like C casts of in-range values, floats round
/// to nearest even, bool is != 0). Used by constant folding and by the builders.
double roundToDType(double v, DType d);
/// Wrap an integer to the width and signedness of `d` (two's complement).
int64_t wrapInt(int64_t v, DType d);

/// Internal compiler error: a bug in tgc, not in the input. Prints and aborts.
[[noreturn]] void internalError(const std::string &message);

} // namespace tgc
