//===- ThreadPool.h - Workers that spin briefly, then sleep -----*- C++ -*-===//
// Splits a kernel's parallel loop across threads, which take work from each other when they finish early; idle
// workers spin a few microseconds for the next job, then sleep.
//===----------------------------------------------------------------------===//
//
// A model runs its kernels back to back, so the next job usually comes within microseconds: a worker that waits
// for it on the futex pays a wake-up (tens of microseconds on a VM) per kernel. Idle workers therefore poll the job
// counter for up to kSpinMicros before they sleep, and the caller polls for the end of a job for up to
// kCallerSpinMicros (OpenMP runtimes call this the block time); with more threads than CPUs nothing polls. A job's
// start and end cost a few atomic operations when nobody sleeps. bench/pool.cpp measures the cost of one job.
//
// Each thread owns one contiguous share of the loop (the same rows or channels in consecutive kernels, which keeps a
// producer's output in the cache of the thread that reads it next) and takes it a grain at a time; a thread that has
// finished its share takes grains from the others' (a CPU slowed by other work on its host, or woken late, no longer
// holds up the job: static shares made a 2-vCPU VM run many kernels at one thread's speed).

#pragma once

#include "Runtime/tgc_runtime.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace tgc::rt {

class ThreadPool {
public:
  /// How long an idle worker polls for the next job before it sleeps.
  static constexpr int kSpinMicros = 50;
  /// How long the caller polls for the workers to finish a job before it sleeps: longer, since it has nothing else
  /// to do, and a caller woken by a worker may be placed on that worker's CPU.
  static constexpr int kCallerSpinMicros = 5000;

  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return int(workers_.size()) + 1; }
  /// Grains per thread's share: enough for a fast thread to take over a slow one's work, few enough that each
  /// call of the kernel still runs a long loop.
  static constexpr int kGrainsPerShare = 4;

  /// Run fn over [0, extent) split in size() contiguous shares; the calling thread owns the first one.
  void run(tgc_kernel_fn fn, void *const *buffers, int64_t extent);

private:
  /// One thread's share of the current job: grains are taken from `next` up to `end`.
  struct alignas(64) Share {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };

  void work(int index);
  /// Enter the job of `generation` unless it is closed or gone (a worker woken late stays out of it, and the caller
  /// does not wait for it).
  bool join(uint32_t generation);
  /// Run the grains of share `index`, then those left in the others'.
  void runShares(int index);

  std::vector<std::thread> workers_;
  // the job: written by run() before it bumps generation_, read by the workers after they see it change
  tgc_kernel_fn fn_ = nullptr;
  void *const *buffers_ = nullptr;
  int64_t grain_ = 1;
  std::unique_ptr<Share[]> shares_;     // size() of them
  int callerCpu_ = -1;                  // the CPU run() was called on: a worker woken there moves off it
  bool poll_ = true;                    // no more threads than CPUs: waiting threads poll before they sleep
  std::atomic<uint32_t> generation_{0}; // one more per job (and once more to stop)
  // the current job: its generation (high 32 bits), whether it is closed to workers that have not joined it (the
  // caller has run out of grains to hand out) and how many workers are in it (the low bits)
  static constexpr uint64_t kClosed = uint64_t(1) << 31;
  static constexpr uint64_t kJoinedMask = kClosed - 1;
  std::atomic<uint64_t> job_{0};
  std::atomic<bool> stop_{false};
};

} // namespace tgc::rt
