//===- DType.cpp - Element types: scalars, vectors, pointers ----*- C++ -*-===//
// Names and properties of dtypes, generated from DTypes.def.
//===----------------------------------------------------------------------===//

#include "IR/DType.h"

#include "Runtime/tgc_runtime.h"

#include <array>
#include <limits>

namespace tgc {
namespace {

struct ScalarInfo {
  std::string_view name;
  int bits;
  ScalarKind kind;
  std::string_view cname;
  int runtime;
};

constexpr std::array<ScalarInfo, kNumScalars> kScalars = {{
#define TGC_SCALAR(Enum, text, bits, kind, cname, runtime) {text, bits, ScalarKind::kind, cname, runtime},
#include "IR/DTypes.def"
}};

} // namespace

std::string_view scalarName(Scalar s) { return kScalars[size_t(s)].name; }
std::string_view scalarCName(Scalar s) { return kScalars[size_t(s)].cname; }
int scalarBits(Scalar s) { return kScalars[size_t(s)].bits; }
ScalarKind scalarKind(Scalar s) { return kScalars[size_t(s)].kind; }
int scalarRuntimeCode(Scalar s) { return kScalars[size_t(s)].runtime; }

std::optional<Scalar> scalarOfRuntimeCode(int code) {
  for (size_t i = 0; i < kScalars.size(); ++i)
    if (code >= 0 && kScalars[i].runtime == code)
      return Scalar(i);
  return std::nullopt;
}

std::optional<Scalar> scalarFromName(std::string_view text) {
  for (size_t i = 0; i < kScalars.size(); ++i)
    if (kScalars[i].name == text)
      return Scalar(i);
  return std::nullopt;
}

std::string_view addrSpaceName(AddrSpace a) {
  switch (a) {
  case AddrSpace::None:
    return "none";
  case AddrSpace::Global:
    return "global";
  case AddrSpace::Local:
    return "local";
  case AddrSpace::Reg:
    return "reg";
  }
  return "?";
}

bool DType::isInt() const {
  if (isPtr())
    return false;
  ScalarKind k = scalarKind(scalar_);
  return k == ScalarKind::Signed || k == ScalarKind::Unsigned || k == ScalarKind::Index;
}

bool DType::isSigned() const {
  if (isPtr())
    return false;
  ScalarKind k = scalarKind(scalar_);
  return k == ScalarKind::Signed || k == ScalarKind::Index;
}

int64_t DType::itemSize() const {
  if (isPtr())
    return 8;
  return int64_t(scalarBits(scalar_) / 8) * lanes_;
}

std::string DType::str() const {
  std::string s(scalarName(scalar_));
  if (lanes_ > 1)
    s += "x" + std::to_string(lanes_);
  if (!isPtr())
    return s;
  if (addr_ == AddrSpace::Global)
    return "ptr<" + s + ">";
  return "ptr<" + s + ", " + std::string(addrSpaceName(addr_)) + ">";
}

int64_t dtypeMin(DType d) {
  if (d.isBool() || d.isUnsigned())
    return 0;
  if (d.isIndex())
    return std::numeric_limits<int64_t>::min();
  int b = d.bits();
  return b >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (b - 1));
}

int64_t dtypeMax(DType d) {
  if (d.isBool())
    return 1;
  int b = d.bits();
  if (d.isUnsigned())
    return b >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << b) - 1;
  return b >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (b - 1)) - 1;
}

} // namespace tgc
