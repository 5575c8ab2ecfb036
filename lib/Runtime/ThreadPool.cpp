//===- ThreadPool.cpp - Workers that spin briefly, then sleep ---*- C++ -*-===//
// A generation counter starts a job; each thread runs its share and then helps with the others'; the caller closes
// the job once every grain is taken and waits only for the workers that joined it.
//===----------------------------------------------------------------------===//

#include "Runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#ifdef __linux__
#include <sched.h>
#endif
#include <system_error>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tgc::rt {
namespace {

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Wait until `value` differs from `old`: poll for `spinMicros`, then sleep on the futex.
template <typename T> T waitChange(const std::atomic<T> &value, T old, int spinMicros) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spinMicros);
  for (int i = 1;; ++i) {
    T now = value.load(std::memory_order_acquire);
    if (now != old)
      return now;
    pause();
    if (i % 64 != 0)
      continue;
    if (std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::yield(); // a thread this one waits for may have been woken onto this CPU
  }
  T now;
  while ((now = value.load(std::memory_order_acquire)) == old)
    value.wait(old, std::memory_order_acquire);
  return now;
}

/// The CPU this thread runs on, or -1 where the system does not say.
int currentCpu() {
#ifdef __linux__
  return sched_getcpu();
#else
  return -1;
#endif
}

/// Move this thread off `cpu` to another CPU it may run on, and let it run anywhere again: Linux may wake a worker
/// onto the CPU of the thread that woke it, and then leaves both there (cache-hot tasks are not migrated), so a
/// 2-thread job would run at 1-thread speed.
void leaveCpu(int cpu) {
#ifdef __linux__
  cpu_set_t allowed;
  if (cpu < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2 ||
      !CPU_ISSET(cpu, &allowed))
    return;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof others, &others) == 0)
    sched_setaffinity(0, sizeof allowed, &allowed);
#else
  (void)cpu;
#endif
}

} // namespace

ThreadPool::ThreadPool(int threads) {
  int cpus = int(std::max(1u, std::thread::hardware_concurrency()));
#ifdef __linux__
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    cpus = CPU_COUNT(&allowed);
#endif
  poll_ = threads <= cpus; // set before the workers start, which read it
  shares_ = std::make_unique<Share[]>(size_t(std::max(1, threads)));
  for (int i = 1; i < threads; ++i) {
    try {
      workers_.emplace_back([this, i] { work(i); });
    } catch (const std::system_error &) {
      break; // the system has no more threads to give: run with those started (size() tells how many)
    }
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::run(tgc_kernel_fn fn, void *const *buffers, int64_t extent) {
  if (workers_.empty()) {
    fn(buffers, 0, extent);
    return;
  }
  fn_ = fn;
  buffers_ = buffers;
  int parts = size();
  grain_ = std::max<int64_t>(1, extent / (int64_t(parts) * kGrainsPerShare));
  for (int i = 0; i < parts; ++i) {
    shares_[i].next.store(extent * i / parts, std::memory_order_relaxed);
    shares_[i].end = extent * (i + 1) / parts;
  }
  callerCpu_ = currentCpu();
  uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  job_.store(uint64_t(generation) << 32, std::memory_order_release); // open, nobody in it
  generation_.store(generation, std::memory_order_release);
  generation_.notify_all();
  runShares(0);
  // every grain is taken: close the job to workers that have not joined it yet, and wait for those that have
  uint64_t job = job_.fetch_or(kClosed, std::memory_order_acq_rel) | kClosed;
  int spin = poll_ ? kCallerSpinMicros : 0;
  while ((job & kJoinedMask) != 0)
    job = waitChange(job_, job, spin);
}

bool ThreadPool::join(uint32_t generation) {
  uint64_t job = job_.load(std::memory_order_acquire);
  while ((job >> 32) == generation && !(job & kClosed))
    if (job_.compare_exchange_weak(job, job + 1, std::memory_order_acq_rel, std::memory_order_acquire))
      return true;
  return false;
}

void ThreadPool::work(int index) {
  uint32_t seen = 0;
  while (true) {
    seen = waitChange(generation_, seen, poll_ ? kSpinMicros : 0);
    if (stop_.load(std::memory_order_relaxed))
      return;
    if (!join(seen))
      continue; // woken after the others had taken every grain
    if (int cpu = currentCpu(); cpu >= 0 && cpu == callerCpu_ && poll_)
      leaveCpu(cpu);
    runShares(index);
    uint64_t job = job_.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if ((job & kJoinedMask) == 0 && (job & kClosed))
      job_.notify_one();
  }
}

void ThreadPool::runShares(int index) {
  int parts = size();
  for (int k = 0; k < parts; ++k) {
    Share &share = shares_[(index + k) % parts];
    for (;;) {
      int64_t begin = share.next.fetch_add(grain_, std::memory_order_relaxed);
      if (begin >= share.end)
        break;
      fn_(buffers_, begin, std::min(begin + grain_, share.end));
    }
  }
}

} // namespace tgc::rt
