//===- Op.cpp - The op enum, its names, groups and properties ---*- C++ -*-===//
// Tables generated from Ops.def.
//===----------------------------------------------------------------------===//

#include "IR/Op.h"

#include <array>
#include <string>
#include <unordered_map>

namespace tgc {
namespace {

struct OpInfo {
  std::string_view name;
  int arity;
  OpGroup group;
  uint32_t flags;
};

using namespace opflag;

constexpr std::array<OpInfo, kNumOps> kOps = {{
#define TGC_OP(Enum, text, arity, group, flags) {text, arity, OpGroup::group, flags},
#include "IR/Ops.def"
}};

} // namespace

std::string_view opName(Op op) { return kOps[size_t(op)].name; }
int opArity(Op op) { return kOps[size_t(op)].arity; }
OpGroup opGroup(Op op) { return kOps[size_t(op)].group; }
uint32_t opFlags(Op op) { return kOps[size_t(op)].flags; }

std::optional<Op> opFromName(std::string_view text) {
  static const std::unordered_map<std::string_view, Op> kByName = [] {
    std::unordered_map<std::string_view, Op> m;
    for (size_t i = 0; i < kOps.size(); ++i)
      m.emplace(kOps[i].name, Op(i));
    return m;
  }();
  auto it = kByName.find(text);
  if (it == kByName.end())
    return std::nullopt;
  return it->second;
}

OpSet OpSet::ofGroup(OpGroup g) {
  OpSet s;
  for (size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i].group == g)
      s.bits_.set(i);
  return s;
}

OpSet OpSet::withFlag(uint32_t flag) {
  OpSet s;
  for (size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i].flags & flag)
      s.bits_.set(i);
  return s;
}

namespace group {
const OpSet &unary() {
  static const OpSet s = OpSet::ofGroup(OpGroup::Unary);
  return s;
}
const OpSet &binary() {
  static const OpSet s = OpSet::ofGroup(OpGroup::Binary);
  return s;
}
const OpSet &ternary() {
  static const OpSet s = OpSet::ofGroup(OpGroup::Ternary);
  return s;
}
const OpSet &alu() {
  static const OpSet s = unary() | binary() | ternary();
  return s;
}
const OpSet &elementwise() {
  static const OpSet s = alu() | OpSet::ofGroup(OpGroup::Cast);
  return s;
}
const OpSet &movement() {
  static const OpSet s = OpSet::ofGroup(OpGroup::Movement);
  return s;
}
const OpSet &composite() {
  static const OpSet s = OpSet::ofGroup(OpGroup::Composite);
  return s;
}
const OpSet &comparison() {
  static const OpSet s = {Op::Cmplt, Op::Cmpne, Op::Cmpeq};
  return s;
}
} // namespace group

} // namespace tgc
