//===- Compiler.cpp - From a lowered program to an executable or library -*- C++ -*-===//
// Renders every kernel, compiles it (LLVM in process, or the system C compiler; GpuCode.cpp for GPU targets), writes
// the program tables, and links an executable or archives a library.
//===----------------------------------------------------------------------===//

#include "Target/Compiler.h"

#include "Runtime/Safetensors.h"
#include "Support/FileIO.h"
#include "Support/Logging.h"
#include "Target/CRenderer.h"
#include "Target/GpuCode.h"
#include "Target/LLVMBackend.h"
#include "Target/LLVMRenderer.h"
#include "Target/ProgramEmitter.h"
#include "Target/ProgramObject.h"
#include "Target/Toolchain.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <mutex>
#include <spdlog/spdlog.h>
#include <thread>
#include <unistd.h>

namespace tgc {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string &flags) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : flags) {
    if (c == ' ') {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

std::vector<std::string> cCompile(const CompileRequest &r, const fs::path &src, const fs::path &obj,
                                  const std::string &include) {
  std::vector<std::string> argv = {cCompiler()};
  for (const std::string &f : split(r.target.cflags))
    argv.push_back(f);
  if (r.sanitize)
    argv.insert(argv.end(), {"-fsanitize=address", "-fno-omit-frame-pointer", "-g"});
  if (!include.empty())
    argv.push_back("-I" + include);
  if (!r.finalDir.empty()) // debug info names the files where they end up, not the staging directory
    argv.push_back("-ffile-prefix-map=" + r.outDir + "=" + r.finalDir);
  argv.insert(argv.end(), {"-c", src.string(), "-o", obj.string()});
  return argv;
}

/// Link `inputs` (objects, then the runtime's archive) into the executable `exe` through the C++ compiler driver.
std::vector<std::string> driverLinkCommand(const CompileRequest &r, const RuntimeFiles &rt,
                                           const std::vector<std::string> &inputs, const std::string &exe) {
  std::vector<std::string> argv = {cxxCompiler(), "-o", exe};
  if (!lldLinker().empty() && fs::path(cxxCompiler()).filename().string().find("clang") != std::string::npos)
    argv.push_back("--ld-path=" + lldLinker()); // lld links in half the time of GNU ld
  argv.insert(argv.end(), inputs.begin(), inputs.end());
  argv.insert(argv.end(), {"-lpthread", "-lm", "-ldl"});
  if (r.sanitize)
    argv.push_back("-fsanitize=address");
  for (const std::string &f : split(rt.linkFlags))
    argv.push_back(f);
  return argv;
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point &start) {
  Clock::time_point now = Clock::now();
  double s = std::chrono::duration<double>(now - start).count();
  start = now;
  return s;
}

/// CPU seconds the calling thread has run (not the time it waited for a core, which a loaded machine adds to wall
/// time); the kernels' steps are measured in it.
double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

/// Seconds of CPU time since `start`, which moves to now.
double threadSecondsSince(double &start) {
  double now = threadSeconds();
  double s = now - start;
  start = now;
  return s;
}

/// One kernel's steps, in CPU seconds of the thread that compiled it.
struct KernelSteps {
  double render = 0, optimize = 0, object = 0;
};

/// The steps of compiling kernels, per kernel and summed over the threads that compile them (tgc compile
/// --time-passes).
struct KernelTimes {
  std::mutex lock;
  KernelSteps total;
  std::vector<KernelSteps> each;
  void add(size_t kernel, const KernelSteps &s) {
    std::lock_guard<std::mutex> g(lock);
    total.render += s.render;
    total.optimize += s.optimize;
    total.object += s.object;
    each[kernel] = s;
  }
};

/// The per-kernel part of --time-passes: slowest first.
std::string formatKernelTimings(const ProgramDesc &p, const KernelTimes &times, const std::vector<Effort> &effort) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    order.push_back(i);
  auto sum = [&](size_t i) { return times.each[i].render + times.each[i].optimize + times.each[i].object; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sum(a) > sum(b); });
  std::string out = "   ---Thread Time---  render  optimize    object  --- Kernel (LLVM effort) ---\n";
  char buf[512];
  for (size_t i : order) {
    const KernelSteps &s = times.each[i];
    std::snprintf(buf, sizeof(buf), "   %.6f         %.4f    %.4f    %.4f  %s (%s)\n", sum(i), s.render, s.optimize,
                  s.object, p.kernels[i].symbol.c_str(), effortName(effort[i]));
    out += buf;
  }
  return out;
}

