//===- Onnx.h - Importing ONNX models ---------------------------*- C++ -*-===//
// Reads an .onnx file (Debian's ONNX protobuf classes) into a tensor-level Module plus the initializers' data.
//===----------------------------------------------------------------------===//
//
// Every ONNX node becomes tensor-level UOps (composites where tgc has one: conv2d, matmul, batchnorm, ...), built
// with the parser's checks (IR/Sugar.h: buildNode). Shapes are static: shape computations (Shape, Gather, Concat,
// ... on constants) are folded at import by the reference interpreter, and a dynamic dimension of a graph input
// needs a size (--dim NAME=SIZE). Problems are one error naming the node and its operator, never a crash.

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

struct OnnxImportOptions {
  /// Sizes of named dynamic dimensions (ONNX dim_param), e.g. {"batch_size", 1}.
  std::map<std::string, int64_t> dims;
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

/// Read a serialized TensorProto (the .pb files of ONNX's test data) into an array; false with a one-line reason.
bool readOnnxTensorFile(const std::string &path, rt::Array &out, std::string &name, std::string &error);

} // namespace tgc
