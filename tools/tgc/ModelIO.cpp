//===- ModelIO.cpp - A model's inputs, weights and outputs for tgc -*- C++ -*-===//
// Reading .npy inputs and safetensors weights with one-line errors; writing outputs atomically; the viewer's file.
//===----------------------------------------------------------------------===//

#include "ModelIO.h"

#include "IR/Eval.h"
#include "Runtime/Npy.h"
#include "Runtime/Safetensors.h"
#include "Support/FileIO.h"
#include "Support/Logging.h"
#include "Viz/Viewer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

namespace tgc {

namespace fs = std::filesystem;

namespace {

std::string baseDir(const Module &m) {
  if (m.fileName.empty() || m.fileName == "<stdin>")
    return ".";
  fs::path p(m.fileName);
  return p.has_parent_path() ? p.parent_path().string() : ".";
}

bool readInputFlags(const std::vector<std::string> &flags, const std::vector<interp::TensorSpec> &sig,
                    interp::ArrayMap &out, std::string &error) {
  for (const std::string &f : flags) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "--input needs NAME=FILE.npy, got '" + f + "'";
      return false;
    }
    std::string name = f.substr(0, eq);
    auto spec = std::find_if(sig.begin(), sig.end(), [&](const interp::TensorSpec &s) {
      return s.name == name && s.role != interp::TensorSpec::Role::Output;
    });
    if (spec == sig.end()) {
      std::string names;
      int weights = 0;
      for (const auto &s : sig) {
        if (s.role == interp::TensorSpec::Role::Weight)
          ++weights; // --input may replace a weight too, but dozens of weight names hide the inputs
        else if (s.role != interp::TensorSpec::Role::Output)
          names += (names.empty() ? "" : ", ") + s.name;
      }
      error = "no input named '" + name + "' (the model has: " + (names.empty() ? "no inputs" : names) +
              (weights ? "; weights: " + std::to_string(weights) + ", listed by tgc info" : "") + ")";
      return false;
    }
    if (out.count(name)) {
      error = "--input " + name + " is given twice";
      return false;
    }
    rt::Array a;
    if (!readArrayFile(f.substr(eq + 1), a, error))
      return false;
    out[name] = std::move(a);
  }
  return true;
}

bool readWeights(const Module &m, const std::vector<interp::TensorSpec> &sig, interp::ArrayMap &out,
                 std::string &error) {
  std::vector<std::unique_ptr<rt::SafetensorsFile>> files;
  for (const std::string &w : m.weightFiles) {
    fs::path p = fs::path(w).is_absolute() ? fs::path(w) : fs::path(baseDir(m)) / w;
    auto f = std::make_unique<rt::SafetensorsFile>();
    if (!f->open(p.string(), error))
      return false;
    files.push_back(std::move(f));
  }
  if (files.empty())
    return true;
  for (const interp::TensorSpec &s : sig) {
    if (s.role != interp::TensorSpec::Role::Weight || out.count(s.name))
      continue;
    const rt::SafetensorsFile::Entry *e = nullptr;
    for (auto &f : files)
      if (!e)
        e = f->find(s.name);
    if (!e) {
      error = "weight '" + s.name + "' is not in " + m.weightFiles.front();
      return false;
    }
    rt::Array a;
    a.type = e->type;
    a.shape = e->shape;
    a.data.assign(e->data, e->data + e->size);
    out[s.name] = std::move(a);
  }
  return true;
}

} // namespace

bool gatherData(const Module &m, const std::vector<interp::TensorSpec> &sig, const DataOptions &opts,
                interp::ArrayMap &out, std::string &error) {
  if (!readInputFlags(opts.inputs, sig, out, error) || !readWeights(m, sig, out, error))
    return false;
  for (const interp::TensorSpec &s : sig)
    if (s.role != interp::TensorSpec::Role::Output && !out.count(s.name))
      out[s.name] = interp::randomArray(s, opts.seed);
  return true;
}

std::string weightsFilePath(const Module &m) {
  if (m.weightFiles.empty())
    return "";
  fs::path w(m.weightFiles.front());
  return fs::absolute(w.is_absolute() ? w : fs::path(baseDir(m)) / w).lexically_normal().string();
}

bool writeVizFile(const std::string &path, viz::Trace &trace, const Module &m, const CompileTarget &target) {
  trace.remarks = m.remarks;
  trace.target = target.name();
  std::string err;
  if (!viz::writeViewer(path, trace, &target, err)) {
    oneLineError(err);
    return false;
  }
  return true;
}

bool writeOutputs(const std::string &dir, const interp::ArrayMap &outputs, std::string &error) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create '" + dir + "': " + ec.message();
    return false;
  }
  std::vector<std::string> paths;
  std::vector<const rt::Array *> arrays;
  for (const auto &[name, a] : outputs) {
    paths.push_back((fs::path(dir) / (name + ".npy")).string());
    arrays.push_back(&a);
  }
  return rt::writeNpyAll(paths, arrays, error);
}

double elementValue(const uint8_t *data, int64_t i, DType d) {
  uint64_t bits = 0;
  size_t size = d.isBool() ? 1 : size_t(d.itemSize());
  std::memcpy(&bits, data + i * int64_t(size), size);
  Arg v = valueFromBits(bits, d);
  return v.isFloat() ? v.getFloat() : v.isBool() ? double(v.getBool()) : double(v.getInt());
}

std::string formatArray(const std::string &name, const rt::Array &a) {
  DType d = interp::dtypeOf(a.type);
  std::string out = name + ": " + d.str() + rt::shapeString(a.shape) + " = [";
  int64_t n = a.numel();
  int64_t size = rt::elemSize(a.type);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, a.data.data() + i * size, size_t(size));
    Arg v = valueFromBits(bits, d);
    out += (i ? ", " : "") + (v.isFloat() && d.scalar() != Scalar::F64 ? formatFloat(float(v.getFloat())) : v.str());
  }
  return out + "]\n";
}

int oneLineError(const std::string &msg) {
  std::fprintf(stderr, "tgc: error: %s\n", msg.c_str());
  return 1;
}

void reportKernels(const Module &m) {
  if (debugLevel() < 1)
    return;
  std::string text;
  for (const UOp *call : m.root->src()) {
    text += "  " + (call->arg().isString() ? call->arg().getString() : std::string("kernel")) + "\n";
    if (debugLevel() >= 3)
      text += printGraph(call->src(0));
  }
  if (debugLevel() >= 3)
    for (const std::string &r : m.remarks)
      text += "  remark: " + r + "\n";
  std::fprintf(stderr, "tgc: scheduled %zu kernels\n%s", m.root->numSrc(), text.c_str());
}

} // namespace tgc