bool compileKernelLLVM(const KernelDesc &k, const std::string &symbol, const CompileRequest &r, const fs::path &dir,
                       Effort effort, KernelSteps &steps, std::string &error) {
  double start = threadSeconds();
  llvm::LLVMContext ctx;
  llvm::Module m(symbol, ctx);
  renderKernelLLVM(k.linear, k.info, symbol, m, r.target);
  if (r.sanitize)
    markSanitizeAddress(m);
  steps.render = threadSecondsSince(start);
  if (!optimizeModule(m, r.target, error, r.sanitize, effort))
    return false;
  steps.optimize = threadSecondsSince(start);
  std::string object;
  std::string ir = printModuleIR(m);
  showSource(k.symbol + ".ll", ir);
  if (!writeText(dir / (k.symbol + ".ll"), ir, error) || !emitObject(m, r.target, object, error, effort))
    return false;
  bool ok = writeText(dir / (k.symbol + ".o"), object, error);
  steps.object = threadSecondsSince(start);
  return ok;
}

/// Appends the wall time since the last lap to CompileRequest::timings.
class Laps {
public:
  explicit Laps(std::vector<PassTiming> *out) : out_(out) {}
  void lap(const std::string &name) {
    double s = secondsSince(start_);
    if (out_)
      out_->push_back({name, s});
  }

private:
  std::vector<PassTiming> *out_;
  Clock::time_point start_ = Clock::now();
};

/// An estimate of LLVM's work on a linearized kernel: its ops, each counted by its lanes.
double compileCost(const UOp *linear) {
  double cost = 0;
  for (const UOp *u : linear->src())
    cost += u->dtype().lanes();
  return cost;
}

/// Threads parallelFor uses for n jobs.
size_t workersFor(size_t n) {
  return debugLevel() >= 4 ? 1 : std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
}

/// Run job(i) for i in [0, n) on up to one thread per core (one thread when the sources are being printed, so they
/// come out in order), largest `cost` first so that no long job starts last. Every job runs; the error of the
/// lowest failing i is reported.
bool parallelFor(size_t n, const std::function<bool(size_t, std::string &)> &job, const std::vector<double> &cost,
                 std::string &error) {
  size_t workers = workersFor(n);
  std::vector<std::string> errors(n);
  std::vector<char> ok(n, 1);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  if (workers > 1)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t at = next++; at < n; at = next++)
      ok[order[at]] = job(order[at], errors[order[at]]);
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w)
    threads.emplace_back(work);
  work();
  for (std::thread &t : threads)
    t.join();
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i]) {
      error = errors[i];
      return false;
    }
  }
  return true;
}

/// The machine the program's host side runs on: the target itself, or this machine for GPU targets.
CompileTarget hostTarget(const CompileTarget &t) {
  if (!isGpuTarget(t))
    return t;
  std::string error;
  return *targetFor("cpu", "", "", error);
}

/// An object holding the weights' bytes as 64-byte aligned constants named <prefix>weight_<buffer index>.
bool weightsObject(const ProgramDesc &p, const CompileRequest &r, const std::string &prefix, const fs::path &out,
                   std::string &error) {
  rt::SafetensorsFile file;
  if (!file.open(r.weightsFile, error))
    return false;
  llvm::LLVMContext ctx;
  llvm::Module m("weights", ctx);
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const BufferDesc &b = p.buffers[i];
    if (b.kind != TGC_WEIGHT)
      continue;
    const auto *e = file.find(b.name);
    if (!e) {
      error = "weight '" + b.name + "' is missing from " + r.weightsFile;
      return false;
    }
    if (int(e->type) != int(runtimeDType(b.dtype)) || e->shape != b.shape || int64_t(e->size) != b.bytes) {
      error = "weight '" + b.name + "' in " + r.weightsFile + " is " + std::string(rt::elemName(e->type)) +
              rt::shapeString(e->shape) + ", the model needs " +
              std::string(rt::elemName(rt::ElemType(runtimeDType(b.dtype)))) + rt::shapeString(b.shape);
      return false;
    }
    auto *data = llvm::ConstantDataArray::get(ctx, llvm::ArrayRef<uint8_t>(e->data, e->size));
    auto *g = new llvm::GlobalVariable(m, data->getType(), true, llvm::GlobalValue::ExternalLinkage, data,
                                       prefix + "weight_" + std::to_string(i));
    g->setAlignment(llvm::Align(64));
  }
  std::string object;
  return emitObject(m, hostTarget(r.target), object, error) && writeText(out, object, error);
}

