//===- Main.cpp - The command line of a compiled model ----------*- C++ -*-===//
// --input NAME=FILE.npy, --output-dir DIR, --seed N, --bench N, --threads N, --weights FILE, --print; one-line errors.
//===----------------------------------------------------------------------===//

#include "Runtime/Array.h"
#include "Runtime/Half.h"
#include "Runtime/HugePages.h"
#include "Runtime/Npy.h"
#include "Runtime/Peak.h"
#include "Runtime/Random.h"
#include "Runtime/tgc_runtime.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

struct Options {
  std::map<std::string, std::string> inputs;
  std::string outputDir;
  std::string weights;
  uint64_t seed = 0;
  int bench = 0;
  int threads = 0;
  bool print = false;
  std::string dumpDir; // --dump-buffers
};

/// Memory from tgc::rt::allocateLarge, released with it.
class LargeBuffer {
public:
  explicit LargeBuffer(size_t bytes) : bytes_(bytes), p_(tgc::rt::allocateLarge(bytes)) {
    if (bytes && !p_) {
      std::fprintf(stderr, "tgc: error: cannot allocate %zu bytes\n", bytes);
      std::exit(1);
    }
  }
  LargeBuffer(LargeBuffer &&o) noexcept : bytes_(o.bytes_), p_(o.p_) { o.p_ = nullptr; }
  LargeBuffer(const LargeBuffer &) = delete;
  ~LargeBuffer() { tgc::rt::freeLarge(p_, bytes_); }
  void *data() const { return p_; }

private:
  size_t bytes_;
  void *p_;
};

int die(const std::string &msg) {
  std::fprintf(stderr, "%s: error: %s\n", "tgc", msg.c_str());
  return 1;
}

const char *kUsage = "usage: %s [--input NAME=FILE.npy]... [--seed N] [--output-dir DIR] [--print] [--bench N]\n"
                     "          [--threads N] [--weights FILE.safetensors] [--debug N] [--dump-buffers DIR]\n";

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end)
    return false;
  out = v;
  return true;
}

/// Parse the command line; returns -1 to go on, or an exit status. `--flag=value` is `--flag value`.
int parseArgs(int argc, char **argv, Options &o) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      args.push_back(a.substr(0, eq));
      args.push_back(a.substr(eq + 1));
    } else {
      args.push_back(a);
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    std::string v;
    auto value = [&]() {
      if (i + 1 >= args.size())
        return false;
      v = args[++i];
      return true;
    };
    int64_t n = 0;
    if (a == "--help" || a == "-h") {
      std::printf(kUsage, argv[0]);
      return 0;
    } else if (a == "--input") {
      if (!value())
        return die("--input needs NAME=FILE.npy");
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        return die("--input needs NAME=FILE.npy, got '" + v + "'");
      if (!o.inputs.emplace(v.substr(0, eq), v.substr(eq + 1)).second)
        return die("--input " + v.substr(0, eq) + " is given twice");
    } else if (a == "--output-dir" && value()) {
      o.outputDir = v;
    } else if (a == "--dump-buffers" && value()) {
      o.dumpDir = v;
    } else if (a == "--weights" && value()) {
      o.weights = v;
    } else if (a == "--seed" || a == "--bench" || a == "--threads" || a == "--debug") {
      auto [lo, hi] = a == "--seed"      ? std::pair<int64_t, int64_t>(0, INT64_MAX)
                      : a == "--bench"   ? std::pair<int64_t, int64_t>(1, 1000000)
                      : a == "--threads" ? std::pair<int64_t, int64_t>(1, 1024)
                                         : std::pair<int64_t, int64_t>(0, 9);
      if (!value() || !parseInt(v, n) || n < lo || n > hi)
        return die(a + " needs an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" + v +
                   "'");
      if (a == "--seed")
        o.seed = uint64_t(n);
      else if (a == "--bench")
        o.bench = int(n);
      else if (a == "--threads")
        o.threads = int(n);
      else
        setenv("TGC_DEBUG", v.c_str(), 1); // as TGC_DEBUG=N: 1 kernels, 2 per-kernel time, GFLOPS and GB/s
    } else if (a == "--print") {
      o.print = true;
    } else {
      return die("bad argument '" + a + "' (see --help)");
    }
  }
  return -1;
}

