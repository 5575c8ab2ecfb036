//===- Viewer.cpp - Building the viewer's data and page ---------*- C++ -*-===//
// Graphs are deduplicated by root (interned UOps: an unchanged graph is the same pointer) and laid out once.
//===----------------------------------------------------------------------===//

#include "Viz/Viewer.h"

#include "Passes/ProgramQueries.h"
#include "Support/FileIO.h"
#include "Target/CRenderer.h"
#include "Target/KernelInfo.h"
#include "Target/LLVMBackend.h"
#include "Target/LLVMRenderer.h"
#include "Viz/Graph.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <map>
#include <unordered_set>

namespace tgc::viz {

extern const char *const kViewerPage; // ViewerPage.cpp

namespace {

using json = nlohmann::json;

/// Graphs by root, numbered in order of first use.
class GraphTable {
public:
  explicit GraphTable(bool svg) : svg_(svg) {}

  int id(const UOp *root) {
    auto [it, fresh] = ids_.emplace(root, int(roots_.size()));
    if (fresh) {
      roots_.push_back(root);
      views_.push_back(viewOf(root));
    }
    return it->second;
  }
  const GraphView &view(int id) const { return views_[size_t(id)]; }

  json toJson() const {
    json out = json::array();
    for (size_t i = 0; i < roots_.size(); ++i) {
      const GraphView &g = views_[i];
      json nodes = json::array();
      for (const ViewNode &n : g.nodes)
        nodes.push_back({{"id", n.id}, {"label", n.label}, {"group", n.group}, {"text", n.text}, {"loc", n.loc}});
      json edges = json::array();
      for (auto [a, b] : g.edges)
        edges.push_back({g.nodes[a].id, g.nodes[b].id});
      json graph = {{"id", i},
                    {"kind", g.program                       ? "program"
                             : roots_[i]->op() == Op::Linear ? "linear kernel"
                                                             : "graph"},
                    {"text", printGraph(roots_[i])},
                    {"nodes", nodes},
                    {"edges", edges}};
      if (svg_)
        graph["svg"] = layoutSvg(g);
      out.push_back(graph);
    }
    return out;
  }

private:
  bool svg_;
  std::map<const UOp *, int> ids_; // only looked up: the order of roots_ is the order of first use
  std::vector<const UOp *> roots_;
  std::vector<GraphView> views_;
};

/// The ids of the nodes of `after` that `before` does not have: what the pass created.
json changedNodes(GraphTable &graphs, const UOp *before, const UOp *after) {
  json out = json::array();
  const GraphView &b = graphs.view(graphs.id(before));
  const GraphView &a = graphs.view(graphs.id(after));
  if (a.program) { // a call whose kernel changed
    for (size_t c = 0; c < after->numSrc(); ++c)
      if (!b.of.count(after->src(c)))
        out.push_back("c" + std::to_string(c));
    return out;
  }
  std::unordered_set<const UOp *> old;
  for (const UOp *u : toposort(before))
    old.insert(u);
  for (const auto &[u, id] : a.of)
    if (!old.count(u))
      out.push_back(id);
  std::sort(out.begin(), out.end());
  return out;
}

/// The kernel as the target's renderer writes it: C (c), OpenCL C (opencl), or LLVM IR before LLVM's passes (cpu;
/// amd and cuda in their AMDGPU and NVPTX forms; their ISA, PTX and cubins are in tgc compile's build/kernels/).
json kernelSource(const UOp *linear, const KernelInfo &info, const CompileTarget *target) {
  static const CompileTarget host = [] {
    std::string unused;
    return *targetFor("cpu", "", "", unused);
  }();
  const CompileTarget &t = target ? *target : host;
  std::string symbol = symbolName(info.name);
  json src = json::object();
  if (!t.target().rendersLLVM()) {
    bool opencl = t.target().codegen == TargetCodegen::OpenCLC;
    src[opencl ? "OpenCL C" : "C"] = renderKernelC(linear, info, symbol, opencl ? kOpenCLDialect : kCDialect);
  } else {
    llvm::LLVMContext ctx;
    llvm::Module m(symbol, ctx);
    renderKernelLLVM(linear, info, symbol, m, t, llvmFlavorOf(t.target().codegen));
    src["LLVM IR"] = printModuleIR(m);
  }
  return src;
}

/// Per call of the final program: its kernel at each pass that changed it, numbers, actions, source, time.
json kernels(const Trace &trace, GraphTable &graphs, const CompileTarget *target) {
  json out = json::array();
  const UOp *final = trace.passes().empty() ? trace.input() : trace.passes().back().after;
  if (!isProgram(final))
    return out;
  for (size_t c = 0; c < final->numSrc(); ++c) {
    const UOp *call = final->src(c);
    std::string name = kernelName(call);
    json stages = json::array();
    const UOp *last = nullptr;
    for (const PassRecord &p : trace.passes()) {
      if (p.after->op() != Op::Linear || !isProgram(p.after) || p.after->numSrc() != final->numSrc())
        continue;
      const UOp *k = p.after->src(c)->src(0);
      if (k != last)
        stages.push_back({{"pass", p.name}, {"graph", graphs.id(k)}});
      last = k;
    }
    json kernel = {{"name", name}, {"call", c}, {"stages", stages}};
    std::vector<std::string> actions; // several kernels can share a name: then each one's actions, " or "
    for (const std::string &r : trace.remarks)
      if (r.rfind(name + ": ", 0) == 0 && std::find(actions.begin(), actions.end(), r) == actions.end())
        actions.push_back(r);
    for (size_t a = 0; a < actions.size(); ++a)
      kernel["actions"] = (a ? kernel["actions"].get<std::string>() + " or " : "") + actions[a].substr(name.size() + 2);
    const UOp *k = call->src(0);
    if (k->op() == Op::Linear) {
      KernelInfo info = analyzeKernel(k);
      kernel["flops"] = info.flops;
      kernel["bytes"] = info.bytes;
      kernel["source"] = kernelSource(k, info, target);
    }
    if (c < trace.callSeconds.size())
      kernel["seconds"] = trace.callSeconds[c];
    out.push_back(kernel);
  }
  return out;
}

} // namespace

json viewerData(const Trace &trace, const CompileTarget *target, bool svg) {
  GraphTable graphs(svg);
  json passes = json::array();
  passes.push_back({{"name", "input"}, {"seconds", 0}, {"after", graphs.id(trace.input())}});
  for (const PassRecord &p : trace.passes()) {
    json rules = json::array();
    for (const RuleHit &r : p.rules)
      rules.push_back({{"matcher", r.matcher}, {"rule", r.rule}, {"hits", r.hits}});
    passes.push_back({{"name", p.name},
                      {"seconds", p.seconds},
                      {"before", graphs.id(p.before)},
                      {"after", graphs.id(p.after)},
                      {"changed", changedNodes(graphs, p.before, p.after)},
                      {"rules", rules}});
  }
  json ks = kernels(trace, graphs, target);
  json data = {{"format", "tgc-viz 1"}, {"source", trace.source()}, {"target", trace.target}, {"passes", passes},
               {"kernels", ks},         {"graphs", graphs.toJson()}};
  if (trace.peakGflops > 0)
    data["machine"] = {{"cpu", trace.cpu}, {"gflops", trace.peakGflops}, {"gbps", trace.peakGbps}};
  return data;
}

/// JSON text that may stand inside a script element: neither "</" (ends it) nor "<!--" (changes how "</script" is
/// read) appears; "<\/" and "\u003c" are the same JSON. One pass: replacing in place was quadratic (a 41 MB page
/// with 240,000 "</" took minutes).
static std::string scriptSafe(const std::string &json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && json.compare(i, 2, "</") == 0)
      out += "<\\";
    else if (json[i] == '<' && json.compare(i, 4, "<!--") == 0)
      out += "\\u003c";
    else
      out += json[i];
  }
  return out;
}

bool writeViewer(const std::string &path, const Trace &trace, const CompileTarget *target, std::string &error) {
  bool asJson = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  json data = viewerData(trace, target, !asJson);
  std::string text;
  if (asJson) {
    text = data.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  } else {
    std::string page = kViewerPage;
    size_t slot = page.find("@DATA@");
    text = page.substr(0, slot) + scriptSafe(data.dump(-1, ' ', false, json::error_handler_t::replace)) +
           page.substr(slot + 6);
  }
  if (writeFileAtomic(path, text, error))
    return true;
  error = "cannot write '" + path + "': " + error;
  return false;
}

} // namespace tgc::viz
