//===- Load.h - A model from a .uop or .onnx file ---------------*- C++ -*-===//
// Parse or import, then verify; the --dim and --bind flags of an ONNX model; arrays from .npy and .pb files.
//===----------------------------------------------------------------------===//

#pragma once

#include "Frontend/Onnx.h"
#include "IR/Module.h"
#include "Runtime/Array.h"
#include "Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tgc {

/// How an ONNX model is read (an imported model's weights go to a temporary file removed when tgc exits).
struct LoadOptions {
  std::vector<std::string> dims;  // NAME=SIZE or NAME=LO..HI (--dim)
  std::vector<std::string> binds; // NAME=FILE (--bind): ONNX graph inputs fixed to known data
};

/// Parse (a .uop) or import (an .onnx) and verify a model; diagnostics are printed. nullopt on any error.
std::optional<Module> loadModel(Context &ctx, const std::string &path, SourceManager &sm, DiagEngine &diags,
                                const LoadOptions &lo = {});

/// True when `path` names an ONNX model (by its extension).
bool isOnnxPath(const std::string &path);

/// Whether `path` is a file tgc made for this process only (an ONNX model's weights, removed when tgc exits).
bool isScratchFile(const std::string &path);

/// An array from a .npy file, or from an ONNX TensorProto (.pb); false with a one-line reason.
bool readArrayFile(const std::string &path, rt::Array &out, std::string &error);

/// The --bind flags as a map of arrays; false with a one-line reason.
bool parseBinds(const std::vector<std::string> &flags, std::map<std::string, rt::Array> &out, std::string &error);

/// `dims` with a NAME=SIZE added for each dynamic dimension of the ONNX model at `model` that it leaves out and an
/// --input array (NAME=FILE flags) gives a size to; false with a one-line reason (two arrays disagree on a size).
bool dimsFromInputs(const std::string &model, const std::vector<std::string> &inputFlags,
                    std::vector<std::string> &dims, std::string &error);

/// The --dim flags as a map: NAME=SIZE a size, NAME=LO..HI a variable within bounds; false with a one-line reason.
bool parseDims(const std::vector<std::string> &flags, std::map<std::string, OnnxDim> &out, std::string &error);

} // namespace tgc