/// Every kernel of a CPU program into an object under `kdir`, several at once (each its own LLVMContext and
/// TargetMachine, or its own C compiler process); their paths are appended to `objects`.
bool compileCpuKernels(const ProgramDesc &p, const CompileRequest &r, const std::string &prefix, const fs::path &kdir,
                       std::vector<std::string> &objects, Laps &laps, std::string &error) {
  KernelTimes times;
  times.each.resize(p.kernels.size());
  std::vector<Effort> effort = kernelEfforts(p);
  // LLVM's time grows with the number of vector elements it handles; at O1 a kernel takes about a quarter of it
  std::vector<double> cost;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    cost.push_back(compileCost(p.kernels[i].linear) * (effort[i] == Effort::Once ? 0.25 : 1.0));
  bool llvm = r.target.target().rendersLLVM();
  auto compileKernel = [&](size_t i, std::string &err) {
    const KernelDesc &k = p.kernels[i];
    std::string symbol = prefix + k.symbol;
    if (llvm) {
      KernelSteps steps;
      bool ok = compileKernelLLVM(k, symbol, r, kdir, effort[i], steps, err);
      times.add(i, steps);
      return ok;
    }
    std::string source = renderKernelC(k.linear, k.info, symbol);
    showSource(k.symbol + ".c", source);
    return writeText(kdir / (k.symbol + ".c"), source, err) &&
           runTool(cCompile(r, kdir / (k.symbol + ".c"), kdir / (k.symbol + ".o"), ""), err);
  };
  if (!parallelFor(p.kernels.size(), compileKernel, cost, error))
    return false;
  for (const KernelDesc &k : p.kernels)
    objects.push_back((kdir / (k.symbol + ".o")).string());
  char what[256];
  if (!llvm)
    std::snprintf(what, sizeof what, "kernels: C compiler (%zu kernels on %zu threads)", p.kernels.size(),
                  workersFor(p.kernels.size()));
  else
    std::snprintf(what, sizeof what,
                  "kernels: %zu on %zu threads (thread time: render %.3f s, LLVM optimize %.3f s, object %.3f s)",
                  p.kernels.size(), workersFor(p.kernels.size()), times.total.render, times.total.optimize,
                  times.total.object);
  laps.lap(what);
  if (r.kernelReport && llvm)
    *r.kernelReport = formatKernelTimings(p, times, effort);
  return true;
}

/// The executable r.outDir/<name> from the objects and the runtime: lld in process where it can, else ld.lld or
/// the C++ compiler's driver (sanitizers, other compilers).
bool linkExecutable(const std::vector<std::string> &objects, const RuntimeFiles &rt, const CompileRequest &r,
                    Laps &laps, std::string &error) {
  std::string exe = (fs::path(r.outDir) / r.name).string();
  std::vector<std::string> inputs = objects;
  inputs.push_back(rt.library);
  std::vector<std::string> argv;
  if (!r.sanitize && rt.linkFlags.empty())
    argv = directLinkCommand(inputs, exe);
  bool direct = !argv.empty();
  if (!direct)
    argv = driverLinkCommand(r, rt, inputs, exe);
  bool inProcess = direct && haveInProcessLinker();
  bool ok = runTool(argv, error, inProcess);
  laps.lap(inProcess ? "link (lld in process)" : direct ? "link (ld.lld)" : "link (C++ compiler driver)");
  return ok;
}

