//===- ThreadPool.cpp - Workers that wait passively -------------*- C++ -*-===//
// A generation counter starts a job; each worker runs its chunk and the last one to finish wakes the caller.
//===----------------------------------------------------------------------===//

#include "Runtime/ThreadPool.h"

#include <system_error>

namespace tgc::rt {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) {
    try {
      workers_.emplace_back([this, i] { work(i); });
    } catch (const std::system_error &) {
      break; // the system has no more threads to give: run with those started (size() tells how many)
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

static void chunk(tgc_kernel_fn fn, void *const *buffers, int64_t extent, int index, int parts) {
  int64_t begin = extent * index / parts;
  int64_t end = extent * (index + 1) / parts;
  if (begin < end)
    fn(buffers, begin, end);
}

void ThreadPool::run(tgc_kernel_fn fn, void *const *buffers, int64_t extent) {
  if (workers_.empty()) {
    fn(buffers, 0, extent);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = fn;
    buffers_ = buffers;
    extent_ = extent;
    pending_ = int(workers_.size());
    ++generation_;
  }
  start_.notify_all();
  chunk(fn, buffers, extent, 0, size());
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return pending_ == 0; });
}

void ThreadPool::work(int index) {
  uint64_t seen = 0;
  while (true) {
    std::unique_lock<std::mutex> lock(mu_);
    start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_)
      return;
    seen = generation_;
    tgc_kernel_fn fn = fn_;
    void *const *buffers = buffers_;
    int64_t extent = extent_;
    lock.unlock();
    chunk(fn, buffers, extent, index, size());
    lock.lock();
    if (--pending_ == 0)
      done_.notify_one();
  }
}

} // namespace tgc::rt
