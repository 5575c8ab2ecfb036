//===- Graph.cpp - Building and laying out the viewer's graphs --*- C++ -*-===//
// Node ids follow printGraph's numbering, so a node in the picture is the %N of the text beside it.
//===----------------------------------------------------------------------===//

#include "Viz/Graph.h"

#include "IR/Module.h"
#include "Passes/ProgramQueries.h"

#include <graphviz/gvc.h>

#include <mutex>
#include <sstream>

namespace tgc::viz {

namespace {

const char *groupName(OpGroup g) {
  switch (g) {
  case OpGroup::Meta: return "meta";
  case OpGroup::Leaf: return "leaf";
  case OpGroup::Movement: return "movement";
  case OpGroup::Unary: return "unary";
  case OpGroup::Binary: return "binary";
  case OpGroup::Ternary: return "ternary";
  case OpGroup::Cast: return "cast";
  case OpGroup::Reduce: return "reduce";
  case OpGroup::Define: return "define";
  case OpGroup::Memory: return "memory";
  case OpGroup::Control: return "control";
  case OpGroup::Program: return "program";
  case OpGroup::Composite: return "composite";
  }
  return "meta";
}

/// Fill colours by group (the HTML legend uses the same).
const char *groupColour(const std::string &g) {
  static const std::pair<const char *, const char *> colours[] = {
      {"leaf", "#ffe0a0"},    {"movement", "#c8e6ff"}, {"unary", "#d8f5d0"},   {"binary", "#d8f5d0"},
      {"ternary", "#d8f5d0"}, {"cast", "#e8f0c0"},     {"reduce", "#ffc8c8"},  {"define", "#e0d8ff"},
      {"memory", "#f0d0f0"},  {"control", "#ffe8d0"},  {"program", "#d0f0f0"}, {"composite", "#ffd0a0"}};
  for (auto &[name, colour] : colours)
    if (g == name)
      return colour;
  return "#eeeeee";
}

/// "op ARG : TYPE" from a printed line "%N = op(%a, %b) ARG : TYPE".
std::string labelOf(const std::string &line) {
  size_t eq = line.find(" = ");
  std::string rest = eq == std::string::npos ? line : line.substr(eq + 3);
  size_t open = rest.find('(');
  size_t space = rest.find(' ');
  if (open != std::string::npos && open < space) {
    size_t close = rest.find(')', open);
    rest = rest.substr(0, open) + (close == std::string::npos ? "" : rest.substr(close + 1));
  }
  if (rest.size() > 48)
    rest = rest.substr(0, 45) + "...";
  return rest;
}

std::string locOf(const UOp *u) {
  const Loc *l = u->ctx().loc(u);
  if (!l || !l->valid())
    return "";
  return l->file + ":" + std::to_string(l->line) + ":" + std::to_string(l->col);
}

GraphView programView(const UOp *root) {
  GraphView g;
  g.program = true;
  std::unordered_map<const UOp *, size_t> index;
  auto add = [&](const UOp *u, ViewNode n) {
    auto [it, fresh] = index.emplace(u, g.nodes.size());
    if (fresh) {
      g.of[u] = n.id;
      g.nodes.push_back(std::move(n));
    }
    return it->second;
  };
  for (size_t c = 0; c < root->numSrc(); ++c) {
    const UOp *call = root->src(c);
    std::string name = kernelName(call);
    size_t ci =
        add(call, {"c" + std::to_string(c), name, "program", "call " + std::to_string(c) + ": " + name, locOf(call)});
    auto buffer = [&](const UOp *b) {
      const auto &t = b->arg().getTuple();
      std::string label = t[2].getString() + " " + std::to_string(t[0].getInt());
      if (!t[3].getString().empty())
        label += " \"" + t[3].getString() + "\"";
      return add(b, {"b" + std::to_string(t[0].getInt()), label, "memory", label, ""});
    };
    CallAccess access = callAccess(call);
    for (const UOp *b : access.reads)
      g.edges.emplace_back(buffer(b), ci);
    for (const UOp *b : access.writes)
      g.edges.emplace_back(ci, buffer(b));
  }
  return g;
}

std::string quoted(const std::string &s) {
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      q += '\\';
    q += ch == '\n' ? ' ' : ch;
  }
  return q + "\"";
}

} // namespace

bool isProgram(const UOp *root) {
  return root->numSrc() > 0 && root->src(0)->op() == Op::Call && (root->op() == Op::Linear || root->op() == Op::Sink);
}

GraphView viewOf(const UOp *root) {
  if (isProgram(root))
    return programView(root);
  GraphView g;
  std::string text = printGraph(root);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  std::unordered_map<const UOp *, size_t> names; // printGraph's numbering
  std::vector<const UOp *> order;
  for (const UOp *u : toposort(root)) {
    for (const UOp *v : u->dimVars())
      if (v && names.emplace(v, names.size()).second)
        order.push_back(v);
    if (names.emplace(u, names.size()).second)
      order.push_back(u);
  }
  bool skipRoot = root->op() == Op::Linear; // its edges to every item would hide the data flow
  std::unordered_map<const UOp *, size_t> index;
  for (size_t i = 0; i < order.size(); ++i) {
    const UOp *u = order[i];
    if (skipRoot && u == root)
      continue;
    std::string line = i < lines.size() ? lines[i] : "";
    index[u] = g.nodes.size();
    g.of[u] = "n" + std::to_string(i);
    g.nodes.push_back({"n" + std::to_string(i), labelOf(line), groupName(opGroup(u->op())), line, locOf(u)});
  }
  for (const UOp *u : order)
    if (index.count(u))
      for (const UOp *s : u->src())
        if (index.count(s))
          g.edges.emplace_back(index[s], index[u]);
  return g;
}

std::string layoutSvg(const GraphView &g) {
  if (g.nodes.empty() || g.nodes.size() > kMaxLayoutNodes)
    return "";
  std::string dot = "digraph G {\n  graph [rankdir=TB, nodesep=0.15, ranksep=0.3];\n"
                    "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10, "
                    "height=0.25, margin=\"0.06,0.03\"];\n  edge [arrowsize=0.5, color=\"#888888\"];\n";
  for (const ViewNode &n : g.nodes)
    dot += "  " + n.id + " [id=" + quoted(n.id) + ", label=" + quoted(n.label) + ", fillcolor=\"" +
           groupColour(n.group) + "\", tooltip=" + quoted(n.text) + "];\n";
  for (auto [from, to] : g.edges)
    dot += "  " + g.nodes[from].id + " -> " + g.nodes[to].id + ";\n";
  dot += "}\n";
  static std::mutex lock; // Graphviz is not thread-safe
  std::lock_guard<std::mutex> guard(lock);
  static GVC_t *gvc = gvContext();
  Agraph_t *graph = agmemread(dot.c_str());
  if (!graph)
    return "";
  std::string svg;
  if (gvLayout(gvc, graph, "dot") == 0) {
    char *data = nullptr;
    unsigned int size = 0;
    if (gvRenderData(gvc, graph, "svg", &data, &size) == 0 && data) {
      svg.assign(data, size);
      gvFreeRenderData(data);
    }
    gvFreeLayout(gvc, graph);
  }
  agclose(graph);
  size_t start = svg.find("<svg"); // drop the XML prologue and DOCTYPE: the SVG goes inline in HTML
  return start == std::string::npos ? "" : svg.substr(start);
}

} // namespace tgc::viz
