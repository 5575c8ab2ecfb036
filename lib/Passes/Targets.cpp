//===- Targets.cpp - The table of targets, as C++ ---------------*- C++ -*-===//
// Targets.def's rows as records, looked up by name or id; every list of targets in help and errors comes from here.
//===----------------------------------------------------------------------===//

#include "Passes/Targets.h"

namespace tgc {

namespace {

constexpr GpuArch kGpuArchs[] = {
#define TGC_GPU_ARCH(target, arch, isDefault, warp, localMemory, maxLocalProduct, tensorCores, help)                   \
  {TargetId::target, arch, isDefault, warp, localMemory, maxLocalProduct, tensorCores, help},
#include "Passes/Targets.def"
};

std::string join(const std::vector<std::string> &parts, const char *separator) {
  std::string out;
  for (const std::string &p : parts)
    out += (out.empty() ? "" : separator) + p;
  return out;
}

} // namespace

const std::vector<TargetRecord> &allTargets() {
  using namespace native; // the rows' None, Transc, Pow, F16, BF16, NanMax
  static const std::vector<TargetRecord> targets = {
#define TGC_TARGET(Id, name, gpu, codegen, device, triple, features, run, nativeOps, help)                             \
  {TargetId::Id, name, gpu, TargetCodegen::codegen, device, triple, features, run, nativeOps, help},
#include "Passes/Targets.def"
  };
  return targets;
}

const TargetRecord &targetRecord(TargetId id) { return allTargets()[size_t(id)]; }

const TargetRecord *findTarget(std::string_view name) {
  for (const TargetRecord &t : allTargets())
    if (name == t.name)
      return &t;
  return nullptr;
}

std::vector<const GpuArch *> TargetRecord::archs() const {
  std::vector<const GpuArch *> out;
  for (const GpuArch &g : kGpuArchs)
    if (g.target == id)
      out.insert(g.isDefault ? out.begin() : out.end(), &g);
  return out;
}

std::vector<std::string> targetNameList(bool (*keep)(const TargetRecord &)) {
  std::vector<std::string> out;
  for (const TargetRecord &t : allTargets())
    if (!keep || keep(t))
      out.push_back(t.name);
  return out;
}

std::string targetNames(bool (*keep)(const TargetRecord &)) { return join(targetNameList(keep), ", "); }

std::string targetHelp(bool (*keep)(const TargetRecord &)) {
  std::vector<std::string> parts;
  for (const TargetRecord &t : allTargets())
    if (!keep || keep(t))
      parts.push_back(std::string(t.name) + " (" + t.help + ")");
  return join(parts, ", ");
}

std::string gpuArchHelp() {
  std::vector<std::string> perTarget;
  for (const TargetRecord &t : allTargets()) {
    std::vector<std::string> names;
    for (const GpuArch *g : t.archs())
      if (*g->arch)
        names.push_back(std::string(g->arch) + (g->isDefault ? " (default)" : ""));
    if (!names.empty())
      perTarget.push_back(std::string(t.name) + ": " + join(names, ", "));
  }
  return join(perTarget, "; ");
}

} // namespace tgc
