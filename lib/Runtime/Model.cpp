//===- Model.cpp - Running a compiled program -------------------*- C++ -*-===//
// One arena allocated and pre-faulted once, weights memory-mapped or embedded, calls run in order on a thread pool.
//===----------------------------------------------------------------------===//

#include "Runtime/Array.h"
#include "Runtime/Device.h"
#include "Runtime/HugePages.h"
#include "Runtime/Peak.h"
#include "Runtime/Safetensors.h"
#include "Runtime/ThreadPool.h"
#include "Runtime/tgc_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

/// Calls smaller than this (estimated flops + bytes) run on one thread. A job on the pool costs about a microsecond
/// while its workers poll (bench/pool.cpp), so larger calls are tried on it, and the timed runs keep them there only
/// where that is faster. The estimate counts a cache hit as a byte: a Winograd transform estimated at 0.7M takes
/// 17 us on one thread, 6.5 us on two.
constexpr double kParallelMinWork = 1 << 18;

/// Runs, after the first two (cold caches, run-once calls, workers' first wake-up), in which each call that may be
/// split times itself: the first half of them on all threads, the rest on one (so the pooled runs follow pooled
/// runs, with workers still polling, as they will once chosen); then it runs on one thread only if that was
/// clearly faster (by kAloneGain), since a wrong choice of one thread costs up to the thread count (the estimate
/// above decides only which calls are tried).
constexpr int kThreadWarmRuns = 2;
constexpr int kThreadProbeRuns = 6;
constexpr double kAloneGain = 0.85;

} // namespace

/// Whether one call runs on the thread pool, decided from its measured times (kThreadProbeRuns runs after the
/// first kThreadWarmRuns).
struct ThreadChoice {
  int probes = 0;
  double pooled = 1e300, alone = 1e300; // best time of each way
  bool usePool = true;
};

namespace {

int debugLevel() {
  const char *e = std::getenv("TGC_DEBUG");
  return e ? std::atoi(e) : 0;
}

int defaultThreads() {
  if (const char *e = std::getenv("TGC_NUM_THREADS"))
    return std::max(1, std::atoi(e));
  unsigned n = std::thread::hardware_concurrency();
  return n ? int(n) : 1;
}

} // namespace

struct tgc_model {
  const tgc_program_info *program = nullptr;
  std::unique_ptr<tgc::rt::SafetensorsFile> weights;
  void *arena = nullptr;
  size_t arenaBytes = 0;
  std::vector<std::vector<uint8_t>> ownMemory; // temporaries outside the arena
  std::vector<void *> pointers;                // per buffer
  std::vector<int64_t> variables;              // per buffer: the value of a TGC_VARIABLE
  std::vector<int> inputIndex, outputIndex;    // program buffer index of each input / output
  std::unique_ptr<tgc::rt::ThreadPool> pool;
  std::vector<double> callSeconds;
  std::vector<void *> args;
  int debug = 0;
  bool timing = false;          // record callSeconds (debug >= 2, or tgc_model_set_timing)
  tgc_call_hook hook = nullptr; // tgc_model_set_call_hook
  void *hookUser = nullptr;
  std::string error; // of the last failed run
  // GPU programs: device memory per buffer (temporaries in the arena where the device allows)
  std::unique_ptr<tgc::rt::Device> device;
  tgc::rt::DeviceMemory deviceArena = nullptr;
  std::vector<tgc::rt::DeviceMemory> deviceMemory;
  std::vector<const void *> uploaded; // the host memory each weight was uploaded from
  /// The run-once calls (tgc_call_info::once) have run since the weights were last bound: later runs skip them.
  bool onceDone = false;
  int runs = 0;                      // completed runs
  bool splitLastRun = false;         // some call of the last run was large enough for the thread pool
  std::vector<ThreadChoice> threads; // per call
  ~tgc_model();
};

tgc_model::~tgc_model() {
  if (!device)
    return;
  for (tgc::rt::DeviceMemory d : deviceMemory)
    device->release(d);
  device->release(deviceArena);
}

/// Memory for buffers of zero bytes: kernels may read (and discard) the first element of a buffer through a masked
/// load, so no buffer pointer is ever null.
alignas(64) static const unsigned char kEmpty[64] = {};

static void *orEmpty(const void *p, int64_t bytes) { return const_cast<void *>(bytes == 0 ? kEmpty : p); }

static bool fail(char *error, size_t size, const std::string &msg) {
  if (error && size)
    std::snprintf(error, size, "%s", msg.c_str());
  return false;
}

