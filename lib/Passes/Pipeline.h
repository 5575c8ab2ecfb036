//===- Pipeline.h - Named pipelines -----------------------------*- C++ -*-===//
// Pipelines that run a whole stage, usable by name in -passes= like a pass.
//===----------------------------------------------------------------------===//

#pragma once

#include <string_view>
#include <vector>

namespace tgc {

struct NamedPipeline {
  std::string_view name;
  std::string_view passes; // comma-separated, each with a reason in Pipeline.cpp
  std::string_view description;
};

const std::vector<NamedPipeline> &namedPipelines();
const NamedPipeline *findPipeline(std::string_view name);

} // namespace tgc
