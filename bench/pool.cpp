//===- pool.cpp - The cost of one parallel job on the runtime's thread pool -*- C++ -*-===//
// Times ThreadPool::run on an empty kernel back to back, as a model's small kernels run: the start and end of a job.
//===----------------------------------------------------------------------===//
//
// Usage: tgc-bench-pool [JOBS]   (built with tgc: build/bin/tgc-bench-pool)
// For 1 thread (no pool: a direct call) and each thread count from 2 to the cores, the median over 9 rounds of the
// mean time of one job in a round of JOBS jobs (default 20000), and that with a gap of 20 us of work by the caller
// between jobs (the workers' polling must outlast the gap to be of use).

#include "Runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void emptyKernel(void *const *, int64_t, int64_t) {}

void busy(double micros) {
  auto until = Clock::now() + std::chrono::duration<double, std::micro>(micros);
  while (Clock::now() < until) {
  }
}

double perJobMicros(tgc::rt::ThreadPool &pool, int jobs, double gapMicros) {
  std::vector<double> rounds;
  for (int r = 0; r < 9; ++r) {
    auto start = Clock::now();
    for (int j = 0; j < jobs; ++j) {
      pool.run(emptyKernel, nullptr, 1024);
      if (gapMicros > 0)
        busy(gapMicros);
    }
    double total = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    rounds.push_back(total / jobs - gapMicros);
  }
  std::nth_element(rounds.begin(), rounds.begin() + 4, rounds.end());
  return rounds[4];
}

} // namespace

int main(int argc, char **argv) {
  int jobs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20000;
  int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("threads  us per job  us per job after a 20 us gap\n");
  for (int t = 1; t <= std::max(2, cores); ++t) {
    tgc::rt::ThreadPool pool(t);
    double back = perJobMicros(pool, jobs, 0);
    double gap = perJobMicros(pool, std::max(1, jobs / 10), 20);
    std::printf("%7d  %10.2f  %10.2f\n", pool.size(), back, gap);
  }
  return 0;
}
