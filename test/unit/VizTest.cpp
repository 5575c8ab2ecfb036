//===- VizTest.cpp - The viewer's graphs, traces and data -------*- C++ -*-===//
// Node ids follow the printed text, rule hits are counted per pass, and layouts are SVG with those ids.
//===----------------------------------------------------------------------===//

#include "IR/Parser.h"
#include "Passes/PassManager.h"
#include "Viz/Graph.h"
#include "Viz/Viewer.h"

#include <catch2/catch.hpp>
#include <sstream>

using namespace tgc;

namespace {

const char *kModel = "%x = input \"x\" : i32[4]\n"
                     "%z = const 0 : i32[4]\n"
                     "%y = add(%x, %z)\n"
                     "%n = neg(%y)\n"
                     "%o = output(%n) \"y\"\n"
                     "%s = sink(%o)\n";

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

} // namespace

TEST_CASE("a graph's node n<k> is the %k of its printed text", "[viz]") {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::optional<Module> m = parseModule(ctx, kModel, "t.uop", diags);
  REQUIRE(m);
  viz::GraphView g = viz::viewOf(m->root);
  std::vector<std::string> text = lines(printGraph(m->root));
  REQUIRE(g.nodes.size() == text.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    REQUIRE(g.nodes[i].id == "n" + std::to_string(i));
    REQUIRE(g.nodes[i].text == text[i]);
  }
  size_t links = 0;
  for (const UOp *u : toposort(m->root))
    links += u->numSrc();
  REQUIRE(g.edges.size() == links);
  REQUIRE(g.nodes.back().label == "sink");
  REQUIRE(g.nodes[0].loc.rfind("t.uop:1:", 0) == 0); // parsed nodes keep where they came from
  REQUIRE_FALSE(g.program);
}

TEST_CASE("the trace counts each pass's rule hits and created nodes", "[viz]") {
  Context ctx;
  SourceManager sm;
  DiagEngine diags(&sm);
  std::optional<Module> m = parseModule(ctx, kModel, "t.uop", diags);
  REQUIRE(m);
  viz::Trace trace(*m);
  std::string err;
  Instrumentation inst;
  inst.observe = [&](const Module &mod, std::string_view pass, double s) { trace.recordPass(mod, pass, s); };
  PassManager pm(*parsePipeline("simplify,simplify", err), inst);
  REQUIRE(pm.run(*m, diags));
  REQUIRE(trace.passes().size() == 2);
  const viz::PassRecord &first = trace.passes()[0];
  REQUIRE(first.before == trace.input());
  REQUIRE(first.after != first.before); // x + 0 -> x
  REQUIRE_FALSE(first.rules.empty());
  REQUIRE(first.rules[0].matcher == "simplify");
  const viz::PassRecord &second = trace.passes()[1];
  REQUIRE(second.before == first.after);
  REQUIRE(second.after == first.after); // nothing left to do
  REQUIRE(second.rules.empty());        // negative: an idle pass fires no rule

  nlohmann::json data = viz::viewerData(trace, nullptr, true);
  REQUIRE(data["format"] == "tgc-viz 1");
  REQUIRE(data["passes"].size() == 3); // the input, then each pass
  REQUIRE(data["passes"][1]["changed"].size() > 0);
  REQUIRE(data["passes"][2]["changed"].empty());
  REQUIRE(data["kernels"].empty()); // a tensor graph has no kernels
  std::string svg = data["graphs"][0]["svg"];
  REQUIRE(svg.rfind("<svg", 0) == 0);
  REQUIRE(svg.find("id=\"n0\"") != std::string::npos);
  REQUIRE_FALSE(viz::viewerData(trace, nullptr, false)["graphs"][0].contains("svg"));
}
