//===- Safetensors.h - Weights in safetensors files -------------*- C++ -*-===//
// Memory-maps a .safetensors file and validates its header; tensors are views into the mapping.
//===----------------------------------------------------------------------===//

#pragma once

#include "Runtime/Array.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tgc::rt {

class SafetensorsFile {
public:
  struct Entry {
    ElemType type;
    std::vector<int64_t> shape;
    const uint8_t *data;
    size_t size;
  };

  SafetensorsFile() = default;
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;
  ~SafetensorsFile();

  /// Map and validate the file; on failure returns false with a one-line reason.
  bool open(const std::string &path, std::string &error);
  /// Validate a safetensors image already in memory (the file's bytes); entries point into it.
  bool parse(const uint8_t *data, size_t size, std::string &error) { return parseHeader(data, size, error); }
  const Entry *find(const std::string &name) const;
  const std::map<std::string, Entry> &entries() const { return entries_; }
  const std::string &path() const { return path_; }

private:
  bool parseHeader(const uint8_t *base, size_t size, std::string &error);

  std::string path_;
  void *map_ = nullptr;
  size_t mapSize_ = 0;
  std::map<std::string, Entry> entries_;
};

/// Write tensors as a safetensors file (names sorted, data 8-byte aligned).
bool writeSafetensors(const std::string &path, const std::vector<std::pair<std::string, Array>> &tensors,
                      std::string &error);

} // namespace tgc::rt
