//===- Safetensors.cpp - Weights in safetensors files -----------*- C++ -*-===//
// Format: u64 little-endian header size N, N bytes of JSON {name: {dtype, shape, data_offsets}}, then the data.
//===----------------------------------------------------------------------===//

#include "Runtime/Safetensors.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tgc::rt {
namespace {

struct StName {
  const char *name;
  ElemType type;
};
constexpr StName kNames[] = {{"BOOL", ElemType::Bool}, {"I8", ElemType::I8},   {"U8", ElemType::U8},
                             {"I16", ElemType::I16},   {"U16", ElemType::U16}, {"I32", ElemType::I32},
                             {"U32", ElemType::U32},   {"I64", ElemType::I64}, {"U64", ElemType::U64},
                             {"F16", ElemType::F16},   {"BF16", ElemType::BF16}, {"F32", ElemType::F32},
                             {"F64", ElemType::F64}};

bool typeFromSt(const std::string &s, ElemType &out) {
  for (const StName &n : kNames) {
    if (s == n.name) {
      out = n.type;
      return true;
    }
  }
  return false;
}

const char *stName(ElemType t) {
  for (const StName &n : kNames)
    if (n.type == t)
      return n.name;
  return "F32";
}

} // namespace

SafetensorsFile::~SafetensorsFile() {
  if (map_)
    ::munmap(map_, mapSize_);
}

bool SafetensorsFile::open(const std::string &path, std::string &error) {
  path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = "cannot read '" + path + "': not a regular file";
    return false;
  }
  mapSize_ = size_t(st.st_size);
  if (mapSize_ < 8) {
    ::close(fd);
    error = "'" + path + "': truncated safetensors file (no header size)";
    return false;
  }
  map_ = ::mmap(nullptr, mapSize_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    error = "cannot map '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (!parseHeader(static_cast<const uint8_t *>(map_), mapSize_, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

bool SafetensorsFile::parseHeader(const uint8_t *base, size_t size, std::string &error) {
  if (size < 8) {
    error = "truncated safetensors file (no header size)";
    return false;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = n << 8 | base[i];
  if (n > size - 8) {
    error = "truncated safetensors file (header of " + std::to_string(n) + " bytes does not fit)";
    return false;
  }
  nlohmann::json header = nlohmann::json::parse(base + 8, base + 8 + n, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    error = "bad safetensors header (not a JSON object)";
    return false;
  }
  const uint8_t *dataStart = base + 8 + n;
  size_t dataSize = size - 8 - n;
  for (auto &[name, e] : header.items()) {
    if (name == "__metadata__")
      continue;
    Entry entry{};
    bool ok = e.is_object() && e.contains("dtype") && e["dtype"].is_string() && e.contains("shape") &&
              e["shape"].is_array() && e.contains("data_offsets") && e["data_offsets"].is_array() &&
              e["data_offsets"].size() == 2;
    ok = ok && typeFromSt(e["dtype"].get<std::string>(), entry.type);
    if (ok) {
      for (auto &d : e["shape"]) {
        if (!d.is_number_unsigned()) {
          ok = false;
          break;
        }
        entry.shape.push_back(d.get<int64_t>());
      }
    }
    if (!ok || !e["data_offsets"][0].is_number_unsigned() || !e["data_offsets"][1].is_number_unsigned()) {
      error = "bad safetensors entry '" + name + "'";
      return false;
    }
    uint64_t begin = e["data_offsets"][0].get<uint64_t>();
    uint64_t end = e["data_offsets"][1].get<uint64_t>();
    int64_t numel = checkedNumel(entry.shape);
    if (numel < 0 || begin > end || end > dataSize ||
        end - begin != uint64_t(numel) * uint64_t(elemSize(entry.type))) {
      error = "safetensors entry '" + name + "' has data outside the file or of the wrong size (truncated file?)";
      return false;
    }
    entry.data = dataStart + begin;
    entry.size = size_t(end - begin);
    entries_.emplace(name, std::move(entry));
  }
  return true;
}

const SafetensorsFile::Entry *SafetensorsFile::find(const std::string &name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

bool writeSafetensors(const std::string &path, const std::vector<std::pair<std::string, Array>> &tensors,
                      std::string &error) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto &[name, a] : tensors) {
    while (data.size() % 8)
      data += '\0';
    size_t begin = data.size();
    data.append(reinterpret_cast<const char *>(a.data.data()), a.data.size());
    header[name] = {{"dtype", stName(a.type)}, {"shape", a.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  while ((8 + h.size()) % 8)
    h += ' ';
  std::string out(8, '\0');
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i)
    out[size_t(i)] = char((n >> (8 * i)) & 0xff);
  out += h;
  out += data;
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "wb");
  bool ok = f && std::fwrite(out.data(), 1, out.size(), f) == out.size();
  if (f && std::fclose(f) != 0)
    ok = false;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

} // namespace tgc::rt