std::vector<int64_t> shapeOf(const tgc_buffer_info &b) { return {b.shape, b.shape + b.rank}; }

/// Values of the program's variables, by buffer index (unset: the upper bound).
using Variables = std::map<int, int64_t>;

/// The shape of a buffer with its variable axes at their values.
std::vector<int64_t> shapeOf(const tgc_program_info *p, const tgc_buffer_info &b, const Variables &vars) {
  std::vector<int64_t> s = shapeOf(b);
  for (int d = 0; b.dim_vars && d < b.rank; ++d)
    if (int v = b.dim_vars[d]; v >= 0)
      s[size_t(d)] = vars.count(v) ? vars.at(v) : p->buffers[v].var_max;
  return s;
}

/// An input's shape against its buffer: static axes equal, variable axes within bounds and agreeing with other
/// inputs (their values are recorded in `vars`).
bool matchShape(const tgc_program_info *p, const tgc_buffer_info &b, const std::vector<int64_t> &shape, Variables &vars,
                std::string &error) {
  std::string expected = "[";
  for (int d = 0; d < b.rank; ++d) {
    int v = b.dim_vars ? b.dim_vars[d] : -1;
    expected += (d ? ", " : "") + (v >= 0 ? std::string(p->buffers[v].name) : std::to_string(b.shape[d]));
  }
  expected += "]";
  bool fits = shape.size() == size_t(b.rank);
  for (int d = 0; fits && d < b.rank; ++d)
    fits = (b.dim_vars && b.dim_vars[d] >= 0) || shape[size_t(d)] == b.shape[d];
  if (!fits) {
    error = std::string("input '") + b.name + "' has shape " + tgc::rt::shapeString(shape) + ", expected " + expected;
    return false;
  }
  for (int d = 0; b.dim_vars && d < b.rank; ++d) {
    int v = b.dim_vars[d];
    if (v < 0)
      continue;
    const tgc_buffer_info &var = p->buffers[v];
    int64_t n = shape[size_t(d)];
    std::string at = std::string("input '") + b.name + "' has " + var.name + " = " + std::to_string(n);
    if (n < var.var_min || n > var.var_max) {
      error = at + ", outside its bounds [" + std::to_string(var.var_min) + ", " + std::to_string(var.var_max) + "]";
      return false;
    }
    auto [known, fresh] = vars.emplace(v, n);
    if (!fresh && known->second != n) {
      error = at + ", but another input has " + var.name + " = " + std::to_string(known->second);
      return false;
    }
  }
  return true;
}

/// An input's type and shape, and its data when it comes from a file; a generated input (no --input) gets its data
/// later, written straight into the buffer the model reads (`generated` is set).
bool loadInput(const tgc_program_info *p, const tgc_buffer_info &b, const Options &o, tgc::rt::Array &out,
               bool &generated, Variables &vars, std::string &error) {
  auto it = o.inputs.find(b.name);
  generated = it == o.inputs.end();
  if (generated) { // variable axes at the interpreter's size for them
    out.type = tgc::rt::ElemType(b.dtype);
    out.shape = shapeOf(b);
    for (int d = 0; b.dim_vars && d < b.rank; ++d)
      if (int v = b.dim_vars[d]; v >= 0)
        out.shape[size_t(d)] = tgc::rt::generatedDimension(p->buffers[v].var_min, p->buffers[v].var_max);
    return matchShape(p, b, out.shape, vars, error);
  }
  if (!tgc::rt::readNpy(it->second, out, error))
    return false;
  if (int(out.type) != int(b.dtype)) {
    error = std::string("input '") + b.name + "' has dtype " + std::string(tgc::rt::elemName(out.type)) +
            ", expected " + std::string(tgc::rt::elemName(tgc::rt::ElemType(b.dtype)));
    return false;
  }
  return matchShape(p, b, out.shape, vars, error);
}

