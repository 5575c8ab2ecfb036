//===- Rewrite.cpp - graph_rewrite: apply a PatternMatcher to a graph -*- C++ -*-===//
// An explicit-stack rewriter: stage 0 visits a node, stage 1 rebuilds it, stage 2 links it to its replacement.
//===----------------------------------------------------------------------===//

#include "IR/Rewrite.h"

#include "IR/NodeIdMap.h"

namespace tgc {
namespace {

class Rewriter {
public:
  Rewriter(const PatternMatcher &pm, const RewriteOptions &opts, Context &ctx)
      : pm_(pm), opts_(opts), own_(ctx), done_(opts.memo ? *opts.memo : *own_) {}

  const UOp *run(const UOp *root) {
    stack_.push_back({root, Stage::Visit, nullptr, 0});
    while (!stack_.empty()) {
      Frame f = stack_.back();
      stack_.pop_back();
      switch (f.stage) {
      case Stage::Visit: visit(f); break;
      case Stage::Rebuild: rebuild(f); break;
      case Stage::Link: finish(f.node, result(f.result)); break;
      }
    }
    return result(root);
  }

private:
  enum class Stage : uint8_t { Visit, Rebuild, Link };
  struct Frame {
    const UOp *node;
    Stage stage;
    const UOp *result;
    uint32_t chain;
  };

  void visit(const Frame &f) {
    const UOp *n = f.node;
    auto [entry, added] = done_.insert(n, kActive);
    if (!added) {
      if (*entry == kActive)
        fail("a rewrite produced a node that contains itself");
      return;
    }
    if (opts_.order == RewriteOrder::NodeFirst) {
      const UOp *r = fixpoint(n);
      if (r != n) {
        replaceWith(f, r);
        return;
      }
    }
    stack_.push_back({n, Stage::Rebuild, nullptr, f.chain});
    for (size_t i = n->numSrc(); i-- > 0;)
      if (!finished(n->src(i)))
        stack_.push_back({n->src(i), Stage::Visit, nullptr, 0});
  }

  void rebuild(const Frame &f) {
    const UOp *n = f.node;
    srcBuf_.clear();
    for (const UOp *s : n->src())
      srcBuf_.push_back(result(s));
    const UOp *n2 = n->ctx().withSrc(n, srcBuf_);
    if (opts_.order == RewriteOrder::OperandsFirst) {
      if (const UOp *r = pm_.rewrite(n2, opts_.user)) {
        countRewrite();
        replaceWith(f, r);
        return;
      }
    }
    finish(n, n2);
  }

  /// n is replaced by whatever r becomes once r is itself rewritten.
  void replaceWith(const Frame &f, const UOp *r) {
    if (f.chain + 1 > opts_.maxChain)
      fail("one node was rewritten " + std::to_string(opts_.maxChain) + " times in a chain");
    stack_.push_back({f.node, Stage::Link, r, f.chain});
    stack_.push_back({r, Stage::Visit, nullptr, f.chain + 1});
  }

  const UOp *fixpoint(const UOp *n) {
    for (uint32_t i = 0; i < opts_.maxChain; ++i) {
      const UOp *r = pm_.rewrite(n, opts_.user);
      if (!r)
        return n;
      countRewrite();
      n = r;
    }
    fail("a node was rewritten " + std::to_string(opts_.maxChain) + " times in place");
  }

  void finish(const UOp *n, const UOp *r) {
    *done_.find(n) = r;
    done_.insert(r, r);
  }

  bool finished(const UOp *n) const {
    const UOp *const *r = done_.find(n);
    return r && *r != kActive;
  }

  /// What a finished node became.
  const UOp *result(const UOp *n) const {
    const UOp *const *r = done_.find(n);
    if (!r || *r == kActive)
      internalError("graph_rewrite: a node's operand was not rewritten before it");
    return *r;
  }

  void countRewrite() {
    if (++rewrites_ > opts_.maxRewrites)
      fail("more than " + std::to_string(opts_.maxRewrites) + " rewrites");
  }

  [[noreturn]] void fail(const std::string &why) {
    std::string msg = "rewrite with '" + std::string(pm_.name()) + "' did not terminate: " + why;
    if (const Rule *r = pm_.lastRule())
      msg += "; last rule: '" + std::string(r->identity) + "' at " + r->where.file_name() + ":" +
             std::to_string(r->where.line());
    internalError(msg);
  }

  const PatternMatcher &pm_;
  const RewriteOptions &opts_;
  std::vector<Frame> stack_;
  /// done_'s entry for a node whose operands are being rewritten (a node met again in that state is a cycle).
  inline static const UOp *const kActive = reinterpret_cast<const UOp *>(alignof(UOp));
  ScratchNodeIdMap<const UOp *> own_; // done_ when the call has no memo
  NodeIdMap<const UOp *> &done_;      // visited nodes: kActive, then what each became (a memo keeps only finished ones)
  std::vector<const UOp *> srcBuf_;
  uint64_t rewrites_ = 0;
};

} // namespace

const UOp *graphRewrite(const UOp *root, const PatternMatcher &pm, const RewriteOptions &opts) {
  return Rewriter(pm, opts, root->ctx()).run(root);
}

const UOp *substitute(const UOp *root, const std::unordered_map<const UOp *, const UOp *> &map) {
  std::unordered_map<const UOp *, const UOp *> out;
  std::vector<const UOp *> srcs;
  for (const UOp *n : toposort(root)) {
    auto it = map.find(n);
    if (it != map.end()) {
      out[n] = it->second;
      continue;
    }
    srcs.clear();
    for (const UOp *s : n->src())
      srcs.push_back(out.at(s));
    out[n] = n->ctx().withSrc(n, srcs);
  }
  return out.at(root);
}

const UOp *substituteOneByOne(const UOp *root, const std::function<const UOp *(const UOp *)> &replace, int64_t &count) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const UOp *u : toposort(root)) {
      const UOp *r = replace(u);
      if (!r)
        continue;
      root = substitute(root, {{u, r}});
      ++count;
      changed = true;
      break;
    }
  }
  return root;
}

} // namespace tgc
