//===- Npy.cpp - numpy .npy files -------------------------------*- C++ -*-===//
// A small parser for the header dict ({'descr': ..., 'fortran_order': ..., 'shape': (...)}) and raw data.
//===----------------------------------------------------------------------===//

#include "Runtime/Npy.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tgc::rt {
namespace {

struct Descr {
  std::string_view text;
  ElemType type;
};
constexpr Descr kDescrs[] = {
    {"|b1", ElemType::Bool}, {"|i1", ElemType::I8},  {"|u1", ElemType::U8},   {"<i2", ElemType::I16},
    {"<u2", ElemType::U16},  {"<i4", ElemType::I32}, {"<u4", ElemType::U32},  {"<i8", ElemType::I64},
    {"<u8", ElemType::U64},  {"<f2", ElemType::F16}, {"<V2", ElemType::BF16}, {"<f4", ElemType::F32},
    {"<f8", ElemType::F64},
};

std::string_view descrOf(ElemType t) {
  for (const Descr &d : kDescrs)
    if (d.type == t)
      return d.text;
  return "";
}

bool parseDescr(std::string descr, ElemType &out) {
  // single-byte types may be written with '<' or '=' too; '=' means native (little-endian here)
  if (descr.size() == 3 && (descr[0] == '=' || (descr[0] == '<' && descr[2] == '1')))
    descr[0] = descr[2] == '1' ? '|' : '<';
  for (const Descr &d : kDescrs) {
    if (d.text == descr) {
      out = d.type;
      return true;
    }
  }
  return false;
}

/// A cursor over the header dict text.
class Header {
public:
  explicit Header(std::string_view s) : s_(s) {}

  bool parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape, std::string &error) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skip();
    if (!eat('{'))
      return fail(error, "expected '{'");
    while (true) {
      skip();
      if (eat('}'))
        break;
      std::string key;
      if (!readString(key))
        return fail(error, "expected a key");
      skip();
      if (!eat(':'))
        return fail(error, "expected ':'");
      skip();
      if (key == "descr") {
        if (!readString(descr))
          return fail(error, "bad 'descr'");
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (!readBool(fortran))
          return fail(error, "bad 'fortran_order'");
        haveFortran = true;
      } else if (key == "shape") {
        if (!readTuple(shape))
          return fail(error, "bad 'shape'");
        haveShape = true;
      } else {
        return fail(error, "unknown key '" + key + "'");
      }
      skip();
      if (!eat(',')) {
        skip();
        if (!eat('}'))
          return fail(error, "expected ',' or '}'");
        break;
      }
    }
    if (!haveDescr || !haveFortran || !haveShape)
      return fail(error, "header lacks descr, fortran_order or shape");
    return true;
  }

private:
  bool fail(std::string &error, const std::string &why) {
    error = "bad .npy header: " + why;
    return false;
  }
  void skip() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\t'))
      ++p_;
  }
  bool eat(char c) {
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool readString(std::string &out) {
    if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"'))
      return false;
    char q = s_[p_++];
    size_t end = s_.find(q, p_);
    if (end == std::string_view::npos)
      return false;
    out = std::string(s_.substr(p_, end - p_));
    p_ = end + 1;
    return true;
  }
  bool readBool(bool &out) {
    if (s_.substr(p_, 4) == "True") {
      out = true;
      p_ += 4;
      return true;
    }
    if (s_.substr(p_, 5) == "False") {
      out = false;
      p_ += 5;
      return true;
    }
    return false;
  }
  bool readTuple(std::vector<int64_t> &out) {
    if (!eat('('))
      return false;
    while (true) {
      skip();
      if (eat(')'))
        return true;
      int64_t v = 0;
      bool any = false;
      while (p_ < s_.size() && s_[p_] >= '0' && s_[p_] <= '9') {
        if (v > (int64_t(1) << 50))
          return false;
        v = v * 10 + (s_[p_++] - '0');
        any = true;
      }
      if (!any)
        return false;
      out.push_back(v);
      skip();
      if (!eat(',')) {
        skip();
        return eat(')');
      }
    }
  }

  std::string_view s_;
  size_t p_ = 0;
};

