//===- ThreadPool.h - Workers that wait passively ---------------*- C++ -*-===//
// Splits a kernel's parallel loop across threads; idle workers sleep on a condition variable, never spin.
//===----------------------------------------------------------------------===//

#pragma once

#include "Runtime/tgc_runtime.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace tgc::rt {

class ThreadPool {
public:
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
  std::mutex mu_;
  std::condition_variable start_, done_;
  tgc_kernel_fn fn_ = nullptr;
  void *const *buffers_ = nullptr;
  int64_t extent_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

} // namespace tgc::rt