static bool bindWeights(tgc_model *m, const char *path, char *error, size_t size) {
  const tgc_program_info *p = m->program;
  bool needFile = false;
  for (int i = 0; i < p->num_buffers; ++i)
    needFile = needFile || (p->buffers[i].kind == TGC_WEIGHT && !p->buffers[i].data);
  if (!needFile && !path)
    return true;
  const char *file = path ? path : p->weights_file;
  if (!file)
    return true; // the caller binds them (tgc_model_bind_weight)
  m->weights = std::make_unique<tgc::rt::SafetensorsFile>();
  std::string err;
  if (!m->weights->open(file, err))
    return fail(error, size, err);
  for (int i = 0; i < p->num_buffers; ++i) {
    const tgc_buffer_info &b = p->buffers[i];
    if (b.kind != TGC_WEIGHT)
      continue;
    const auto *e = m->weights->find(b.name);
    std::vector<int64_t> shape(b.shape, b.shape + b.rank);
    if (!e)
      return fail(error, size, std::string("weight '") + b.name + "' is not in " + file);
    if (int(e->type) != int(b.dtype) || e->shape != shape)
      return fail(error, size,
                  std::string("weight '") + b.name + "' in " + file + " has dtype " +
                      std::string(tgc::rt::elemName(e->type)) + " and shape " + tgc::rt::shapeString(e->shape) +
                      ", expected " + std::string(tgc::rt::elemName(tgc::rt::ElemType(b.dtype))) + " and " +
                      tgc::rt::shapeString(shape));
    m->pointers[size_t(i)] = const_cast<uint8_t *>(e->data);
  }
  return true;
}

static bool allocateArena(tgc_model *m, char *error, size_t size) {
  m->arenaBytes = size_t(m->program->arena_bytes);
  if (m->arenaBytes == 0)
    return true;
  // every page is faulted in now, so runs never pay for first touches; huge pages where the arena is large
  m->arena = tgc::rt::allocateLarge(m->arenaBytes);
  if (!m->arena) {
    return fail(error, size, "cannot allocate the " + std::to_string(m->arenaBytes) + "-byte arena");
  }
  return true;
}

/// Open the program's device, load its code and give every buffer device memory.
static bool prepareDevice(tgc_model *m, char *error, size_t size) {
  const tgc_program_info *p = m->program;
  std::string err;
  m->device = tgc::rt::openDevice(p->device, err);
  if (!m->device || !m->device->load(*p, err))
    return fail(error, size, err);
  if (p->arena_bytes > 0 && !(m->deviceArena = m->device->allocate(size_t(p->arena_bytes), err)))
    return fail(error, size, err);
  m->deviceMemory.assign(size_t(p->num_buffers), nullptr);
  m->uploaded.assign(size_t(p->num_buffers), nullptr);
  for (int i = 0; i < p->num_buffers; ++i) {
    const tgc_buffer_info &b = p->buffers[i];
    tgc::rt::DeviceMemory d = nullptr;
    if (b.kind == TGC_TEMP && b.arena_offset >= 0 && m->deviceArena)
      d = m->device->part(m->deviceArena, size_t(b.arena_offset), size_t(b.bytes));
    if (d && m->device->partsAreViews()) {
      m->deviceMemory[size_t(i)] = nullptr; // a pointer into the arena: nothing to release
      m->pointers[size_t(i)] = d;
      continue;
    }
    if (!d && !(d = m->device->allocate(size_t(b.bytes), err)))
      return fail(error, size, err);
    m->deviceMemory[size_t(i)] = d;
  }
  if (m->debug >= 1)
    std::fprintf(stderr, "tgc: %s\n", m->device->describe().c_str());
  return true;
}

/// The device memory of buffer i.
static tgc::rt::DeviceMemory deviceBuffer(const tgc_model *m, int i) {
  return m->deviceMemory[size_t(i)] ? m->deviceMemory[size_t(i)] : m->pointers[size_t(i)];
}

/// The bytes of buffer i at the variables' values (an input or output with a variable axis holds fewer rows than
/// its upper bound; the variable axis is outermost, so they are a prefix).
static size_t activeBytes(const tgc_model *m, int i) {
  const tgc_buffer_info &b = m->program->buffers[i];
  int64_t bytes = b.bytes;
  for (int d = 0; b.dim_vars && d < b.rank; ++d)
    if (int v = b.dim_vars[d]; v >= 0 && b.shape[d] > 0)
      bytes = bytes / b.shape[d] * m->variables[size_t(v)];
  return size_t(bytes);
}

