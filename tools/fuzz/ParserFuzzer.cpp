//===- ParserFuzzer.cpp - libFuzzer target for the .uop reader --*- C++ -*-===//
// Any input must parse or fail with located errors; whatever parses must verify, round-trip, and simplify validly.
//===----------------------------------------------------------------------===//

#include "IR/Parser.h"
#include "IR/Verifier.h"
#include "Passes/Pass.h"

#include <cstdio>
#include <cstdlib>

using namespace tgc;

static void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Context ctx;
  DiagEngine diags;
  diags.setCapture(true);
  std::optional<Module> m = parseModule(ctx, text, "fuzz.uop", diags);
  if (!m) {
    check(diags.hasErrors(), "a failed parse reported no error");
    for (const Diagnostic &d : diags.captured())
      check(d.severity != Severity::Error || d.loc.valid(), "a parse error has no location");
    return 0;
  }
  if (!m->root)
    return 0;
  Stage stage = detectStage(m->root);
  if (verify(*m, stage, diags) > 0)
    return 0;
  std::string printed = printModule(*m);
  DiagEngine diags2;
  diags2.setCapture(true);
  std::optional<Module> again = parseModule(ctx, printed, "printed.uop", diags2);
  check(again.has_value(), "printed output does not parse");
  check(again->root == m->root, "printed output parses to another graph");
  check(printModule(*again) == printed, "printing is not stable");
  std::map<std::string, int64_t> stats;
  PassContext pc{*m, diags, stats};
  const UOp *simplified = findPass("simplify")->run(m->root, pc);
  Module out = *m;
  out.root = simplified;
  check(verify(out, stage, diags) == 0, "simplify produced an invalid graph");
  return 0;
}