/// The shortest text that reads back as v (as tgc run --print writes it).
template <typename T> void shortest(char *buf, size_t size, T v) {
  if (std::isnan(v)) {
    std::snprintf(buf, size, "nan");
    return;
  }
  if (std::isinf(v)) {
    std::snprintf(buf, size, v < 0 ? "-inf" : "inf");
    return;
  }
  auto r = std::to_chars(buf, buf + size - 3, v);
  *r.ptr = 0;
  if (!std::strpbrk(buf, ".en"))
    std::strcat(buf, ".0");
}

std::string formatValues(const tgc::rt::Array &a) {
  std::string s = "[";
  int64_t n = a.numel();
  char buf[64];
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t *p = a.data.data() + i * tgc::rt::elemSize(a.type);
    double v = 0;
    switch (a.type) {
    case tgc::rt::ElemType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      shortest(buf, sizeof(buf), f);
      break;
    }
    case tgc::rt::ElemType::F64:
      std::memcpy(&v, p, 8);
      shortest(buf, sizeof(buf), v);
      break;
    case tgc::rt::ElemType::F16:
    case tgc::rt::ElemType::BF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      shortest(buf, sizeof(buf), a.type == tgc::rt::ElemType::F16 ? tgc::rt::halfToFloat(h) : tgc::rt::bf16ToFloat(h));
      break;
    }
    default: {
      int64_t iv = 0;
      std::memcpy(&iv, p, size_t(tgc::rt::elemSize(a.type)));
      int bits = tgc::rt::elemSize(a.type) * 8;
      bool sign = a.type == tgc::rt::ElemType::I8 || a.type == tgc::rt::ElemType::I16 ||
                  a.type == tgc::rt::ElemType::I32 || a.type == tgc::rt::ElemType::I64;
      if (sign && bits < 64 && (iv >> (bits - 1)) & 1)
        iv |= ~((int64_t(1) << bits) - 1);
      std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(iv));
    }
    }
    s += (i ? ", " : "") + std::string(buf);
  }
  return s + "]";
}

