//===- Onnx.h - Importing ONNX models ---------------------------*- C++ -*-===//
// Reads an .onnx file (Debian's ONNX protobuf classes) into a tensor-level Module plus the initializers' data.
//===----------------------------------------------------------------------===//
//
// Every ONNX node becomes tensor-level UOps (composites where tgc has one: conv2d, matmul, batchnorm, ...), built
// with the parser's checks (IR/Sugar.h: buildNode). Shape computations (Shape, Gather, Concat, ... on constants)
// are folded at import by the reference interpreter. A dynamic dimension of a graph input needs a size (--dim
// NAME=SIZE) or bounds (--dim NAME=LO..HI): then it stays a variable (a define_var), as in a .uop model, wherever
// the model does not compute with its value (a Shape or Size of it is an error). Problems are one error naming the
// node and its operator, never a crash.

#pragma once

#include "IR/Module.h"
#include "Runtime/Array.h"
#include "Support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tgc {

/// What a named dynamic dimension (ONNX dim_param) becomes: a size, or a variable within bounds.
struct OnnxDim {
  int64_t lo = 0;
  int64_t hi = 0;
  bool variable = false; // --dim NAME=LO..HI; otherwise lo == hi, the size
};

struct OnnxImportOptions {
  /// The named dynamic dimensions, e.g. {"batch_size", {1, 1}} or {"N", {1, 64, true}}.
  std::map<std::string, OnnxDim> dims;
  /// Graph inputs fixed to known data (--bind NAME=FILE): they become weights, and shape computations on them fold.
  std::map<std::string, rt::Array> bound;
  /// The safetensors file the module's `weights` directive names (relative to the .uop file).
  std::string weightsFile;
};

struct OnnxImport {
  Module module;
  /// The data of every weight node the module reaches, by name, sorted.
  std::vector<std::pair<std::string, rt::Array>> weights;
};

/// Import the model at `path`. Errors go to `diags` as `path: error: node N 'name' (Op): ...`; nullopt on any.
std::optional<OnnxImport> importOnnx(Context &ctx, const std::string &path, const OnnxImportOptions &opts,
                                     DiagEngine &diags);

/// Import from bytes already in memory (the fuzzer); `path` is only used in messages.
std::optional<OnnxImport> importOnnxBytes(Context &ctx, const std::string &bytes, const std::string &path,
                                          const OnnxImportOptions &opts, DiagEngine &diags);

/// One supported operator, for docs/onnx.md (generated) and `tgc import --list-ops`.
struct OnnxOpInfo {
  const char *name;
  const char *notes;
};
const std::vector<OnnxOpInfo> &onnxOperators();

/// The graph inputs of the model at `path` (initializers excluded) and the dim_param of each axis ("" for a static
/// one), for taking dynamic sizes from input arrays; false with a one-line reason.
struct OnnxInputDims {
  std::string name;
  std::vector<std::string> dimParams;
};
bool readOnnxInputDims(const std::string &path, std::vector<OnnxInputDims> &out, std::string &error);

/// Read a serialized TensorProto (the .pb files of ONNX's test data) into an array; false with a one-line reason.
bool readOnnxTensorFile(const std::string &path, rt::Array &out, std::string &name, std::string &error);

} // namespace tgc
