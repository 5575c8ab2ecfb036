//===- OptDriver.cpp - What tgc-opt does, behind its command line -*- C++ -*-===//
// Reads the input (or each chunk of it), parses, runs the pipeline, prints; handles the testing modes.
//===----------------------------------------------------------------------===//

#include "OptDriver.h"

#include "SemanticsCheck.h"

#include "IR/Parser.h"
#include "IR/Pattern.h"
#include "Passes/PassManager.h"
#include "Passes/Pipeline.h"
#include "Support/ExpectedDiagnostics.h"
#include "Support/FileIO.h"
#include "Target/CompileTarget.h"
#include "Viz/Viewer.h"

#include <cstdio>
#include <map>
#include <optional>
#include <spdlog/spdlog.h>

namespace tgc {
namespace {

void listPasses() {
  std::string out = "Available passes:\n";
  for (const PassInfo &p : allPasses()) {
    out += "  " + std::string(p.name) + "  (" + std::string(passStageName(p.in)) + " -> " +
           std::string(p.out == PassStage::Any ? "same" : passStageName(p.out)) + ")\n";
    // wrap the description at 100 columns, indented
    std::string line = "     ";
    std::string word;
    std::string desc(p.description);
    desc += ' ';
    for (char c : desc) {
      if (c != ' ') {
        word += c;
        continue;
      }
      if (line.size() + word.size() + 1 > 100) {
        out += line + "\n";
        line = "     ";
      }
      line += " " + word;
      word.clear();
    }
    out += line + "\n";
  }
  out += "Named pipelines:\n";
  for (const NamedPipeline &p : namedPipelines())
    out += "  " + std::string(p.name) + "  = " + std::string(p.passes) + "\n      " + std::string(p.description) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void printStats(const std::map<std::string, int64_t> &passStats) {
  std::string out = "===-------------------------------------------------------------------------===\n"
                    "                          ... Statistics Collected ...\n"
                    "===-------------------------------------------------------------------------===\n";
  for (const PatternMatcher *pm : PatternMatcher::all()) {
    for (size_t i = 0; i < pm->rules().size(); ++i) {
      const RuleStats &s = pm->stats()[i];
      if (s.hits == 0)
        continue;
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%8llu ", static_cast<unsigned long long>(s.hits));
      out += buf + std::string(pm->name()) + " - " + pm->rules()[i].identity + "\n";
    }
  }
  for (const auto &[name, value] : passStats)
    out += std::to_string(value) + " " + name + "\n";
  std::fwrite(out.data(), 1, out.size(), stderr);
}

/// The result of one chunk: its printed output, or a failure already reported.
struct ChunkResult {
  bool ok = false;
  std::string text;
};

class Driver {
public:
  explicit Driver(const OptOptions &o) : o_(o) {}

  int run();

private:
  ChunkResult runChunk(const Chunk &chunk, const Pipeline &pipeline, DiagEngine &diags);
  bool checkRoundtrip(Context &ctx, const Module &m, const std::string &printed, DiagEngine &diags);
  bool writeViz(viz::Trace &trace, const Module &m, DiagEngine &diags);

  const OptOptions &o_;
  SourceManager sm_;
  std::string fileName_;
  std::vector<PassTiming> timings_;
  std::map<std::string, int64_t> stats_;
};

int Driver::run() {
  fileName_ = o_.input == "-" ? "<stdin>" : o_.input;
  DiagEngine top(&sm_);
  std::string err;
  auto pipeline = parsePipeline(o_.passes, err);
  if (!pipeline) {
    top.error(Loc{}, err);
    return 1;
  }
  if (o_.splitInputFile && !o_.viz.empty()) {
    top.error(Loc{}, "--viz shows one input; it cannot be combined with --split-input-file");
    return 1;
  }
  if (o_.printPipeline) {
    std::string p = printPipeline(*pipeline) + "\n";
    std::fwrite(p.data(), 1, p.size(), stdout);
    return 0;
  }
  std::string text;
  if (!readFile(o_.input, text, err)) {
    top.error(Loc{}, "cannot read '" + fileName_ + "': " + err);
    return 1;
  }
  sm_.add(fileName_, text);
  std::vector<Chunk> chunks = o_.splitInputFile ? splitInputFile(text) : std::vector<Chunk>{{text, 1}};
  std::string output;
  bool allOk = true;
  for (size_t i = 0; i < chunks.size(); ++i) {
    DiagEngine diags(&sm_);
    ChunkResult r = runChunk(chunks[i], *pipeline, diags);
    allOk = allOk && r.ok;
    if (i > 0)
      output += "// -----\n";
    output += r.text;
  }
  if (o_.timePasses) {
    std::string t = formatTimingReport(timings_);
    std::fwrite(t.data(), 1, t.size(), stderr);
  }
  if (o_.stats)
    printStats(stats_);
  if (!allOk)
    return 1; // nothing is written when any chunk failed
  if (!writeFileAtomic(o_.output, output, err)) {
    top.error(Loc{}, "cannot write '" + o_.output + "': " + err);
    return 1;
  }
  return 0;
}

ChunkResult Driver::runChunk(const Chunk &chunk, const Pipeline &pipeline, DiagEngine &diags) {
  std::vector<ExpectedDiagnostic> expected;
  if (o_.verifyDiagnostics) {
    expected = parseExpectedDiagnostics(chunk.text, fileName_, chunk.firstLine, diags);
    if (diags.hasErrors())
      return {};
    diags.setCapture(true);
  }
  Context ctx;
  ChunkResult result;
  std::optional<Module> m = parseModule(ctx, chunk.text, fileName_, diags, chunk.firstLine);
  if (m) {
    Instrumentation inst;
    inst.verifyEach = o_.verifyEach;
    inst.printAfterAll = o_.printAfterAll;
    inst.opts = o_.opts;
    std::string targetError;
    std::optional<TargetDesc> target = targetDescFor(o_.target, o_.gpuArch, targetError);
    if (!target) {
      diags.error(Loc{fileName_, 0, 0}, targetError);
      return result;
    }
    inst.target = *target;
    if (o_.vectorBits > 0)
      setVectorBits(inst.target, o_.vectorBits);
    if (!o_.fpContract.empty())
      inst.target.contract = o_.fpContract == "on";
    if (o_.l2OperandBytes > 0)
      inst.target.l2OperandBytes = o_.l2OperandBytes;
    inst.printAfterChange = o_.printAfterChange;
    inst.printBefore = o_.printBefore;
    inst.printAfter = o_.printAfter;
    SemanticsCheck semantics(o_.checkSeed, diags);
    if (o_.checkSemantics) {
      semantics.start(*m);
      inst.afterPass = [&](const Module &mod, std::string_view pass) { return semantics.check(mod, pass); };
    }
    std::optional<viz::Trace> trace;
    if (!o_.viz.empty()) {
      trace.emplace(*m);
      inst.observe = [&](const Module &mod, std::string_view pass, double s) { trace->recordPass(mod, pass, s); };
    }
    PassManager pm(pipeline, inst);
    size_t before = ctx.numNodes();
    bool ok = pm.run(*m, diags);
    if (trace && !writeViz(*trace, *m, diags))
      ok = false;
    spdlog::info("{}: {} passes, {} nodes made", fileName_, pipeline.size(), ctx.numNodes() - before);
    for (const PassTiming &t : pm.timings())
      timings_.push_back(t);
    for (const auto &[name, value] : pm.stats())
      stats_[name] += value;
    if (o_.printRemarks)
      for (const std::string &r : m->remarks)
        std::fprintf(stderr, "remark: %s\n", r.c_str());
    if (ok) {
      result.text = printModule(*m, o_.printRanges);
      result.ok = !o_.verifyRoundtrip || checkRoundtrip(ctx, *m, result.text, diags);
    }
  }
  if (!o_.verifyDiagnostics)
    return result;
  diags.setCapture(false);
  // In this mode the chunk passes when its diagnostics are exactly the expected ones.
  bool matched = checkExpectedDiagnostics(expected, diags.captured(), fileName_, diags);
  return {matched, result.ok ? result.text : ""};
}

bool Driver::writeViz(viz::Trace &trace, const Module &m, DiagEngine &diags) {
  std::string err;
  std::optional<CompileTarget> target = targetFor(o_.target, "", "", err, o_.gpuArch);
  if (target && o_.vectorBits > 0)
    setVectorBits(target->desc, o_.vectorBits); // render the kernels for the width the passes lowered them for
  trace.remarks = m.remarks;
  trace.target = o_.target;
  if (!target || !viz::writeViewer(o_.viz, trace, &*target, err)) {
    diags.error(Loc{fileName_, 0, 0}, "--viz: " + err);
    return false;
  }
  return true;
}

bool Driver::checkRoundtrip(Context &ctx, const Module &m, const std::string &printed, DiagEngine &diags) {
  std::optional<Module> again = parseModule(ctx, printed, fileName_ + " (printed)", diags);
  if (!again) {
    diags.error(Loc{fileName_, 0, 0}, "round trip: the printed output does not parse");
    return false;
  }
  if (again->root != m.root) {
    diags.error(Loc{fileName_, 0, 0}, "round trip: the printed output parses to a different graph");
    return false;
  }
  if (printModule(*again, o_.printRanges) != printed) {
    diags.error(Loc{fileName_, 0, 0}, "round trip: printing the parsed output gives different text");
    return false;
  }
  return true;
}

} // namespace

int runOpt(const OptOptions &o) {
  if (o.listPasses) {
    listPasses();
    return 0;
  }
  return Driver(o).run();
}

} // namespace tgc