void printTimes(std::vector<double> &times) {
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  if (times.size() % 2 == 0)
    median = (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  std::printf("bench: %zu runs, min %.3f ms, median %.3f ms\n", times.size(), times.front() * 1e3, median * 1e3);
}

/// What the calls of one kernel name do in a run, for the summary.
struct KernelWork {
  int calls = 0;
  double flops = 0;     // per run, at the variables' upper bounds
  double bytes = 0;     // per run: the bytes its calls' operands span, each moved at least once
  double footprint = 0; // the largest of its calls' operand bytes: where they fit decides the bandwidth
};

/// The roofline shares of a kernel's median time: "F% of the FLOP peak, B% of the bandwidth peak (cache|DRAM)";
/// "" for GPU programs, whose peaks are not measured.
std::string rooflineShares(const tgc_program_info *p, const KernelWork &w, double seconds) {
  if (p->device || seconds <= 0)
    return "";
  const tgc::rt::MachinePeak &peak = tgc::rt::machinePeak();
  bool cached = false;
  double bandwidth = peak.bandwidthFor(w.footprint, cached);
  char buf[96];
  std::snprintf(buf, sizeof(buf), " %6.1f%% %6.1f%% %-5s", 100 * w.flops / seconds * 1e-9 / peak.gflops,
                100 * w.bytes / seconds * 1e-9 / bandwidth, cached ? "cache" : "DRAM");
  return buf;
}

/// --bench at TGC_DEBUG=2 and above: where the time went, calls of one kernel name together, the median over the
/// runs of each name's time per run, the largest first, with its share of the run and of the roofline's peaks.
void printKernelSummary(const tgc_program_info *p, const std::vector<std::vector<double>> &runs) {
  std::map<std::string, std::vector<double>> perRun; // kernel name -> seconds in each run
  std::map<std::string, KernelWork> work;
  for (int c = 0; c < p->num_calls; ++c) {
    const tgc_call_info &call = p->calls[c];
    if (call.once) // run on the first run only
      continue;
    KernelWork &w = work[call.name];
    ++w.calls;
    double footprint = tgc::rt::callFootprint(p, call);
    w.flops += call.flops;
    w.bytes += footprint;
    w.footprint = std::max(w.footprint, footprint);
    std::vector<double> &v = perRun[p->calls[c].name];
    v.resize(runs.size());
    for (size_t r = 0; r < runs.size(); ++r)
      v[r] += runs[r][size_t(c)];
  }
  std::vector<std::pair<double, std::string>> byTime;
  double total = 0;
  for (auto &[name, v] : perRun) {
    std::sort(v.begin(), v.end());
    byTime.push_back({v[v.size() / 2], name});
    total += v[v.size() / 2];
  }
  std::sort(byTime.rbegin(), byTime.rend());
  std::fflush(stdout); // after the bench line
  std::fprintf(stderr, "tgc: kernels by time, medians of %zu runs (%zu kernels, %.3f ms per run in them):\n",
               runs.size(), byTime.size(), total * 1e3);
  if (!p->device) // the columns of the lines below: FLOPS and bytes are shares of the peaks
    std::fprintf(stderr, "tgc: %7s %13s %10s %7s %7s %-5s  %s\n", "run", "time", "calls", "FLOPS", "bytes", "peak",
                 "kernel (FLOPS and bytes: shares of one core's peaks)");
  for (size_t i = 0; i < byTime.size() && i < 15; ++i) {
    const KernelWork &w = work[byTime[i].second];
    std::fprintf(stderr, "tgc: %6.1f%% %10.3f ms %4d calls%s  %s\n", 100 * byTime[i].first / total,
                 byTime[i].first * 1e3, w.calls, rooflineShares(p, w, byTime[i].first).c_str(),
                 byTime[i].second.c_str());
  }
}

/// --dump-buffers: after each call of the first run, every output and temporary it takes, as
/// DIR/NNN-KERNEL-NAME.npy (NAME: the output's name, or buffer<I> with I the buffer's index), at full size.
struct BufferDump {
  const tgc_program_info *program;
  const Variables &vars; // an output with a variable axis holds only the rows of the variable's value
  std::string dir;
  std::string error;
};

void dumpCall(void *user, int c, void *const *args) {
  auto *d = static_cast<BufferDump *>(user);
  const tgc_call_info &call = d->program->calls[c];
  for (int a = 0; a < call.num_args && d->error.empty(); ++a) {
    const tgc_buffer_info &b = d->program->buffers[call.args[a]];
    if (b.kind != TGC_OUTPUT && b.kind != TGC_TEMP)
      continue;
    tgc::rt::Array arr;
    arr.type = tgc::rt::ElemType(b.dtype);
    int64_t size = tgc::rt::elemSize(arr.type);
    arr.shape = b.kind == TGC_OUTPUT ? shapeOf(d->program, b, d->vars) : shapeOf(b);
    if (b.kind == TGC_TEMP && tgc::rt::checkedNumel(arr.shape) * size != b.bytes)
      arr.shape = {b.bytes / size}; // temporaries are flat
    const auto *from = static_cast<const uint8_t *>(args[a]);
    arr.data.assign(from, from + arr.byteSize());
    char prefix[16];
    std::snprintf(prefix, sizeof(prefix), "%03d-", c);
    std::string leaf = b.kind == TGC_OUTPUT ? b.name : "buffer" + std::to_string(call.args[a]);
    tgc::rt::writeNpy(d->dir + "/" + prefix + call.name + "-" + leaf + ".npy", arr, d->error);
  }
}

/// The first --input name the model does not have, as an error listing those it has; "" when all are known.
std::string unknownInput(const tgc_program_info *p, const Options &o) {
  for (const auto &[name, file] : o.inputs) {
    bool known = false;
    std::string names;
    for (int i = 0; i < p->num_buffers; ++i) {
      if (p->buffers[i].kind != TGC_INPUT)
        continue;
      known = known || name == p->buffers[i].name;
      names += (names.empty() ? "" : ", ") + std::string(p->buffers[i].name);
    }
    if (!known)
      return "no input named '" + name + "' (the model has: " + (names.empty() ? "none" : names) + ")";
  }
  return "";
}

/// Weights neither embedded nor in a file are generated like inputs, for testing; the arrays must outlive `m`.
std::vector<tgc::rt::Array> generateMissingWeights(const tgc_program_info *p, tgc_model *m, uint64_t seed) {
  std::vector<tgc::rt::Array> generated;
  generated.reserve(size_t(p->num_buffers));
  for (int i = 0; i < p->num_buffers && !tgc_model_ready(m); ++i) {
    const tgc_buffer_info &b = p->buffers[i];
    if (b.kind != TGC_WEIGHT || b.data)
      continue;
    generated.emplace_back();
    generated.back().type = tgc::rt::ElemType(b.dtype);
    generated.back().shape = shapeOf(b);
    tgc::rt::fillRandom(generated.back(), seed, b.name);
    tgc_model_bind_weight(m, b.name, generated.back().data.data());
  }
  return generated;
}

/// --bench N: warm-up runs until each call's thread count is chosen, then N timed runs; prints the min and median
/// (and with TGC_DEBUG=2 the kernels by time). False when a run fails (tgc_model_error says why).
bool benchmark(const tgc_program_info *p, tgc_model *m, const std::vector<const void *> &in,
               const std::vector<void *> &out, int runs) {
  while (!tgc_model_settled(m))
    if (tgc_model_run(m, in.data(), out.data()) != 0)
      return false;
  std::vector<double> times;
  std::vector<std::vector<double>> callTimes; // per run, with TGC_DEBUG=2: each call's seconds
  const char *debug = std::getenv("TGC_DEBUG");
  bool profile = debug && std::atoi(debug) >= 2;
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (tgc_model_run(m, in.data(), out.data()) != 0)
      return false;
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (profile)
      callTimes.emplace_back(tgc_model_call_seconds(m), tgc_model_call_seconds(m) + p->num_calls);
  }
  printTimes(times);
  if (profile && p->num_calls > 0)
    printKernelSummary(p, callTimes);
  return true;
}