/// --emit lib: the header, the runtime's header beside it, and one archive lib<name>.a with the runtime's objects
/// inside.
bool archiveLibrary(const ProgramDesc &p, const EmitOptions &eo, const std::vector<std::string> &objects,
                    const RuntimeFiles &rt, const CompileRequest &r, Laps &laps, std::string &error) {
  fs::path out(r.outDir);
  if (!writeText(out / (r.name + ".h"), emitHeader(p, eo), error))
    return false;
  std::error_code ec;
  fs::copy_file(fs::path(rt.includeDir) / "tgc_runtime.h", out / "tgc_runtime.h", fs::copy_options::overwrite_existing,
                ec);
  fs::path rtdir = out / "build" / "runtime-objects";
  fs::remove_all(rtdir, ec);
  fs::create_directories(rtdir, ec);
  if (!runTool({archiver(), "x", fs::absolute(rt.library).string(), "--output", rtdir.string()}, error))
    return false;
  std::vector<std::string> members;
  for (const auto &e : fs::directory_iterator(rtdir))
    members.push_back(e.path().string());
  std::sort(members.begin(), members.end()); // deterministic archive order
  fs::path lib = out / ("lib" + r.name + ".a");
  fs::remove(lib, ec);
  std::vector<std::string> argv = {archiver(), "rcsD", lib.string()};
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.insert(argv.end(), members.begin(), members.end());
  bool ok = runTool(argv, error);
  fs::remove_all(rtdir, ec);
  laps.lap("header and archive");
  return ok;
}

} // namespace

/// Where the executable finds its external weights: with --weights external (bundled), a copy beside it in `out`;
/// otherwise the weights file itself. nullopt when the copy fails (error says why).
std::optional<std::string> weightsPathFor(const CompileRequest &r, const fs::path &out, std::string &error) {
  if (!r.bundleWeights || r.embedWeights || r.weightsFile.empty())
    return r.weightsFile;
  std::error_code ec;
  fs::copy_file(r.weightsFile, out / (r.name + ".safetensors"), fs::copy_options::overwrite_existing, ec);
  if (ec) {
    error = "cannot copy the weights into the output: " + ec.message();
    return std::nullopt;
  }
  return (fs::path(r.finalDir.empty() ? out.string() : r.finalDir) / (r.name + ".safetensors")).string();
}

/// The program tables' object: model.c is always written (to read); the object comes from LLVM where `llvmTables`
/// (an executable on the cpu target: the C compiler's start-up alone took longer than the link) and the layout
/// allows, otherwise from the system C compiler (data and small wrappers: -O1 is enough). "" or why not.
std::string compileTables(const ProgramDesc &p, const EmitOptions &eo, const CompileRequest &r, const fs::path &work,
                          const RuntimeFiles &rt, bool llvmTables) {
  fs::path modelC = work / (r.name + "_model.c");
  fs::path modelO = work / (r.name + "_model.o");
  std::string err, object;
  if (!writeText(modelC, emitProgramC(p, eo), err))
    return err;
  if (llvmTables && programObject(p, eo, hostTarget(r.target), object, err))
    return writeText(modelO, object, err) ? std::string() : err;
  err.clear(); // a layout LLVM does not share: the C compiler
  std::vector<std::string> argv = cCompile(r, modelC, modelO, rt.includeDir);
  argv.push_back("-O1");
  return runTool(argv, err) ? std::string() : err;
}

