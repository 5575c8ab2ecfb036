//===- Pass.h - What a pass is, and the registry of passes ------*- C++ -*-===//
// A pass maps a graph to a graph; the registry (generated from Passes.def) finds passes by name.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Module.h"
#include "IR/Verifier.h"
#include "Passes/TargetDesc.h"
#include "Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// What a pass may see or modify beyond the graph.
/// Kernel tuning key -> optimization actions ("upcast:0:4,upcast:1:16"; "" for none), from a tuning cache.
using TuningTable = std::map<std::string, std::string>;

struct PassContext {
  Module &module;
  DiagEngine &diags;
  /// Named counters a pass reports (printed by tgc-opt --stats), e.g. bytes saved by memory planning.
  std::map<std::string, int64_t> &stats;
  /// Optimization actions for apply-opts, e.g. "upcast:1:4,unroll:2:0" (tgc-opt --opts).
  std::string opts = {};
  /// The target the kernels are lowered for (tgc-opt --target, tgc -target).
  const TargetDesc &target = defaultTarget();
  /// Actions found by BEAM search, by kernel tuning key (kernelTuningKey); optimize uses them for the kernels
  /// listed, its heuristics for the others. nullptr: none.
  const TuningTable *tuned = nullptr;

  static const TargetDesc &defaultTarget() {
    static const TargetDesc d = hostTargetDesc(TargetId::Cpu);
    return d;
  }
};

/// Returns the new root, or nullptr after reporting an error to pc.diags.
using PassFn = const UOp *(*)(const UOp *root, PassContext &pc);

enum class PassStage { Any, Tensor, Kernel, Program };

struct PassInfo {
  std::string_view name;
  PassFn run;
  PassStage in;
  PassStage out; // Any: same as the input
  std::string_view description;
};

#define TGC_PASS(name, function, in, out, description) const UOp *function(const UOp *root, PassContext &pc);
#include "Passes/Passes.def"

/// Every registered pass, in Passes.def order.
const std::vector<PassInfo> &allPasses();
const PassInfo *findPass(std::string_view name);
std::string_view passStageName(PassStage s);

/// The stage after running `p` on a graph of stage `s`.
Stage stageAfter(const PassInfo &p, Stage s);
/// Whether `p` accepts a graph of stage `s`.
bool acceptsStage(const PassInfo &p, Stage s);

} // namespace tgc