/// A call as launched now: grid dimensions that run to a variable get its value.
static tgc_call_info launchOf(const tgc_model *m, const tgc_call_info &call) {
  tgc_call_info now = call;
  for (int d = 0; d < 3; ++d)
    if (call.grid_var[d] >= 0)
      now.grid[d] = m->variables[size_t(call.grid_var[d])];
  return now;
}

/// The share of a call's estimated work (tgc_call_info flops and bytes, counted with each variable at its bound)
/// that it does at the variables' values: value / bound for each variable it takes (weights it reads do not
/// shrink, so this underestimates their bytes).
static double workScale(const tgc_model *m, const tgc_call_info &call) {
  double scale = 1;
  for (int a = 0; a < call.num_args; ++a) {
    const tgc_buffer_info &b = m->program->buffers[call.args[a]];
    if (b.kind == TGC_VARIABLE && b.var_max > 0)
      scale *= double(m->variables[size_t(call.args[a])]) / double(b.var_max);
  }
  return scale;
}

/// One --debug=2 line: the call's time, GFLOPS and GB/s (every load counted), and on the CPU its roofline shares
/// of one core's measured peaks: FLOPs, and the bytes its operands span (each moved at least once) per second
/// against the bandwidth of where they fit (the L2 cache, or memory).
static void reportCall(const tgc_model *m, const tgc_call_info &call, double seconds) {
  double scale = workScale(m, call);
  double gflops = call.flops * scale / seconds * 1e-9, gbps = call.bytes * scale / seconds * 1e-9;
  std::string share;
  if (!m->device) {
    const tgc::rt::MachinePeak &peak = tgc::rt::machinePeak();
    bool cached = false;
    double footprint = tgc::rt::callFootprint(m->program, call);
    double bandwidth = peak.bandwidthFor(footprint, cached);
    char buf[80];
    std::snprintf(buf, sizeof(buf), " %6.1f%% %6.1f%% of peak (%s)", 100 * gflops / peak.gflops,
                  100 * footprint * scale / seconds * 1e-9 / bandwidth, cached ? "cache" : "DRAM");
    share = buf;
  }
  std::fprintf(stderr, "tgc: %-24s %9.3f us %8.2f GFLOPS %8.2f GB/s%s\n", call.name, seconds * 1e6, gflops, gbps,
               share.c_str());
}

/// Run on the device: weights uploaded once (again when rebound), inputs and variables in, calls, outputs back.
static bool runOnDevice(tgc_model *m) {
  const tgc_program_info *p = m->program;
  std::string &err = m->error;
  for (int i = 0; i < p->num_buffers; ++i) {
    const tgc_buffer_info &b = p->buffers[i];
    bool upload = (b.kind == TGC_WEIGHT && m->uploaded[size_t(i)] != m->pointers[size_t(i)]) || b.kind == TGC_INPUT ||
                  b.kind == TGC_VARIABLE;
    if (upload && !m->device->upload(deviceBuffer(m, i), m->pointers[size_t(i)], activeBytes(m, i), err))
      return false;
    if (b.kind == TGC_WEIGHT)
      m->uploaded[size_t(i)] = m->pointers[size_t(i)];
  }
  std::vector<tgc::rt::DeviceMemory> args;
  for (int c = 0; c < p->num_calls; ++c) {
    const tgc_call_info &call = p->calls[c];
    if (call.once && m->onceDone)
      continue;
    args.clear();
    for (int a = 0; a < call.num_args; ++a)
      args.push_back(deviceBuffer(m, call.args[a]));
    double seconds = 0;
    tgc_call_info now = launchOf(m, call);
    if (now.grid[0] * now.grid[1] * now.grid[2] == 0)
      continue; // a variable at 0: nothing to compute
    if (!m->device->launch(c, now, args.data(), m->timing ? &seconds : nullptr, err))
      return false;
    m->callSeconds[size_t(c)] = seconds;
    if (m->debug >= 2)
      reportCall(m, call, seconds);
  }
  for (size_t o = 0; o < m->outputIndex.size(); ++o) {
    int i = m->outputIndex[o];
    if (!m->device->download(m->pointers[size_t(i)], deviceBuffer(m, i), activeBytes(m, i), err))
      return false;
  }
  if (!m->device->finish(err))
    return false;
  m->onceDone = true;
  return true;
}