/// Everything compileProgram writes, into r.outDir (a fresh, empty directory).
bool writeArtifacts(const UOp *root, const CompileRequest &r, std::string &error) {
  Laps laps(r.timings);
  ProgramDesc p;
  if (!describeProgram(root, r.name, p, error) || !renderable(p, r.target, error))
    return false;
  if (r.sanitize) {
    // each temporary in its own allocation, so AddressSanitizer sees accesses past its end
    for (BufferDesc &b : p.buffers)
      b.offset = -1;
    p.arenaBytes = 0;
  }
  std::string prefix = symbolName(r.name) + "_";
  fs::path out(r.outDir);
  fs::path work = out / "build"; // intermediates; the product (executable or library) is in `out` itself
  fs::path kdir = work / "kernels";
  std::error_code ec;
  fs::create_directories(kdir, ec);
  if (ec) {
    error = "cannot create '" + kdir.string() + "': " + ec.message();
    return false;
  }
  RuntimeFiles rt;
  if (!findRuntime(rt, error))
    return false;
  std::optional<std::string> weightsPath = weightsPathFor(r, out, error);
  if (!weightsPath)
    return false;
  EmitOptions eo{prefix, r.source, r.library, r.embedWeights, *weightsPath, "", "", ""};
  std::vector<std::string> objects;
  laps.lap("describe the program");
  // the program tables compile while the kernels do where the tables are known before them (CPU targets)
  bool llvmTables = r.target.target().codegen == TargetCodegen::LLVMHost && !r.library && !r.sanitize;
  auto tablesJob = [&] { return compileTables(p, eo, r, work, rt, llvmTables); };
  // the weights object: LLVM in its own thread, while the kernels compile
  bool hasWeights =
      std::any_of(p.buffers.begin(), p.buffers.end(), [](const BufferDesc &b) { return b.kind == TGC_WEIGHT; });
  std::future<std::string> weights;
  if (hasWeights && r.embedWeights)
    weights = std::async(std::launch::async, [&] {
      std::string err;
      return weightsObject(p, r, prefix, work / "weights.o", err) ? std::string() : err;
    });
  std::future<std::string> tables;
  if (isGpuTarget(r.target)) {
    if (!gpuCode(p, r.target, prefix, kdir, eo.code, eo.fallback, eo.device, error))
      return false;
    laps.lap("kernels: device code (" + std::to_string(p.kernels.size()) + " kernels)");
    tables = std::async(std::launch::deferred, tablesJob);
  } else {
    tables = std::async(std::launch::async, tablesJob);
    if (!compileCpuKernels(p, r, prefix, kdir, objects, laps, error))
      return false;
  }
  if (weights.valid()) {
    error = weights.get();
    if (!error.empty())
      return false;
    objects.push_back((work / "weights.o").string());
    laps.lap("weights object"); // what is left to wait for after the kernels
  }
  error = tables.get();
  if (!error.empty())
    return false;
  laps.lap(llvmTables ? "program tables (LLVM)" : "program tables (C compiler)"); // the wait for it after the kernels
  objects.insert(objects.begin(), (work / (r.name + "_model.o")).string());
  return r.library ? archiveLibrary(p, eo, objects, rt, r, laps, error) : linkExecutable(objects, rt, r, laps, error);
}

/// The marker of a directory that tgc compile owns (and may replace whole).
constexpr const char *kOutputMarker = ".tgc-output";

/// May tgc compile replace `dir`? Yes when it does not exist, is empty, or was written by tgc compile.
bool replaceable(const fs::path &dir, std::string &error) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return true;
  if (!fs::is_directory(dir, ec)) {
    error = "'" + dir.string() + "' exists and is not a directory";
    return false;
  }
  if (fs::is_empty(dir, ec) || fs::exists(dir / kOutputMarker, ec))
    return true;
  error = "output directory '" + dir.string() +
          "' is not empty and was not written by tgc compile (choose another, "
          "or empty it)";
  return false;
}

bool compileProgram(const UOp *root, const CompileRequest &r, std::string &error) {
  // all or nothing: build beside the target, then swap it in; a failure leaves what was there
  fs::path target = fs::absolute(r.outDir).lexically_normal();
  if (target.filename().empty())
    target = target.parent_path();
  if (!replaceable(target, error))
    return false;
  // .DIR.tgc-new-PID is built and renamed into place; those of interrupted compiles are removed first
  std::string stem = "." + target.filename().string();
  removeAbandoned(target.parent_path().string(), stem + ".tgc-new");
  removeAbandoned(target.parent_path().string(), stem + ".tgc-old");
  fs::path staging = target.parent_path() / ownedName(stem + ".tgc-new");
  fs::path old = target.parent_path() / ownedName(stem + ".tgc-old");
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec) {
    error = "cannot create '" + staging.string() + "': " + ec.message();
    return false;
  }
  CompileRequest staged = r;
  staged.outDir = staging.string();
  staged.finalDir = target.string();
  if (!writeArtifacts(root, staged, error) || !writeText(staging / kOutputMarker, "", error)) {
    fs::remove_all(staging, ec);
    return false;
  }
  bool hadOld = fs::exists(target, ec);
  if (hadOld)
    fs::rename(target, old, ec);
  if (!ec)
    fs::rename(staging, target, ec);
  if (ec) {
    error = "cannot move the output into '" + target.string() + "': " + ec.message();
    if (hadOld && !fs::exists(target))
      fs::rename(old, target, ec);
    fs::remove_all(staging, ec);
    return false;
  }
  fs::remove_all(old, ec);
  return true;
}

} // namespace tgc
