//===- PipelineFuzzer.cpp - libFuzzer target for the whole pipeline -*- C++ -*-===//
// A tensor program that parses and verifies must lower through lower-tensors and codegen, or fail with an error.
//===----------------------------------------------------------------------===//
//
// Mutated .uop programs (seeded with the repository's) are parsed; the valid tensor graphs run through every pass
// of the two pipelines with verification after each, for a vector target and for a scalar one. A pass may reject a
// program with a diagnostic (a shape too large to lower, a lane limit); it must never crash, abort with an internal
// error, or produce IR that does not verify. Programs with more than 2^16 elements in a tensor are skipped, so runs
// stay fast.

#include "IR/Parser.h"
#include "IR/Verifier.h"
#include "Passes/PassManager.h"
#include "Support/Logging.h"

#include <cstdio>
#include <cstdlib>

using namespace tgc;

namespace {

bool small(const UOp *root) {
  for (const UOp *u : toposort(root))
    if (u->hasShape() && u->numel() > (1 << 16))
      return false;
  return true;
}

void lower(const Module &parsed, const TargetDesc &target) {
  Module m = parsed;
  DiagEngine diags;
  diags.setCapture(true);
  // verification after every pass catches invalid IR
  Instrumentation inst;
  inst.target = target;
  if (!runPipeline("lower-tensors,codegen", m, diags, inst)) {
    for (const Diagnostic &d : diags.captured())
      if (d.message.find("became invalid") != std::string::npos) {
        std::fprintf(stderr, "fuzz: a pass produced invalid IR: %s\n", d.message.c_str());
        std::abort();
      }
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  setupLogging(0); // quiet: no pass logs, whatever TGC_DEBUG says
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Context ctx;
  DiagEngine diags;
  diags.setCapture(true);
  std::optional<Module> m = parseModule(ctx, text, "fuzz.uop", diags);
  if (!m || !m->root || detectStage(m->root) != Stage::Tensor || verify(*m, Stage::Tensor, diags) > 0)
    return 0;
  if (!small(m->root))
    return 0;
  TargetDesc vector;
  vector.vectorBits = 512;
  vector.vectorRegisters = 32;
  lower(*m, vector);
  TargetDesc scalar = vector;
  scalar.id = TargetId::C;
  scalar.vectorALU = false;
  scalar.maxLanes = 64;
  lower(*m, scalar);
  return 0;
}
