//===- Arg.cpp - The static argument of a UOp -------------------*- C++ -*-===//
// Equality, hashing, ordering and canonical printing of args.
//===----------------------------------------------------------------------===//

#include "IR/Arg.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace tgc {

uint64_t hashCombine(uint64_t seed, uint64_t v) {
  // splitmix64 finalizer over the mixed value: cheap and well distributed.
  uint64_t x = seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t hashBytes(const void *data, size_t n, uint64_t seed) {
  // FNV-1a, then mixed.
  uint64_t h = 0xcbf29ce484222325ull;
  auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return hashCombine(seed, h);
}

Arg::Arg(double v) {
  if (std::isnan(v))
    v = std::numeric_limits<double>::quiet_NaN();
  v_ = v;
}

Arg Arg::ints(const std::vector<int64_t> &items) {
  Tuple t;
  t.reserve(items.size());
  for (int64_t i : items)
    t.emplace_back(i);
  return Arg(std::move(t));
}

bool Arg::isIntTuple() const {
  if (!isTuple())
    return false;
  for (const Arg &a : getTuple())
    if (!a.isInt())
      return false;
  return true;
}

std::vector<int64_t> Arg::intTuple() const {
  std::vector<int64_t> out;
  for (const Arg &a : getTuple())
    out.push_back(a.getInt());
  return out;
}

bool Arg::isIntTupleOf(int64_t v) const {
  if (!isTuple())
    return false;
  for (const Arg &a : getTuple())
    if (!a.isInt() || a.getInt() != v)
      return false;
  return true;
}

bool operator==(const Arg &a, const Arg &b) {
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case Arg::Kind::None: return true;
  case Arg::Kind::Int: return a.getInt() == b.getInt();
  case Arg::Kind::Float: return std::bit_cast<uint64_t>(a.getFloat()) == std::bit_cast<uint64_t>(b.getFloat());
  case Arg::Kind::Bool: return a.getBool() == b.getBool();
  case Arg::Kind::String: return a.getString() == b.getString();
  case Arg::Kind::DType: return a.getDType() == b.getDType();
  case Arg::Kind::Op: return a.getOp() == b.getOp();
  case Arg::Kind::Tuple: return a.getTuple() == b.getTuple();
  }
  return false;
}

uint64_t Arg::hash() const {
  uint64_t h = hashCombine(0x1234, uint64_t(kind()));
  switch (kind()) {
  case Kind::None: return h;
  case Kind::Int: return hashCombine(h, uint64_t(getInt()));
  case Kind::Float: return hashCombine(h, std::bit_cast<uint64_t>(getFloat()));
  case Kind::Bool: return hashCombine(h, getBool());
  case Kind::String: return hashBytes(getString().data(), getString().size(), h);
  case Kind::DType: return hashCombine(h, getDType().bitsKey());
  case Kind::Op: return hashCombine(h, uint64_t(getOp()));
  case Kind::Tuple:
    for (const Arg &a : getTuple())
      h = hashCombine(h, a.hash());
    return hashCombine(h, getTuple().size());
  }
  return h;
}

template <typename T> static int cmp3(const T &a, const T &b) { return a < b ? -1 : (b < a ? 1 : 0); }

int Arg::compare(const Arg &a, const Arg &b) {
  if (a.kind() != b.kind())
    return cmp3(int(a.kind()), int(b.kind()));
  switch (a.kind()) {
  case Kind::None: return 0;
  case Kind::Int: return cmp3(a.getInt(), b.getInt());
  case Kind::Float: return cmp3(std::bit_cast<uint64_t>(a.getFloat()), std::bit_cast<uint64_t>(b.getFloat()));
  case Kind::Bool: return cmp3(a.getBool(), b.getBool());
  case Kind::String: return cmp3(a.getString(), b.getString());
  case Kind::DType: return cmp3(a.getDType().bitsKey(), b.getDType().bitsKey());
  case Kind::Op: return cmp3(int(a.getOp()), int(b.getOp()));
  case Kind::Tuple: {
    const Tuple &x = a.getTuple();
    const Tuple &y = b.getTuple();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (int c = compare(x[i], y[i]))
        return c;
    return cmp3(x.size(), y.size());
  }
  }
  return 0;
}

template <typename T> static std::string formatShortest(T v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

std::string formatDouble(double v) { return formatShortest(v); }
std::string formatFloat(float v) { return formatShortest(v); }

std::string quoteString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20 || c >= 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  return out + "\"";
}

std::string Arg::str() const {
  switch (kind()) {
  case Kind::None: return "";
  case Kind::Int: return std::to_string(getInt());
  case Kind::Float: return formatDouble(getFloat());
  case Kind::Bool: return getBool() ? "true" : "false";
  case Kind::String: return quoteString(getString());
  case Kind::DType: return getDType().str();
  case Kind::Op: return std::string(opName(getOp()));
  case Kind::Tuple: {
    std::string s = "[";
    const Tuple &t = getTuple();
    for (size_t i = 0; i < t.size(); ++i) {
      if (i)
        s += ", ";
      s += t[i].str();
    }
    return s + "]";
  }
  }
  return "";
}

} // namespace tgc