/// --output-dir DIR: each output as DIR/NAME.npy, all or none, DIR created with its parents.
bool writeOutputs(const std::string &dir, const std::vector<const tgc_buffer_info *> &info,
                  const std::vector<tgc::rt::Array> &outputs, std::string &error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    error = "cannot create directory '" + dir + "': " + ec.message();
    return false;
  }
  std::vector<std::string> paths;
  std::vector<const tgc::rt::Array *> arrays;
  for (size_t i = 0; i < outputs.size(); ++i) {
    paths.push_back(dir + "/" + info[i]->name + ".npy");
    arrays.push_back(&outputs[i]);
  }
  return tgc::rt::writeNpyAll(paths, arrays, error);
}

/// The model's inputs: read from --input files, or left empty for the generator (generatedFrom holds their
/// buffers); the dimension variables take their values from the inputs' shapes.
bool readInputs(const tgc_program_info *p, const Options &o, std::vector<tgc::rt::Array> &inputs,
                std::vector<const tgc_buffer_info *> &generatedFrom, Variables &vars, std::string &error) {
  for (int i = 0; i < p->num_buffers; ++i) {
    const tgc_buffer_info &b = p->buffers[i];
    if (b.kind != TGC_INPUT)
      continue;
    inputs.emplace_back();
    bool fresh = false;
    if (!loadInput(p, b, o, inputs.back(), fresh, vars, error))
      return false;
    generatedFrom.push_back(fresh ? &b : nullptr);
  }
  return true;
}

/// The outputs' arrays, shaped at the variables' values, and their buffers.
void declareOutputs(const tgc_program_info *p, const Variables &vars, std::vector<tgc::rt::Array> &outputs,
                    std::vector<const tgc_buffer_info *> &outInfo) {
  for (int i = 0; i < p->num_buffers; ++i) {
    const tgc_buffer_info &b = p->buffers[i];
    if (b.kind != TGC_OUTPUT)
      continue;
    outputs.emplace_back();
    outputs.back().type = tgc::rt::ElemType(b.dtype);
    outputs.back().shape = shapeOf(p, b, vars);
    outInfo.push_back(&b);
  }
}

/// --dump-buffers: what each call writes goes to o.dumpDir through the call hook; "" or why not.
std::string startDump(const tgc_program_info *p, const Options &o, tgc_model *m, BufferDump &dump) {
  if (p->device)
    return "--dump-buffers needs a CPU program (this one runs on " + std::string(p->device) + ")";
  std::error_code ec;
  std::filesystem::create_directories(o.dumpDir, ec);
  if (ec)
    return "cannot create directory '" + o.dumpDir + "': " + ec.message();
  tgc_model_set_call_hook(m, dumpCall, &dump);
  return "";
}

