//===- Rewrite.h - graph_rewrite: apply a PatternMatcher to a graph -*- C++ -*-===//
// Rewrites every node of a graph to a fixed point, without recursion, with a step limit that names the rule.
//===----------------------------------------------------------------------===//
//
// Two orders, as in tinygrad's graph_rewrite:
//  - RewriteOrder::OperandsFirst (tinygrad's default): a node's operands are rewritten first, the node is rebuilt
//    on the new operands, then the matcher is applied to it; whatever it becomes is rewritten the same way, so the
//    result is a fixed point of the matcher at every node.
//  - RewriteOrder::NodeFirst (tinygrad's bottom_up=True): the matcher is applied to a node until it no longer
//    matches, before its operands are visited; then the operands of the result are rewritten. Useful when a rule
//    must see the original operands (e.g. to stop a walk, or to rewrite a whole subgraph at once).
// Both memoize per call: each distinct node is rewritten once.

#pragma once

#include "IR/Pattern.h"

#include <cstdint>
#include <functional>

namespace tgc {

enum class RewriteOrder : uint8_t { OperandsFirst, NodeFirst };

struct RewriteOptions {
  RewriteOrder order = RewriteOrder::OperandsFirst;
  void *user = nullptr; // passed to callbacks as Match::user<T>()
  /// Stop with an internal error after this many successful rewrites in one call.
  uint64_t maxRewrites = 10'000'000;
  /// Stop with an internal error when one node is rewritten this many times in a chain.
  uint32_t maxChain = 10'000;
  /// What earlier rewrites with the same matcher and options made of each node they finished; read and extended.
  /// Only for matchers whose rules look at nothing but the node (no `user`): a node's result is then the same in
  /// every call. Context::memo keeps one per matcher. A call also marks in it the nodes it is rewriting, so a rule
  /// must not start another rewrite with the same memo (no simplify rule calls simplifyExpression).
  NodeIdMap<const UOp *> *memo = nullptr;
};

const UOp *graphRewrite(const UOp *root, const PatternMatcher &pm, const RewriteOptions &opts = {});

/// Replace nodes by the given map everywhere in the graph (keys are replaced, then users rebuilt).
const UOp *substitute(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map);

/// Replace nodes one at a time, walking the graph again after each replacement, so that a node whose operands hold
/// another replaced node is rebuilt from the replacement: `replace(u)` returns u's replacement, or nullptr to keep
/// u. Adds the number of replacements to `count`. (For rewrites that build new nodes from a node's operands, where
/// substitute would rebuild the operands but not the replacement.)
const UOp *substituteOneByOne(const UOp *root, const std::function<const UOp *(const UOp *)> &replace, int64_t &count);

} // namespace tgc
