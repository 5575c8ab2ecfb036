//===- Load.cpp - A model from a .uop or .onnx file -------------*- C++ -*-===//
// Parse or import, then verify; an ONNX model's weights go to a scratch directory removed when the process exits.
//===----------------------------------------------------------------------===//

#include "Driver/Load.h"

#include "Frontend/Onnx.h"
#include "IR/Parser.h"
#include "IR/Verifier.h"
#include "Runtime/Npy.h"
#include "Runtime/Safetensors.h"
#include "Support/FileIO.h"

#include <cstdlib>
#include <filesystem>

namespace tgc {

namespace fs = std::filesystem;

namespace {

/// A directory removed (with its files) when tgc exits: where `tgc compile|run model.onnx` puts the weights.
class ScratchDir {
public:
  ~ScratchDir() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  bool holds(const std::string &file) const {
    return !path_.empty() && fs::path(file).parent_path() == fs::path(path_);
  }
  const std::string &get() {
    if (path_.empty())
      path_ = makeScratchDir("tgc"); // also removes those of tgc processes that were interrupted
    return path_;
  }

private:
  std::string path_;
};

ScratchDir scratch;

} // namespace

bool isScratchFile(const std::string &path) { return scratch.holds(path); }

namespace {

std::optional<Module> importModel(Context &ctx, const std::string &path, DiagEngine &diags, const LoadOptions &lo) {
  OnnxImportOptions io;
  std::string err;
  if (!parseDims(lo.dims, io.dims, err) || !parseBinds(lo.binds, io.bound, err)) {
    diags.error(Loc{}, err);
    return std::nullopt;
  }
  std::optional<OnnxImport> imp = importOnnx(ctx, path, io, diags);
  if (!imp)
    return std::nullopt;
  if (!imp->weights.empty()) {
    const std::string &dir = scratch.get();
    fs::path file = fs::absolute(fs::path(dir) / (fs::path(path).stem().string() + ".safetensors"));
    if (dir.empty() || !rt::writeSafetensors(file.string(), imp->weights, err)) {
      diags.error(Loc{}, dir.empty() ? "cannot make a temporary directory for the weights" : err);
      return std::nullopt;
    }
    imp->module.weightFiles = {file.string()};
  }
  return std::move(imp->module);
}

} // namespace

bool isOnnxPath(const std::string &path) { return fs::path(path).extension() == ".onnx"; }

bool readArrayFile(const std::string &path, rt::Array &out, std::string &error) {
  std::string pbName;
  if (fs::path(path).extension() == ".pb")
    return readOnnxTensorFile(path, out, pbName, error);
  return rt::readNpy(path, out, error);
}

bool parseBinds(const std::vector<std::string> &flags, std::map<std::string, rt::Array> &out, std::string &error) {
  for (const std::string &f : flags) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "--bind needs NAME=FILE (.npy or .pb), got '" + f + "'";
      return false;
    }
    if (!readArrayFile(f.substr(eq + 1), out[f.substr(0, eq)], error))
      return false;
  }
  return true;
}

bool parseDims(const std::vector<std::string> &flags, std::map<std::string, int64_t> &out, std::string &error) {
  for (const std::string &f : flags) {
    size_t eq = f.find('=');
    char *end = nullptr;
    long long v = eq == std::string::npos ? -1 : std::strtoll(f.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || !end || *end || end == f.c_str() + eq + 1 || v < 0) {
      error = "--dim needs NAME=SIZE with a size >= 0, got '" + f + "'";
      return false;
    }
    out[f.substr(0, eq)] = v;
  }
  return true;
}

std::optional<Module> loadModel(Context &ctx, const std::string &path, SourceManager &sm, DiagEngine &diags,
                                const LoadOptions &lo) {
  if (isOnnxPath(path)) {
    std::optional<Module> m = importModel(ctx, path, diags, lo);
    if (m && verify(*m, detectStage(m->root), diags) > 0)
      return std::nullopt;
    return m;
  }
  if (!lo.dims.empty() || !lo.binds.empty()) {
    diags.error(Loc{}, "--dim and --bind apply to ONNX models only");
    return std::nullopt;
  }
  std::string text, err;
  if (!readFile(path, text, err)) {
    diags.error(Loc{}, "cannot read '" + path + "': " + err);
    return std::nullopt;
  }
  std::string name = path == "-" ? "<stdin>" : path;
  sm.add(name, text);
  std::optional<Module> m = parseModule(ctx, text, name, diags);
  if (!m)
    return std::nullopt;
  if (!m->root) {
    diags.error(Loc{name, 0, 0}, "the model is empty");
    return std::nullopt;
  }
  if (verify(*m, detectStage(m->root), diags) > 0)
    return std::nullopt;
  return m;
}

} // namespace tgc