extern "C" tgc_model *tgc_model_create(const tgc_program_info *program, const char *weights_path, int num_threads,
                                       char *error, size_t error_size) {
  auto m = std::make_unique<tgc_model>();
  m->program = program;
  m->debug = debugLevel();
  m->timing = m->debug >= 2;
  if (m->debug >= 2 && !program->device) {
    const tgc::rt::MachinePeak &peak = tgc::rt::machinePeak();
    std::fprintf(stderr,
                 "tgc: peak of one core (%s): %.1f GFLOPS (f32 FMA), %.1f GB/s (memory), %.1f GB/s (cache, for "
                 "operands up to %.0f KiB), measured\n",
                 peak.cpu.c_str(), peak.gflops, peak.gbps, peak.cacheGbps, peak.cacheBytes / 1024);
  }
  m->pointers.assign(size_t(program->num_buffers), nullptr);
  m->variables.assign(size_t(program->num_buffers), 0);
  if (!allocateArena(m.get(), error, error_size) || !bindWeights(m.get(), weights_path, error, error_size))
    return nullptr;
  if (program->device && !prepareDevice(m.get(), error, error_size))
    return nullptr;
  for (int i = 0; i < program->num_buffers; ++i) {
    const tgc_buffer_info &b = program->buffers[i];
    if (program->device && b.kind == TGC_TEMP)
      continue; // device memory only
    if (b.kind == TGC_INPUT)
      m->inputIndex.push_back(i);
    else if (b.kind == TGC_OUTPUT)
      m->outputIndex.push_back(i);
    else if (b.kind == TGC_WEIGHT && b.data && !m->pointers[size_t(i)]) // a weights_path given overrides embedded
      m->pointers[size_t(i)] = const_cast<void *>(b.data);
    else if (b.kind == TGC_VARIABLE)
      m->pointers[size_t(i)] = &(m->variables[size_t(i)] = b.var_max);
    else if (b.kind == TGC_TEMP && b.arena_offset >= 0)
      m->pointers[size_t(i)] = orEmpty(static_cast<uint8_t *>(m->arena) + b.arena_offset, b.bytes);
    else if (b.kind == TGC_TEMP) {
      m->ownMemory.emplace_back(size_t(b.bytes));
      m->pointers[size_t(i)] = orEmpty(m->ownMemory.back().data(), b.bytes);
    }
  }
  int threads = program->device ? 1 : num_threads > 0 ? std::min(num_threads, 1024) : defaultThreads();
  m->pool = std::make_unique<tgc::rt::ThreadPool>(threads);
  m->callSeconds.assign(size_t(program->num_calls), 0.0);
  m->threads.assign(size_t(program->num_calls), ThreadChoice{});
  if (m->debug >= 1)
    std::fprintf(stderr, "tgc: %s: %d kernels, %d threads, arena %lld bytes\n", program->name, program->num_calls,
                 m->pool->size(), static_cast<long long>(program->arena_bytes));
  return m.release();
}

extern "C" int tgc_model_bind_weight(tgc_model *m, const char *name, const void *data) {
  for (int i = 0; i < m->program->num_buffers; ++i) {
    const tgc_buffer_info &b = m->program->buffers[i];
    if (b.kind == TGC_WEIGHT && std::strcmp(b.name, name) == 0) {
      m->pointers[size_t(i)] = const_cast<void *>(data);
      m->onceDone = false; // what depends on the weights alone is computed again
      return 0;
    }
  }
  return -1;
}

extern "C" int tgc_model_ready(const tgc_model *m) {
  for (int i = 0; i < m->program->num_buffers; ++i)
    if (m->program->buffers[i].kind == TGC_WEIGHT && !m->pointers[size_t(i)])
      return 0;
  return 1;
}

extern "C" int tgc_model_set_variable(tgc_model *m, const char *name, int64_t value) {
  for (int i = 0; i < m->program->num_buffers; ++i) {
    const tgc_buffer_info &b = m->program->buffers[i];
    if (b.kind != TGC_VARIABLE || std::strcmp(b.name, name) != 0)
      continue;
    if (value < b.var_min || value > b.var_max) {
      m->error = std::string(name) + " = " + std::to_string(value) + " is outside its bounds [" +
                 std::to_string(b.var_min) + ", " + std::to_string(b.var_max) + "]";
      return -1;
    }
    m->variables[size_t(i)] = value;
    return 0;
  }
  m->error = std::string("the model has no variable '") + name + "'";
  return -1;
}

