//===- PassManager.cpp - Running a pipeline of passes -----------*- C++ -*-===//
// The one place where passes are run: verification and printing hooks are uniform for every pass.
//===----------------------------------------------------------------------===//

#include "Passes/PassManager.h"

#include "Passes/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <spdlog/spdlog.h>

namespace tgc {

std::optional<Pipeline> parsePipeline(std::string_view text, std::string &error) {
  Pipeline out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (item.empty() && !(comma == std::string_view::npos && out.empty() && pos == text.size())) {
      error = "empty pass name in pipeline '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (const NamedPipeline *named = item.empty() ? nullptr : findPipeline(item)) {
      auto sub = parsePipeline(named->passes, error);
      if (!sub)
        return std::nullopt;
      out.insert(out.end(), sub->begin(), sub->end());
    } else if (!item.empty()) {
      const PassInfo *p = findPass(item);
      if (!p) {
        error = "unknown pass '" + std::string(item) + "' (see --list-passes)";
        return std::nullopt;
      }
      out.push_back(p);
    }
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  return out;
}

std::string printPipeline(const Pipeline &p) {
  std::string s;
  for (const PassInfo *info : p) {
    if (!s.empty())
      s += ",";
    s += info->name;
  }
  return s;
}

PassManager::PassManager(Pipeline passes, Instrumentation inst) : passes_(std::move(passes)), inst_(std::move(inst)) {
  if (!inst_.dump)
    inst_.dump = [](const std::string &s) { std::fwrite(s.data(), 1, s.size(), stderr); };
}

static bool contains(const std::vector<std::string> &v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void PassManager::dumpIR(const char *when, std::string_view pass, const Module &m) {
  inst_.dump("// -----// IR Dump " + std::string(when) + " " + std::string(pass) + " //----- //\n" + printModule(m));
}

bool PassManager::verifyStage(const Module &m, Stage stage, DiagEngine &diags, const std::string &note) {
  int before = diags.errorCount();
  verify(m, stage, diags);
  if (diags.errorCount() == before)
    return true;
  if (!note.empty())
    diags.note(Loc{m.fileName, 0, 0}, note);
  return false;
}

bool PassManager::run(Module &m, DiagEngine &diags) {
  Stage stage = detectStage(m.root);
  if (inst_.verifyEach && !verifyStage(m, stage, diags, ""))
    return false;
  for (const PassInfo *p : passes_) {
    if (!acceptsStage(*p, stage)) {
      diags.error(Loc{m.fileName, 0, 0}, "pass '" + std::string(p->name) + "' expects a " +
                                             std::string(passStageName(p->in)) + " graph, but the input is a " +
                                             std::string(stageName(stage)) + " graph");
      return false;
    }
    if (contains(inst_.printBefore, p->name))
      dumpIR("Before", p->name, m);
    const UOp *oldRoot = m.root;
    auto start = std::chrono::steady_clock::now();
    PassContext pc{m, diags, stats_, inst_.opts, inst_.target, inst_.tuned};
    const UOp *newRoot = m.root ? p->run(m.root, pc) : nullptr;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timings_.push_back({std::string(p->name), secs});
    if (spdlog::should_log(spdlog::level::info))
      spdlog::info("pass {}: {} -> {} nodes in {:.3f} ms", p->name, oldRoot ? toposort(oldRoot).size() : 0,
                   newRoot ? toposort(newRoot).size() : 0, secs * 1e3);
    if (m.root && !newRoot)
      return false; // the pass reported why
    m.root = newRoot;
    stage = stageAfter(*p, stage);
    bool changed = m.root != oldRoot;
    if (inst_.printAfterAll || contains(inst_.printAfter, p->name) || (inst_.printAfterChange && changed))
      dumpIR("After", p->name, m);
    if (inst_.verifyEach &&
        !verifyStage(m, stage, diags, "the graph became invalid after pass '" + std::string(p->name) + "'"))
      return false;
    if (inst_.observe)
      inst_.observe(m, p->name, secs);
    if (inst_.afterPass && !inst_.afterPass(m, p->name))
      return false;
  }
  if (!inst_.verifyEach && inst_.verifyOutput && !passes_.empty() &&
      !verifyStage(m, stage, diags, "the graph became invalid in a pass of the pipeline (--verify-each names which)"))
    return false;
  return true;
}

bool runPipeline(std::string_view passes, Module &m, DiagEngine &diags, const Instrumentation &inst,
                 std::vector<PassTiming> *timings) {
  std::string error;
  std::optional<Pipeline> pipeline = parsePipeline(passes, error);
  if (!pipeline)
    internalError(error);
  PassManager pm(*pipeline, inst);
  bool ok = pm.run(m, diags);
  if (timings)
    timings->insert(timings->end(), pm.timings().begin(), pm.timings().end());
  return ok;
}

std::string formatTimingReport(const std::vector<PassTiming> &timings) {
  double total = 0;
  for (const PassTiming &t : timings)
    total += t.seconds;
  std::string out = "===-------------------------------------------------------------------------===\n"
                    "                      ... Pass execution timing report ...\n"
                    "===-------------------------------------------------------------------------===\n";
  char buf[256];
  std::snprintf(buf, sizeof(buf), "  Total Execution Time: %.6f seconds\n\n   ---Wall Time---  --- Name ---\n", total);
  out += buf;
  for (const PassTiming &t : timings) {
    std::snprintf(buf, sizeof(buf), "   %.6f (%5.1f%%)  %s\n", t.seconds, total > 0 ? 100 * t.seconds / total : 0.0,
                  t.name.c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "   %.6f (100.0%%)  Total\n", total);
  return out + buf;
}

} // namespace tgc