uint32_t readLE(const uint8_t *p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = v << 8 | p[i];
  return v;
}

} // namespace

bool decodeNpy(const uint8_t *data, size_t size, Array &out, std::string &error) {
  if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0) {
    error = "not a .npy file (bad magic)";
    return false;
  }
  int major = data[6];
  if (major < 1 || major > 3) {
    error = "unsupported .npy version " + std::to_string(major);
    return false;
  }
  size_t lenBytes = major == 1 ? 2 : 4;
  if (size < 8 + lenBytes) {
    error = "truncated .npy header";
    return false;
  }
  size_t headerLen = readLE(data + 8, int(lenBytes));
  size_t dataStart = 8 + lenBytes + headerLen;
  if (dataStart > size) {
    error = "the .npy header (version " + std::to_string(major) + ") claims " + std::to_string(headerLen) +
            " bytes but the file has " + std::to_string(size) + ": it is truncated or its header is corrupt";
    return false;
  }
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  Header h(std::string_view(reinterpret_cast<const char *>(data) + 8 + lenBytes, headerLen));
  if (!h.parse(descr, fortran, shape, error))
    return false;
  if (fortran) {
    error = "Fortran-order .npy arrays are not supported (save with C order)";
    return false;
  }
  if (!parseDescr(descr, out.type)) {
    error = "unsupported .npy dtype '" + descr + "'";
    return false;
  }
  out.shape = shape;
  int64_t n = checkedNumel(shape);
  if (n < 0) {
    error = "bad .npy shape " + shapeString(shape);
    return false;
  }
  size_t bytes = size_t(n) * size_t(elemSize(out.type));
  if (size - dataStart < bytes) {
    error = "truncated .npy data: expected " + std::to_string(bytes) + " bytes, found " +
            std::to_string(size - dataStart);
    return false;
  }
  out.data.assign(data + dataStart, data + dataStart + bytes);
  return true;
}

std::string encodeNpy(const Array &a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : (i + 1 < a.shape.size() ? ", " : ""));
  shape += ")";
  std::string header =
      "{'descr': '" + std::string(descrOf(a.type)) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char *>(a.data.data()), a.data.size());
  return out;
}

bool readNpy(const std::string &path, Array &out, std::string &error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  std::string bytes = ss.str();
  if (!decodeNpy(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), out, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

bool writeNpy(const std::string &path, const Array &a, std::string &error) {
  return writeNpyAll({path}, {&a}, error);
}

bool writeNpyAll(const std::vector<std::string> &paths, const std::vector<const Array *> &arrays,
                 std::string &error) {
  // every file is written beside its target first; only when all are written do they replace the targets
  std::vector<std::string> temps;
  auto removeTemps = [&] {
    for (const std::string &t : temps)
      std::remove(t.c_str());
  };
  for (const std::string &p : paths) {
    struct stat st;
    if (stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) { // the one way a rename below could fail
      error = "cannot write '" + p + "': " + std::strerror(EISDIR);
      return false;
    }
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string bytes = encodeNpy(*arrays[i]);
    temps.push_back(paths[i] + ".tmp");
    FILE *f = std::fopen(temps.back().c_str(), "wb");
    bool ok = f && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    ok = (f && std::fclose(f) == 0) && ok;
    if (!ok) {
      error = "cannot write '" + paths[i] + "': " + std::strerror(errno);
      removeTemps();
      return false;
    }
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (std::rename(temps[i].c_str(), paths[i].c_str()) != 0) {
      error = "cannot write '" + paths[i] + "': " + std::strerror(errno);
      removeTemps();
      return false;
    }
  }
  return true;
}

} // namespace tgc::rt
