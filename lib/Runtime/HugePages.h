//===- HugePages.h - Large host buffers backed by huge pages ----*- C++ -*-===//
// Pre-faulted anonymous memory, 2 MiB aligned and advised for transparent huge pages (fewer TLB misses at scale).
//===----------------------------------------------------------------------===//

#pragma once

#include <cstddef>

namespace tgc::rt {

/// `bytes` of zeroed, pre-faulted memory; from 2 MiB up it is 2 MiB aligned and advised MADV_HUGEPAGE (Linux
/// gives huge pages when transparent huge pages are enabled or in `madvise` mode). nullptr when mmap fails.
void *allocateLarge(size_t bytes);
/// Release memory from allocateLarge (nullptr and 0 bytes are fine).
void freeLarge(void *p, size_t bytes);

} // namespace tgc::rt
