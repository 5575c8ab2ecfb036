//===- Peak.cpp - Measuring this machine's peaks ----------------*- C++ -*-===//
// Twelve independent FMA chains in the widest vectors the CPU runs; a read stream and a memcpy; best of rounds.
//===----------------------------------------------------------------------===//

#include "Runtime/Peak.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tgc::rt {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kChains = 12; // enough independent FMAs to cover the latency of two FMA units
constexpr long kIterations = 1 << 20;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float fma512(long n) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(float(j));
  __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < n; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  float out[16], s = 0;
  for (int j = 0; j < kChains; ++j) {
    _mm512_storeu_ps(out, acc[j]);
    s += out[0];
  }
  return s;
}

__attribute__((target("avx2,fma"))) float fma256(long n) {
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm256_set1_ps(float(j));
  __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < n; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  float out[8], s = 0;
  for (int j = 0; j < kChains; ++j) {
    _mm256_storeu_ps(out, acc[j]);
    s += out[0];
  }
  return s;
}

/// Sum n floats (n a multiple of 64) with four independent vector accumulators: a read stream.
__attribute__((target("avx512f"))) float read512(const float *p, size_t n) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (size_t i = 0; i < n; i += 64)
    for (int j = 0; j < 4; ++j)
      acc[j] = _mm512_add_ps(acc[j], _mm512_loadu_ps(p + i + 16 * j));
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
}

__attribute__((target("avx2"))) float read256(const float *p, size_t n) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (size_t i = 0; i < n; i += 32)
    for (int j = 0; j < 4; ++j)
      acc[j] = _mm256_add_ps(acc[j], _mm256_loadu_ps(p + i + 8 * j));
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  return out[0] + out[7];
}
#endif

float readScalar(const float *p, size_t n) {
  float acc[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i += 4)
    for (int j = 0; j < 4; ++j)
      acc[j] += p[i + size_t(j)];
  return acc[0] + acc[1] + acc[2] + acc[3];
}

float fmaScalar(long n) {
  float acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = float(j);
  for (long i = 0; i < n; ++i)
    for (int j = 0; j < kChains; ++j)
      acc[j] = acc[j] * 0.999999f + 1e-6f;
  float s = 0;
  for (float v : acc)
    s += v;
  return s;
}

template <typename F> double bestSeconds(F f, int rounds) {
  double best = 1e30;
  for (int r = 0; r < rounds; ++r) {
    auto start = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

double measureGflops() {
  volatile float sink = 0;
  int lanes = 1;
  float (*loop)(long) = fmaScalar;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    lanes = 16;
    loop = fma512;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    lanes = 8;
    loop = fma256;
  }
#endif
  long n = kIterations / lanes * 4;
  double s = bestSeconds([&] { sink = sink + loop(n); }, 5);
  return double(n) * kChains * lanes * 2 / s * 1e-9;
}

using ReadStream = float (*)(const float *, size_t);

/// The read stream in the widest vectors this CPU has.
ReadStream widestRead() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f"))
    return read512;
  if (__builtin_cpu_supports("avx2"))
    return read256;
#endif
  return readScalar;
}

/// The faster of a read stream and a memcpy (read + written bytes) over 64 MiB, which is past the caches.
double measureGbps() {
  const size_t bytes = size_t(64) << 20;
  std::vector<float> from(bytes / sizeof(float), 1.0f), to(bytes / sizeof(float), 0.0f);
  double copy = bestSeconds(
      [&] {
        std::memcpy(to.data(), from.data(), bytes);
        asm volatile("" : : "r"(to.data()) : "memory"); // the copy is used
      },
      4);
  ReadStream read = widestRead();
  volatile float sink = 0;
  double stream = bestSeconds([&] { sink = sink + read(from.data(), from.size()); }, 4);
  return std::max(2.0 * double(bytes) / copy, double(bytes) / stream) * 1e-9;
}

/// One core reading a buffer of half its L2 cache again and again (the data stays in the cache).
double measureCacheGbps() {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  size_t bytes = size_t(std::clamp<long>(l2 > 0 ? l2 / 2 : 128 * 1024, 16 * 1024, 1024 * 1024));
  std::vector<float> data(bytes / sizeof(float), 1.0f);
  ReadStream read = widestRead();
  const int sweeps = int(std::max<size_t>(1, (size_t(256) << 20) / bytes)); // 256 MiB read per timing
  volatile float sink = 0;
  double s = bestSeconds(
      [&] {
        for (int i = 0; i < sweeps; ++i)
          sink = sink + read(data.data(), data.size());
      },
      4);
  return double(bytes) * sweeps / s * 1e-9;
}

/// One core's L2 cache size as the C library reports it, else 1 MiB: the data cacheGbps was measured on. (The L3's
/// reported size is the whole chip's, or a virtual machine's invention, and its bandwidth per core lies between.)
double l2CacheBytes() {
  long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return v > 0 ? double(v) : 1024.0 * 1024;
}

std::string cpuModel() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

fs::path cacheFile() {
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return fs::path(x) / "tgc" / "peak.json";
  if (const char *h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "tgc" / "peak.json";
  return {};
}

/// The cached peaks when the file is for this CPU and well formed (anything else: measure again).
bool readCache(const fs::path &file, MachinePeak &p) {
  std::ifstream f(file);
  nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return false;
  auto cpu = j.find("cpu"), gflops = j.find("gflops"), gbps = j.find("gbps"), cache = j.find("cache_gbps");
  if (cpu == j.end() || !cpu->is_string() || *cpu != p.cpu || gflops == j.end() || !gflops->is_number() ||
      gbps == j.end() || !gbps->is_number() || cache == j.end() || !cache->is_number())
    return false;
  p.gflops = gflops->get<double>();
  p.gbps = gbps->get<double>();
  p.cacheGbps = cache->get<double>();
  for (double v : {p.gflops, p.gbps, p.cacheGbps})
    if (!std::isfinite(v) || v <= 0)
      return false;
  return true;
}

void writeCache(const fs::path &file, const MachinePeak &p) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  fs::path tmp =
      file.string() + ".tmp" + std::to_string(long(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::ofstream out(tmp);
  out << nlohmann::json{{"cpu", p.cpu}, {"gflops", p.gflops}, {"gbps", p.gbps}, {"cache_gbps", p.cacheGbps}}.dump(
             -1, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
  out.close();
  if (out) // a cache: failing to write it only costs a probe later
    fs::rename(tmp, file, ec);
  if (!out || ec)
    fs::remove(tmp, ec);
}

} // namespace

double callFootprint(const tgc_program_info *p, const tgc_call_info &call) {
  std::set<int> seen;
  double bytes = 0;
  for (int a = 0; a < call.num_args; ++a)
    if (seen.insert(call.args[a]).second)
      bytes += double(p->buffers[call.args[a]].bytes);
  return bytes;
}

const MachinePeak &machinePeak() {
  static MachinePeak peak;
  static std::once_flag once;
  std::call_once(once, [] {
    peak.cpu = cpuModel();
    peak.cacheBytes = l2CacheBytes();
    fs::path file = cacheFile();
    if (!file.empty() && readCache(file, peak))
      return;
    peak.gflops = measureGflops();
    peak.gbps = measureGbps();
    peak.cacheGbps = measureCacheGbps();
    if (!file.empty())
      writeCache(file, peak);
  });
  return peak;
}

} // namespace tgc::rt
