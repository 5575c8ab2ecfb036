//===- SimplifyRules.h - The rule families of the simplify pass -*- C++ -*-===//
// Simplify is one PatternMatcher made of these tables; each family lives in its own file.
//===----------------------------------------------------------------------===//
//
// Assumptions every table may rely on (and must keep):
//  - Rules never change a node's dtype or shape (the matcher declines results that would).
//  - Commutative operands are in canonical order (canonicalOrder in SimplifyIdentities.cpp): constants on the
//    right, so a table needs `x + c` only, never `c + x`. Integer sums are instead kept in the normal form of
//    SimplifySum.cpp: a left-leaning chain of terms `base*coeff` in canonical order, the constant last.
//  - Integer arithmetic wraps; idiv/mod truncate (C), floordiv/floormod round toward -inf. A rule that uses
//    floor-division algebra on idiv/mod must first prove the numerator non-negative and the divisor positive.

#pragma once

#include "IR/Pattern.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tgc {
/// The simplify pass on one expression (for passes that build index arithmetic).
const UOp *simplifyExpression(const UOp *root);
/// The simplify rules at `u` alone, until none matches: for a node built on operands that are simplified already,
/// without walking the graph below it again. Nodes a rule builds under the new root are left as built.
const UOp *simplifyNode(const UOp *u);
} // namespace tgc

namespace tgc::simplify {

std::vector<Rule> foldRules();
std::vector<Rule> identityRules();
std::vector<Rule> sumRules();
std::vector<Rule> divModRules();
std::vector<Rule> compareRules();
std::vector<Rule> whereRules();
std::vector<Rule> vectorRules();
std::vector<Rule> emptyRules();
std::vector<Rule> reduceRules();

/// `a` goes to the left of `b` in a commutative op: non-constants first, then a deterministic structural order.
bool leftOf(const UOp *a, const UOp *b);

/// An integer expression as sum(coeff * base) + constant. Coefficients are the smallest-magnitude representative of
/// their value modulo 2^bits, so `x - y` has coefficients 1 and -1 in every integer dtype.
struct LinearSum {
  struct Term {
    const UOp *base;
    int64_t coeff;
  };
  std::vector<Term> terms;
  int64_t constant = 0;
  DType dtype;
};

/// Flatten add/sub/neg/mul-by-constant chains (of x's dtype) into a LinearSum with like terms merged.
LinearSum decompose(const UOp *x);
/// The canonical node of a sum (terms in leftOf order, constant last). `like` gives the dtype and shape.
const UOp *rebuild(const LinearSum &s, const UOp *like);
/// The range of the sum's exact integer value, from its terms' ranges; nullopt if a term has no range or the
/// value could leave the dtype (then the wrapped value is not the sum, and integer algebra does not apply).
std::optional<std::pair<__int128, __int128>> exactRange(const LinearSum &s);

/// An integer constant of like's dtype, rank-0 when like is a tensor (operands broadcast it), unshaped otherwise.
const UOp *scalarConst(const UOp *like, int64_t v);
/// Smallest-magnitude representative of v modulo 2^bits of `d`.
int64_t signedRep(__int128 v, DType d);
/// Floor division and modulo of mathematical integers.
int64_t floorDiv(int64_t a, int64_t b);
int64_t floorMod(int64_t a, int64_t b);

} // namespace tgc::simplify
