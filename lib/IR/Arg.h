//===- Arg.h - The static argument of a UOp ---------------------*- C++ -*-===//
// A small immutable variant: none, int, float, bool, string, dtype, op, or a tuple of args.
//===----------------------------------------------------------------------===//
//
// Floats compare by bit pattern, so -0.0 and 0.0 are different args and NaN equals NaN (all NaNs are stored as one
// canonical quiet NaN). This is what hash-consing needs: equal args must mean interchangeable nodes.

#pragma once

#include "IR/DType.h"
#include "IR/Op.h"

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tgc {

class Arg {
public:
  enum class Kind : uint8_t { None, Int, Float, Bool, String, DType, Op, Tuple };
  using Tuple = std::vector<Arg>;

  Arg() = default;
  Arg(int64_t v) : v_(v) {}
  Arg(int v) : v_(int64_t(v)) {}
  Arg(double v);
  Arg(bool v) : v_(v) {}
  Arg(std::string v) : v_(std::move(v)) {}
  Arg(const char *v) : v_(std::string(v)) {}
  Arg(DType v) : v_(v) {}
  Arg(Op v) : v_(v) {}
  Arg(Tuple v) : v_(std::move(v)) {}
  static Arg tuple(std::initializer_list<Arg> items) { return Arg(Tuple(items)); }
  static Arg ints(const std::vector<int64_t> &items);

  Kind kind() const { return Kind(v_.index()); }
  bool isNone() const { return kind() == Kind::None; }
  bool isInt() const { return kind() == Kind::Int; }
  bool isFloat() const { return kind() == Kind::Float; }
  bool isBool() const { return kind() == Kind::Bool; }
  bool isString() const { return kind() == Kind::String; }
  bool isDType() const { return kind() == Kind::DType; }
  bool isOp() const { return kind() == Kind::Op; }
  bool isTuple() const { return kind() == Kind::Tuple; }

  int64_t getInt() const { return std::get<int64_t>(v_); }
  double getFloat() const { return std::get<double>(v_); }
  bool getBool() const { return std::get<bool>(v_); }
  const std::string &getString() const { return std::get<std::string>(v_); }
  DType getDType() const { return std::get<DType>(v_); }
  Op getOp() const { return std::get<Op>(v_); }
  const Tuple &getTuple() const { return std::get<Tuple>(v_); }

  /// True when this is a tuple of ints (possibly empty).
  bool isIntTuple() const;
  /// The ints of a tuple of ints.
  std::vector<int64_t> intTuple() const;
  /// True when this is a tuple of ints that all equal v (a stride of all 1s, padding of all 0s).
  bool isIntTupleOf(int64_t v) const;

  /// Deterministic structural hash (no pointers, same value on every run).
  uint64_t hash() const;
  /// Canonical text (the .uop spelling).
  std::string str() const;

  friend bool operator==(const Arg &a, const Arg &b);
  friend bool operator!=(const Arg &a, const Arg &b) { return !(a == b); }
  /// A total, deterministic order (used to sort operands canonically).
  static int compare(const Arg &a, const Arg &b);

private:
  std::variant<std::monostate, int64_t, double, bool, std::string, DType, Op, Tuple> v_;
};

/// Shortest text that reads back as exactly `v` (always with a '.', an 'e', or inf/nan, so it reads as a float).
std::string formatDouble(double v);
/// Same for a value of float32 precision.
std::string formatFloat(float v);
/// Quoted string with C escapes.
std::string quoteString(const std::string &s);

uint64_t hashCombine(uint64_t seed, uint64_t v);
uint64_t hashBytes(const void *data, size_t n, uint64_t seed = 0);

} // namespace tgc
