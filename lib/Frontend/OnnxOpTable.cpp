//===- OnnxOpTable.cpp - From ONNX operator names to importers --*- C++ -*-===//
// Generated from OnnxOps.def: the declarations, the sorted lookup table and the list for the docs.
//===----------------------------------------------------------------------===//

#include "Frontend/Onnx.h"
#include "Frontend/OnnxImporter.h"

#include <algorithm>
#include <cstring>

namespace tgc {
namespace onnximport {

#define ONNX_OP(Name, notes) void import##Name(NodeCtx &n);
#include "Frontend/OnnxOps.def"

namespace {

struct Entry {
  const char *name;
  OpImporter fn;
};

constexpr Entry kTable[] = {
#define ONNX_OP(Name, notes) {#Name, import##Name},
#include "Frontend/OnnxOps.def"
};

} // namespace

OpImporter findOpImporter(const std::string &opType) {
  auto it = std::lower_bound(std::begin(kTable), std::end(kTable), opType, [](const Entry &e, const std::string &name) {
    return std::strcmp(e.name, name.c_str()) < 0;
  });
  return it != std::end(kTable) && opType == it->name ? it->fn : nullptr;
}

} // namespace onnximport

const std::vector<OnnxOpInfo> &onnxOperators() {
  static const std::vector<OnnxOpInfo> ops = {
#define ONNX_OP(Name, notes) {#Name, notes},
#include "Frontend/OnnxOps.def"
  };
  return ops;
}

} // namespace tgc
