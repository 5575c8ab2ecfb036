//===- PassRegistry.cpp - The table of passes -------------------*- C++ -*-===//
// Expands Passes.def into the registry that --passes, --list-passes and docs/passes.md read.
//===----------------------------------------------------------------------===//

#include "Passes/Pass.h"

namespace tgc {

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> passes = {
#define TGC_PASS(name, function, in, out, description) {name, function, PassStage::in, PassStage::out, description},
#include "Passes/Passes.def"
  };
  return passes;
}

const PassInfo *findPass(std::string_view name) {
  for (const PassInfo &p : allPasses())
    if (p.name == name)
      return &p;
  return nullptr;
}

std::string_view passStageName(PassStage s) {
  switch (s) {
  case PassStage::Any: return "any";
  case PassStage::Tensor: return "tensor";
  case PassStage::Kernel: return "kernel";
  case PassStage::Program: return "program";
  }
  return "?";
}

static std::optional<Stage> toStage(PassStage s) {
  switch (s) {
  case PassStage::Any: return std::nullopt;
  case PassStage::Tensor: return Stage::Tensor;
  case PassStage::Kernel: return Stage::Kernel;
  case PassStage::Program: return Stage::Program;
  }
  return std::nullopt;
}

Stage stageAfter(const PassInfo &p, Stage s) { return toStage(p.out).value_or(s); }

bool acceptsStage(const PassInfo &p, Stage s) {
  auto want = toStage(p.in);
  return !want || *want == s;
}

} // namespace tgc
