//===- Npy.h - numpy .npy files ---------------------------------*- C++ -*-===//
// Reading and writing .npy (format versions 1-3, little-endian, C order) for every element type.
//===----------------------------------------------------------------------===//
//
// bf16 has no numpy dtype; it is stored as descr '<V2' (raw 2-byte values) and read back as bf16.

#pragma once

#include "Runtime/Array.h"

#include <string>
#include <vector>

namespace tgc::rt {

/// Decode a .npy image. On failure returns false with a one-line reason in `error`.
bool decodeNpy(const uint8_t *data, size_t size, Array &out, std::string &error);
/// Encode an array as a version 1.0 .npy image.
std::string encodeNpy(const Array &a);

bool readNpy(const std::string &path, Array &out, std::string &error);
bool writeNpy(const std::string &path, const Array &a, std::string &error);
/// Write arrays[i] to paths[i], all or none: each goes to a temporary file first, and the targets are replaced
/// only once every file is written.
bool writeNpyAll(const std::vector<std::string> &paths, const std::vector<const Array *> &arrays,
                 std::string &error);

} // namespace tgc::rt
