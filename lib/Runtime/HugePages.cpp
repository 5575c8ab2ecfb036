//===- HugePages.cpp - Large host buffers backed by huge pages --*- C++ -*-===//
// mmap a little more than asked, trim to a 2 MiB boundary, madvise(MADV_HUGEPAGE), then fault every page in.
//===----------------------------------------------------------------------===//
//
// A kernel streaming a 64 MiB buffer through 4 KiB pages takes a TLB miss every 4 KiB; with 2 MiB pages, every 2
// MiB. numpy does the same for its large arrays. The advice is only a hint: where huge pages are disabled the
// memory is ordinary pages, and correctness never depends on it.

#include "Runtime/HugePages.h"

#include <cstdint>
#include <cstring>
#include <sys/mman.h>

namespace tgc::rt {
namespace {

constexpr size_t kHuge = size_t(2) << 20;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

/// Touch one byte per 4 KiB page so that every page is faulted in now, not during a timed run.
void prefault(void *p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0)
    return;
#endif
  auto *c = static_cast<volatile uint8_t *>(p);
  for (size_t i = 0; i < bytes; i += 4096)
    c[i] = 0;
}

} // namespace

void *allocateLarge(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  if (bytes < kHuge) {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  size_t size = roundUp(bytes, kHuge);
  void *raw = mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  auto base = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = roundUp(base, kHuge);
  if (aligned > base)
    munmap(raw, aligned - base);
  if (size_t tail = base + size + kHuge - (aligned + size))
    munmap(reinterpret_cast<void *>(aligned + size), tail);
  void *p = reinterpret_cast<void *>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);
#endif
  prefault(p, size);
  return p;
}

void freeLarge(void *p, size_t bytes) {
  if (p && bytes)
    munmap(p, bytes < kHuge ? bytes : roundUp(bytes, kHuge));
}

} // namespace tgc::rt
