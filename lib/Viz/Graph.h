//===- Graph.h - Graphs as the viewer draws them ----------------*- C++ -*-===//
// Nodes with labels and op groups, laid out as SVG by Graphviz (libgvc); programs collapse to calls and buffers.
//===----------------------------------------------------------------------===//

#pragma once

#include "IR/UOp.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tgc::viz {

struct ViewNode {
  std::string id;    // "n3" (the node printed as %3), "c2" (call 2), "b5" (buffer 5)
  std::string label; // what the box shows
  std::string group; // the op group, for the colour
  std::string text;  // its line of .uop text
  std::string loc;   // file:line:col where it was parsed, or ""
};

/// A drawable graph. Tensor and kernel graphs have one node per UOp (a linear kernel's list itself is left out);
/// programs are collapsed to their calls and buffers, with an edge from each buffer a call reads and to each it
/// writes. `of` maps each UOp drawn to its node's id.
struct GraphView {
  std::vector<ViewNode> nodes;
  std::vector<std::pair<size_t, size_t>> edges;
  std::unordered_map<const UOp *, std::string> of;
  bool program = false;
};

/// Whether `root` is a program (its items are calls).
bool isProgram(const UOp *root);

GraphView viewOf(const UOp *root);

/// Graphs with more nodes than this are not laid out (the viewer shows their text).
constexpr size_t kMaxLayoutNodes = 400;

/// The graph as SVG (Graphviz's dot layout), or "" when it is too large or Graphviz fails.
std::string layoutSvg(const GraphView &g);

} // namespace tgc::viz
