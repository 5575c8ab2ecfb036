//===- Peak.h - This machine's measured compute and memory peaks -*- C++ -*-===//
// A small probe (one core's f32 FMA rate and copy bandwidth), run once and cached, for roofline figures.
//===----------------------------------------------------------------------===//

#pragma once

#include <string>

namespace tgc::rt {

struct MachinePeak {
  std::string cpu;   // the CPU's model name
  double gflops = 0; // one core, f32 fused multiply-adds (2 FLOPs each), widest vectors the CPU has
  double gbps = 0;   // one core, 64 MiB: the faster of a read stream and a memcpy (bytes read + written)
};

/// Measured on first use (about 0.1 s) and cached in $XDG_CACHE_HOME/tgc/peak.json (else ~/.cache/tgc/), keyed by
/// the CPU's model name; later calls and processes reuse it.
const MachinePeak &machinePeak();

} // namespace tgc::rt
