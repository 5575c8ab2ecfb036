//===- DType.h - Element types: scalars, vectors, pointers ------*- C++ -*-===//
// A DType is a scalar type, optionally a short vector of it, optionally a pointer to that in an address space.
//===----------------------------------------------------------------------===//
//
// Why vector and pointer types rather than shapes on every node (tinygrad's newest design): kernel-level code is
// rendered to LLVM IR and C, whose value types are exactly scalars, vectors and pointers; keeping those in the dtype
// lets every renderer map a UOp's dtype to a target type directly. Tensor shapes are a separate field of each
// tensor-level UOp (see UOp.h), so the two concepts never mix.

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tgc {

enum class Scalar : uint8_t {
#define TGC_SCALAR(Enum, text, bits, kind, cname, runtime) Enum,
#include "IR/DTypes.def"
};

enum class ScalarKind : uint8_t { Void, Bool, Signed, Unsigned, Float, Index };

/// Where a pointer points. None means the DType is not a pointer.
enum class AddrSpace : uint8_t { None, Global, Local, Reg };

constexpr int kNumScalars = 0
#define TGC_SCALAR(Enum, text, bits, kind, cname, runtime) +1
#include "IR/DTypes.def"
    ;

std::string_view scalarName(Scalar s);
std::string_view scalarCName(Scalar s);
int scalarBits(Scalar s);
ScalarKind scalarKind(Scalar s);
/// The runtime ABI's tgc_dtype for buffers of this scalar (DTypes.def's runtime column); -1 for void and index.
int scalarRuntimeCode(Scalar s);
/// The scalar whose tgc_dtype (and rt::ElemType) is `code`; nullopt for none.
std::optional<Scalar> scalarOfRuntimeCode(int code);
std::optional<Scalar> scalarFromName(std::string_view text);
std::string_view addrSpaceName(AddrSpace a);

class DType {
public:
  constexpr DType() = default;
  constexpr DType(Scalar s) : scalar_(s) {}
  constexpr DType(Scalar s, uint16_t lanes, AddrSpace addr) : scalar_(s), addr_(addr), lanes_(lanes) {}

  Scalar scalar() const { return scalar_; }
  uint16_t lanes() const { return lanes_; }
  AddrSpace addrSpace() const { return addr_; }

  bool isPtr() const { return addr_ != AddrSpace::None; }
  bool isVector() const { return !isPtr() && lanes_ > 1; }
  bool isVoid() const { return !isPtr() && scalar_ == Scalar::Void; }
  bool isBool() const { return !isPtr() && scalar_ == Scalar::Bool; }
  bool isFloat() const { return !isPtr() && scalarKind(scalar_) == ScalarKind::Float; }
  /// Signed, unsigned or index integers (not bool).
  bool isInt() const;
  bool isSigned() const;
  bool isUnsigned() const { return !isPtr() && scalarKind(scalar_) == ScalarKind::Unsigned; }
  bool isIndex() const { return !isPtr() && scalar_ == Scalar::Index; }

  /// Bits of one lane of a value of this type (pointers: 64).
  int bits() const { return isPtr() ? 64 : scalarBits(scalar_); }
  /// Bytes one element occupies in memory (all lanes; pointers are 8).
  int64_t itemSize() const;

  /// The scalar type of one lane of a value (not a pointer).
  DType element() const { return DType(scalar_); }
  /// The same element type with n lanes.
  DType vec(uint16_t n) const { return DType(scalar_, n, AddrSpace::None); }
  /// A pointer to this type.
  DType ptr(AddrSpace a = AddrSpace::Global) const { return DType(scalar_, lanes_, a); }
  /// The type a pointer points to.
  DType pointee() const { return DType(scalar_, lanes_, AddrSpace::None); }

  /// Canonical spelling in the .uop format: f32, f32x4, ptr<f32>, ptr<f32x4, local>.
  std::string str() const;
  uint32_t bitsKey() const { return uint32_t(scalar_) | uint32_t(addr_) << 8 | uint32_t(lanes_) << 16; }

  friend bool operator==(DType a, DType b) { return a.bitsKey() == b.bitsKey(); }
  friend bool operator!=(DType a, DType b) { return !(a == b); }

private:
  Scalar scalar_ = Scalar::Void;
  AddrSpace addr_ = AddrSpace::None;
  uint16_t lanes_ = 1;
};

namespace dt {
#define TGC_SCALAR(Enum, text, bits, kind, cname, runtime) inline constexpr DType Enum{Scalar::Enum};
#include "IR/DTypes.def"
} // namespace dt

/// Smallest and largest value of an integer or bool dtype, when it fits in int64 (u64: max is clamped).
int64_t dtypeMin(DType d);
int64_t dtypeMax(DType d);

} // namespace tgc
