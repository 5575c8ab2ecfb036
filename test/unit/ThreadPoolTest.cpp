//===- ThreadPoolTest.cpp - The runtime's thread pool -----------*- C++ -*-===//
// Every index of every job runs exactly once, on any thread count, back to back and after the workers slept; a slow
// thread's share is taken over by the others.
//===----------------------------------------------------------------------===//

#include "Runtime/ThreadPool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

using tgc::rt::ThreadPool;

namespace {

/// buffers[0]: a std::vector<std::atomic<int>> of hit counts, one per index.
void countHits(void *const *buffers, int64_t begin, int64_t end) {
  auto &hits = *static_cast<std::vector<std::atomic<int>> *>(buffers[0]);
  for (int64_t i = begin; i < end; ++i)
    hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
}

bool eachHit(std::vector<std::atomic<int>> &hits, int times) {
  for (auto &h : hits)
    if (h.load() != times)
      return false;
  return true;
}

std::thread::id slowThread;

/// countHits, and 5 ms per index on slowThread; buffers[1]: an std::atomic<int> counting the indices run there.
void countHitsSlowly(void *const *buffers, int64_t begin, int64_t end) {
  countHits(buffers, begin, end);
  if (std::this_thread::get_id() != slowThread)
    return;
  static_cast<std::atomic<int> *>(buffers[1])->fetch_add(int(end - begin));
  std::this_thread::sleep_for(std::chrono::milliseconds(5 * (end - begin)));
}

} // namespace

TEST_CASE("the pool runs every index of a job once", "[threadpool]") {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (int64_t extent : {1, 2, 3, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(extent));
      void *buffers[] = {&hits};
      for (int job = 0; job < 200; ++job)
        pool.run(countHits, buffers, extent); // back to back: the workers are still polling
      CHECK(eachHit(hits, 200));
    }
  }
}

TEST_CASE("the pool wakes workers that went to sleep", "[threadpool]") {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(64);
  void *buffers[] = {&hits};
  for (int job = 0; job < 5; ++job) {
    std::this_thread::sleep_for(std::chrono::microseconds(20 * ThreadPool::kSpinMicros)); // past the polling
    pool.run(countHits, buffers, 64);
  }
  CHECK(eachHit(hits, 5));
}

TEST_CASE("a pool stops whether its workers poll, sleep or never ran", "[threadpool]") {
  for (int i = 0; i < 50; ++i) {
    ThreadPool idle(4); // destroyed before its workers may have started
  }
  ThreadPool slept(2);
  std::this_thread::sleep_for(std::chrono::microseconds(20 * ThreadPool::kSpinMicros));
  std::vector<std::atomic<int>> hits(8);
  void *buffers[] = {&hits};
  {
    ThreadPool busy(2);
    busy.run(countHits, buffers, 8); // destroyed while its worker polls for the next job
  }
  CHECK(eachHit(hits, 1));
}

TEST_CASE("threads take over the share of a slow one", "[threadpool]") {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(16);
  std::atomic<int> slowIndices{0};
  void *buffers[] = {&hits, &slowIndices};
  slowThread = std::this_thread::get_id(); // the caller, which owns the first 8 indices
  pool.run(countHitsSlowly, buffers, 16);
  CHECK(eachHit(hits, 1));
  CHECK(slowIndices.load() < 8); // the worker took grains (16 / (2 x 4) = 2 indices) of the caller's share
}

TEST_CASE("many jobs of random sizes, some after the workers slept", "[threadpool]") {
  std::mt19937 rng(1);
  for (int threads : {2, 3, 8}) { // 8: more threads than CPUs on small machines, where nothing polls
    ThreadPool pool(threads);
    bool ok = true;
    for (int job = 0; job < 20000 && ok; ++job) {
      int64_t extent = 1 + int64_t(rng() % 50);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(extent));
      void *buffers[] = {&hits};
      if (job % 2000 == 0) // past the polling: workers wake late, some after every grain is taken
        std::this_thread::sleep_for(std::chrono::microseconds(2 * ThreadPool::kSpinMicros));
      pool.run(countHits, buffers, extent);
      ok = eachHit(hits, 1);
    }
    CHECK(ok);
  }
}
