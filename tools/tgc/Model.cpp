//===- Model.cpp - Loading a .uop model and its data for tgc ----*- C++ -*-===//
// Reading .npy inputs and safetensors weights with one-line errors; writing outputs atomically.
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "Frontend/Onnx.h"
#include "IR/Eval.h"
#include "IR/Parser.h"
#include "IR/Verifier.h"
#include "Passes/PassManager.h"
#include "Runtime/Npy.h"
#include "Runtime/Safetensors.h"
#include "Support/FileIO.h"
#include "Support/Logging.h"
#include "Target/Beam.h"
#include "Viz/Viewer.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

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

namespace {

viz::Trace *vizTrace = nullptr; // setVizTrace
bool verifyEachPass = false;    // setVerifyEach

bool runPipeline(Module &m, DiagEngine &diags, const char *passes, const TargetDesc &target, const std::string &opts,
                 const TuningTable *tuned, std::vector<PassTiming> *timings) {
  std::string err;
  auto pipeline = parsePipeline(passes, err);
  if (!pipeline)
    internalError(err);
  Instrumentation inst;
  inst.verifyEach = verifyEachPass;
  inst.opts = opts;
  inst.target = target;
  inst.tuned = tuned;
  inst.printAfterAll = debugLevel() >= 8;
  if (vizTrace)
    inst.observe = [](const Module &mod, std::string_view pass, double s) { vizTrace->recordPass(mod, pass, s); };
  PassManager pm(*pipeline, inst);
  bool ok = pm.run(m, diags);
  if (timings)
    timings->insert(timings->end(), pm.timings().begin(), pm.timings().end());
  return ok;
}

} // namespace

void setVizTrace(viz::Trace *trace) { vizTrace = trace; }
void setVerifyEach(bool on) { verifyEachPass = on; }

bool writeVizFile(const std::string &path, viz::Trace &trace, const Module &m, const TargetInfo &target) {
  trace.remarks = m.remarks;
  trace.target = target.name();
  std::string err;
  if (!viz::writeViewer(path, trace, &target, err)) {
    oneLineError(err);
    return false;
  }
  return true;
}

bool lowerTensors(Module &m, DiagEngine &diags, const TargetDesc &target, std::vector<PassTiming> *timings) {
  return runPipeline(m, diags, "lower-tensors", target, "", nullptr, timings);
}

bool fillTuningCache(const Module &m, DiagEngine &diags, const TargetInfo &target, const TuningOptions &tuning,
                     TuningCache &cache) {
  std::string err;
  if (!tuning.file.empty() && !cache.load(tuning.file, err)) {
    diags.error(Loc{}, err);
    return false;
  }
  if (tuning.beam <= 0)
    return true;
  // a cache that cannot be written is found before the search spends its budget, not after
  std::filesystem::path dir = std::filesystem::path(tuning.file).parent_path();
  if (!tuning.file.empty() && !dir.empty() && !std::filesystem::is_directory(dir)) {
    diags.error(Loc{}, "cannot write tuning cache '" + tuning.file + "': no directory '" + dir.string() + "'");
    return false;
  }
  BeamOptions bo{tuning.beam, tuning.budgetSeconds, tuning.retune};
  if (!beamSearch(m, target, bo, cache, err)) {
    diags.error(Loc{}, err);
    return false;
  }
  if (!tuning.file.empty() && !cache.save(tuning.file, err)) {
    diags.error(Loc{}, "cannot write tuning cache '" + tuning.file + "': " + err);
    return false;
  }
  return true;
}

bool lowerKernels(Module &m, DiagEngine &diags, const TargetInfo &target, const std::string &opts,
                  const TuningOptions &tuning, std::vector<PassTiming> *timings) {
  if (tuning.beam <= 0 && tuning.file.empty()) // codegen's optimize takes `opts`
    return runPipeline(m, diags, "codegen", target.desc, opts, nullptr, timings);
  if (!opts.empty()) {
    diags.error(Loc{}, "--opts cannot be combined with --beam or --tuning");
    return false;
  }
  auto start = std::chrono::steady_clock::now();
  TuningCache cache(target);
  if (!fillTuningCache(m, diags, target, tuning, cache))
    return false;
  if (timings)
    timings->push_back({tuning.beam > 0 ? "beam search and tuning cache" : "tuning cache",
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  TuningTable table = cache.table();
  return runPipeline(m, diags, "codegen", target.desc, "", &table, timings);
}

bool lowerForCodegen(Module &m, DiagEngine &diags, const TargetInfo &target, const std::string &opts,
                     const TuningOptions &tuning, std::vector<PassTiming> *timings) {
  return lowerTensors(m, diags, target.desc, timings) && lowerKernels(m, diags, target, opts, tuning, timings);
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
