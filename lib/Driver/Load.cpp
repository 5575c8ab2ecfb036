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

#include <algorithm>
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

namespace {

/// A whole non-negative decimal number, the whole of `text`.
std::optional<int64_t> parseSize(const std::string &text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18)
    return std::nullopt;
  return std::stoll(text);
}

} // namespace

bool parseDims(const std::vector<std::string> &flags, std::map<std::string, OnnxDim> &out, std::string &error) {
  for (const std::string &f : flags) {
    size_t eq = f.find('=');
    std::string value = eq == std::string::npos ? "" : f.substr(eq + 1);
    size_t dots = value.find("..");
    std::optional<int64_t> lo = parseSize(value.substr(0, dots));
    std::optional<int64_t> hi = dots == std::string::npos ? lo : parseSize(value.substr(dots + 2));
    if (eq == std::string::npos || eq == 0 || !lo || !hi || *hi < *lo || (dots != std::string::npos && *hi < 1)) {
      error = "--dim needs NAME=SIZE, or NAME=LO..HI with 0 <= LO <= HI and HI >= 1 for a variable, got '" + f + "'";
      return false;
    }
    out[f.substr(0, eq)] = OnnxDim{*lo, *hi, dots != std::string::npos};
  }
  return true;
}

/// The dynamic dimensions of `in` that `dims` leaves out, sized by the array `a` given for it.
static bool sizeFromArray(const OnnxInputDims &in, const rt::Array &a, const std::string &file,
                          std::map<std::string, std::pair<int64_t, std::string>> &sizes, std::string &error) {
  if (a.shape.size() != in.dimParams.size())
    return true; // the wrong rank: the model's own check says so, with the expected shape
  for (size_t i = 0; i < a.shape.size(); ++i) {
    const std::string &param = in.dimParams[i];
    if (param.empty())
      continue;
    auto [it, fresh] = sizes.emplace(param, std::pair(a.shape[i], file));
    if (!fresh && it->second.first != a.shape[i])
      return error = "the dynamic dimension '" + param + "' is " + std::to_string(it->second.first) + " in '" +
                     it->second.second + "' but " + std::to_string(a.shape[i]) + " in '" + file + "'",
             false;
  }
  return true;
}

bool dimsFromInputs(const std::string &model, const std::vector<std::string> &inputFlags,
                    std::vector<std::string> &dims, std::string &error) {
  std::vector<OnnxInputDims> inputs;
  std::string unreadable; // the import that follows says why, located as its other errors are
  if (!readOnnxInputDims(model, inputs, unreadable))
    return true;
  std::map<std::string, std::pair<int64_t, std::string>> sizes; // dim_param -> size, the file it came from
  auto given = [&](const std::string &param) {
    return std::any_of(dims.begin(), dims.end(), [&](const std::string &d) { return d.rfind(param + "=", 0) == 0; });
  };
  for (const std::string &flag : inputFlags) {
    size_t eq = flag.find('=');
    if (eq == std::string::npos)
      continue; // malformed: reported where the inputs are read
    std::string name = flag.substr(0, eq);
    std::string file = flag.substr(eq + 1);
    auto in = std::find_if(inputs.begin(), inputs.end(), [&](const OnnxInputDims &d) { return d.name == name; });
    // read only arrays that size a dimension --dim leaves out (gatherData reads every input later anyway)
    if (in == inputs.end() || std::all_of(in->dimParams.begin(), in->dimParams.end(),
                                          [&](const std::string &p) { return p.empty() || given(p); }))
      continue;
    rt::Array a;
    if (!readArrayFile(file, a, error) || !sizeFromArray(*in, a, file, sizes, error))
      return false;
  }
  for (const auto &[param, size] : sizes) {
    if (!given(param))
      dims.push_back(param + "=" + std::to_string(size.first));
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
