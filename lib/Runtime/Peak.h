//===- Peak.h - This machine's measured compute and memory peaks -*- C++ -*-===//
// A small probe (one core's f32 FMA rate and copy bandwidth), run once and cached, for roofline figures.
//===----------------------------------------------------------------------===//

#pragma once

#include "Runtime/tgc_runtime.h"

#include <string>

namespace tgc::rt {

struct MachinePeak {
  std::string cpu;   // the CPU's model name
  double gflops = 0; // one core, f32 fused multiply-adds (2 FLOPs each), widest vectors the CPU has
  double gbps = 0;   // one core, 64 MiB: the faster of a read stream and a memcpy (bytes read + written)
  /// One core reading data that sits in its L2 cache (a buffer of half of it, read again and again).
  double cacheGbps = 0;
  /// The largest data cacheGbps applies to: one core's L2 cache (from the C library; not kept in the file).
  double cacheBytes = 0;

  /// The bandwidth a kernel whose operands span `footprint` bytes can reach: cacheGbps when they fit the caches
  /// (`cached` set), else gbps.
  double bandwidthFor(double footprint, bool &cached) const {
    cached = footprint <= cacheBytes;
    return cached ? cacheGbps : gbps;
  }
};

/// Measured on first use (about 0.1 s) and cached in $XDG_CACHE_HOME/tgc/peak.json (else ~/.cache/tgc/), keyed by
/// the CPU's model name; later calls and processes reuse it.
const MachinePeak &machinePeak();

/// The bytes a call's operands span (each buffer it takes once, at full size): what bandwidthFor compares with the
/// caches.
double callFootprint(const tgc_program_info *p, const tgc_call_info &call);

} // namespace tgc::rt