/// One line per output: its type and shape, with its values (--print) or its file (--output-dir).
void printOutputs(const Options &o, const std::vector<const tgc_buffer_info *> &outInfo,
                  const std::vector<tgc::rt::Array> &outputs) {
  printOutputs(o, outInfo, outputs);
}

} // namespace

extern "C" int tgc_main(const tgc_program_info *p, int argc, char **argv) {
  Options o;
  if (int rc = parseArgs(argc, argv, o); rc >= 0)
    return rc;
  if (std::string unknown = unknownInput(p, o); !unknown.empty())
    return die(unknown);
  std::vector<tgc::rt::Array> inputs, outputs;
  std::vector<const tgc_buffer_info *> generatedFrom; // per input: its buffer when generated, else null
  std::vector<const void *> inPtrs;
  std::vector<void *> outPtrs;
  std::vector<const tgc_buffer_info *> outInfo;
  std::string error;
  Variables vars; // symbolic dimensions, from the inputs' shapes
  if (!readInputs(p, o, inputs, generatedFrom, vars, error))
    return die(error);
  declareOutputs(p, vars, outputs, outInfo);
  // the model reads and writes huge-page buffers (as numpy's large arrays are), copied from and to the arrays
  std::vector<LargeBuffer> inMem, outMem;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const tgc::rt::Array &a = inputs[i];
    inMem.emplace_back(a.byteSize());
    if (generatedFrom[i])
      tgc::rt::fillRandom(inMem.back().data(), a.type, a.numel(), o.seed, generatedFrom[i]->name);
    else if (!a.data.empty())
      std::memcpy(inMem.back().data(), a.data.data(), a.data.size());
    inPtrs.push_back(inMem.back().data());
  }
  for (auto &a : outputs) {
    outMem.emplace_back(a.byteSize());
    outPtrs.push_back(outMem.back().data());
  }
  char err[512];
  tgc_model *m = tgc_model_create(p, o.weights.empty() ? nullptr : o.weights.c_str(), o.threads, err, sizeof(err));
  if (!m)
    return die(err);
  for (const auto &[v, n] : vars)
    if (tgc_model_set_variable(m, p->buffers[v].name, n) != 0)
      return die(tgc_model_error(m));
  std::vector<tgc::rt::Array> generated = generateMissingWeights(p, m, o.seed);
  BufferDump dump{p, vars, o.dumpDir, ""};
  if (!o.dumpDir.empty())
    if (std::string why = startDump(p, o, m, dump); !why.empty())
      return die(why);
  if (tgc_model_run(m, inPtrs.data(), outPtrs.data()) != 0)
    return die(tgc_model_error(m));
  tgc_model_set_call_hook(m, nullptr, nullptr);
  if (!dump.error.empty())
    return die(dump.error);
  if (o.bench > 0 && !benchmark(p, m, inPtrs, outPtrs, o.bench))
    return die(tgc_model_error(m));
  tgc_model_destroy(m);
  // the host arrays only when the values are printed or written (a 64 MiB output costs 16K page faults)
  if (o.print || !o.outputDir.empty())
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto *bytes = static_cast<const uint8_t *>(outMem[i].data());
      outputs[i].data.assign(bytes, bytes + outputs[i].byteSize());
    }
  if (!o.outputDir.empty() && !writeOutputs(o.outputDir, outInfo, outputs, error))
    return die(error);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const tgc_buffer_info &b = *outInfo[i];
    std::string shape = tgc::rt::shapeString(outputs[i].shape);
    std::string type(tgc::rt::elemName(outputs[i].type));
    if (!o.outputDir.empty())
      std::printf("%s: %s%s -> %s/%s.npy\n", b.name, type.c_str(), shape.c_str(), o.outputDir.c_str(), b.name);
    else if (o.print)
      std::printf("%s: %s%s = %s\n", b.name, type.c_str(), shape.c_str(), formatValues(outputs[i]).c_str());
    else
      std::printf("%s: %s%s\n", b.name, type.c_str(), shape.c_str());
  }
  return 0;
}