/// Record one probe of a call's threading; after the last, keep the faster way (TGC_DEBUG=2 says when that is one
/// thread).
static void decideThreads(tgc_model *m, const tgc_call_info &call, ThreadChoice &choice, bool pooled, double s) {
  double &best = pooled ? choice.pooled : choice.alone;
  best = std::min(best, s);
  if (++choice.probes < kThreadProbeRuns)
    return;
  choice.usePool = choice.alone >= choice.pooled * kAloneGain;
  if (!choice.usePool && m->debug >= 2)
    std::fprintf(stderr, "tgc: %s: 1 thread (%.3f us) is faster than %d (%.3f us): it runs on one from now on\n",
                 call.name, choice.alone * 1e6, m->pool->size(), choice.pooled * 1e6);
}

extern "C" int tgc_model_run(tgc_model *m, const void *const *inputs, void *const *outputs) {
  if (!tgc_model_ready(m)) {
    m->error = "a weight has no memory (bind it with tgc_model_bind_weight)";
    return -1;
  }
  const tgc_program_info *prog = m->program;
  for (size_t i = 0; i < m->inputIndex.size(); ++i)
    m->pointers[size_t(m->inputIndex[i])] = orEmpty(inputs[i], prog->buffers[m->inputIndex[i]].bytes);
  for (size_t i = 0; i < m->outputIndex.size(); ++i)
    m->pointers[size_t(m->outputIndex[i])] = orEmpty(outputs[i], prog->buffers[m->outputIndex[i]].bytes);
  if (m->device)
    return runOnDevice(m) ? 0 : -1;
  const tgc_program_info *p = m->program;
  m->splitLastRun = false;
  bool onceWasDone = m->onceDone;
  for (int c = 0; c < p->num_calls; ++c) {
    const tgc_call_info &call = p->calls[c];
    if (call.once && m->onceDone)
      continue;
    m->args.resize(size_t(call.num_args));
    for (int a = 0; a < call.num_args; ++a)
      m->args[size_t(a)] = m->pointers[size_t(call.args[a])];
    ThreadChoice &choice = m->threads[size_t(c)];
    int64_t extent = call.parallel_var >= 0 ? m->variables[size_t(call.parallel_var)] : call.parallel;
    double work = (call.flops + call.bytes) * workScale(m, call);
    bool splittable = extent > 1 && m->pool->size() > 1 && work >= kParallelMinWork;
    m->splitLastRun = m->splitLastRun || splittable;
    bool probing = splittable && m->runs >= kThreadWarmRuns && choice.probes < kThreadProbeRuns;
    bool pooled = splittable && (probing ? choice.probes < kThreadProbeRuns / 2 : choice.usePool);
    auto start = std::chrono::steady_clock::now();
    if (pooled)
      m->pool->run(call.fn, m->args.data(), extent);
    else
      call.fn(m->args.data(), 0, call.parallel > 0 ? extent : 1);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (probing)
      decideThreads(m, call, choice, pooled, s);
    m->callSeconds[size_t(c)] = s;
    if (m->hook)
      m->hook(m->hookUser, c, m->args.data());
  }
  // reported after the run: printing between calls would let the pool's workers fall asleep and time their waking
  for (int c = 0; m->debug >= 2 && c < p->num_calls; ++c)
    if (!p->calls[c].once || !onceWasDone)
      reportCall(m, p->calls[c], m->callSeconds[size_t(c)]);
  m->onceDone = true;
  ++m->runs;
  return 0;
}

extern "C" int tgc_model_settled(const tgc_model *m) {
  return m->device || (m->runs > 0 && !m->splitLastRun) || m->runs >= kThreadWarmRuns + kThreadProbeRuns;
}

extern "C" const char *tgc_model_error(const tgc_model *m) { return m->error.c_str(); }

extern "C" const double *tgc_model_call_seconds(const tgc_model *m) { return m->callSeconds.data(); }

extern "C" void tgc_model_set_call_hook(tgc_model *m, tgc_call_hook hook, void *user) {
  m->hook = hook;
  m->hookUser = user;
}

extern "C" void tgc_model_set_timing(tgc_model *m, int enabled) { m->timing = enabled || m->debug >= 2; }

extern "C" void tgc_model_destroy(tgc_model *m) {
  if (!m)
    return;
  if (m->arena)
    tgc::rt::freeLarge(m->arena, m->arenaBytes);
  delete m;
}
