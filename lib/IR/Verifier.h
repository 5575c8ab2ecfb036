//===- Verifier.h - Well-formedness of graphs at each stage -----*- C++ -*-===//
// Rule tables per stage (tensor graph, kernel graph, program); errors name the op and where it was written.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/Module.h"
#include "Support/Diagnostics.h"

#include <optional>
#include <string_view>

namespace tgc {

/// The three forms a graph takes through the compiler.
///  Tensor:  a SINK of OUTPUTs over tensor ops (shaped nodes, movement ops, reduce_axis)
///  Kernel:  a SINK of STOREs over ranges, index, load (unshaped nodes)
///  Program: a LINEAR of CALLs, each a kernel SINK applied to buffers
enum class Stage { Tensor, Kernel, Program };

std::string_view stageName(Stage s);
std::optional<Stage> stageFromName(std::string_view name);

/// Guess the stage of a graph from its ops.
Stage detectStage(const UOp *root);

/// Check every node of the module against the rules of `stage`. Reports each problem to `diags` and returns the
/// number of errors found.
int verify(const Module &m, Stage stage, DiagEngine &diags);

} // namespace tgc
