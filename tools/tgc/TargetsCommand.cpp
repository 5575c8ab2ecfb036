//===- TargetsCommand.cpp - tgc targets -------------------------*- C++ -*-===//
// Lists every target of Targets.def: what it emits, where it runs, its GPU architectures.
//===----------------------------------------------------------------------===//
//
// With --markdown the list is docs/targets.md's table; a test keeps the two the same. "native" names what the
// target computes itself; decompose-transcendentals and emulate-floats write the rest from what it has.

#include "Commands.h"

#include "Passes/Targets.h"

#include <algorithm>
#include <cstdio>

namespace tgc {

namespace {

using Row = std::vector<std::string>;

std::string archList(const TargetRecord &t) {
  std::string out;
  for (const GpuArch *g : t.archs())
    if (*g->arch)
      out += (out.empty() ? "" : ", ") + std::string(g->arch) + (g->isDefault ? " (default)" : "");
  return out.empty() ? (t.gpu ? "chosen at run time" : "-") : out;
}

/// The operations the target computes itself (the rest is rewritten before rendering).
std::string nativeList(const TargetRecord &t) {
  static const std::pair<native::NativeOp, const char *> names[] = {{native::Transc, "exp2/log2/sin"},
                                                                    {native::Pow, "pow"},
                                                                    {native::F16, "f16"},
                                                                    {native::BF16, "bf16"},
                                                                    {native::NanMax, "NaN max"}};
  std::string out;
  for (const auto &[op, name] : names)
    if (t.has(op))
      out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "-" : out;
}

std::vector<Row> targetRows() {
  std::vector<Row> rows = {{"target", "kernels", "runs on", "device library", "tgc run", "native", "--gpu-arch"}};
  for (const TargetRecord &t : allTargets())
    rows.push_back({t.name, t.help, t.gpu ? "GPU" : "CPU", *t.device ? t.device : "-", t.run ? "yes" : "no",
                    nativeList(t), archList(t)});
  return rows;
}

void printMarkdown(const std::vector<Row> &rows) {
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line = "|";
    for (size_t c = 0; c < rows[r].size(); ++c)
      line += " " + (r > 0 && c == 0 ? "`" + rows[r][c] + "`" : rows[r][c]) + " |";
    std::printf("%s\n", line.c_str());
    if (r > 0)
      continue;
    std::string rule = "|";
    for (size_t c = 0; c < rows[r].size(); ++c)
      rule += "---|";
    std::printf("%s\n", rule.c_str());
  }
}

void printAligned(const std::vector<Row> &rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const Row &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  for (const Row &row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 2, ' ') : "");
    std::printf("%s\n", line.c_str());
  }
}

} // namespace

int targetsCommand(const TargetsOptions &o) {
  std::vector<Row> rows = targetRows();
  if (o.markdown)
    printMarkdown(rows);
  else
    printAligned(rows);
  return 0;
}

} // namespace tgc
