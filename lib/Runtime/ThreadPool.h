//===- ThreadPool.h - Workers that spin briefly, then sleep -----*- C++ -*-===//
// Splits a kernel's parallel loop across threads; idle workers spin a few microseconds for the next job, then sleep.
//===----------------------------------------------------------------------===//
//
// A model runs its kernels back to back, so the next job usually comes within microseconds: a worker that waits
// for it on the futex pays a wake-up (tens of microseconds on a VM) per kernel. Idle workers therefore poll the job
// counter for up to kSpinMicros before they sleep, and the caller polls for the end of a job for up to
// kCallerSpinMicros (OpenMP runtimes call this the block time); with more threads than CPUs nothing polls. A job's
// start and end cost a few atomic operations when nobody sleeps. bench/pool.cpp measures the cost of one job.

#pragma once

#include "Runtime/tgc_runtime.h"

#include <atomic>
#include <cstdint>
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
  /// Run fn over [0, extent) split in size() contiguous chunks; the calling thread runs the first one.
  void run(tgc_kernel_fn fn, void *const *buffers, int64_t extent);

private:
  void work(int index);

  std::vector<std::thread> workers_;
  // the job: written by run() before it bumps generation_, read by the workers after they see it change
  tgc_kernel_fn fn_ = nullptr;
  void *const *buffers_ = nullptr;
  int64_t extent_ = 0;
  int callerCpu_ = -1;                  // the CPU run() was called on: a worker woken there moves off it
  bool poll_ = true;                    // no more threads than CPUs: waiting threads poll before they sleep
  std::atomic<uint32_t> generation_{0}; // one more per job (and once more to stop)
  std::atomic<int> pending_{0};         // workers still running the current job
  std::atomic<bool> stop_{false};
};

} // namespace tgc::rt
