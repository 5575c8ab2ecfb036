//===- Pipeline.cpp - Named pipelines ---------------------------*- C++ -*-===//
// The one place the stage pipelines are listed, one pass per line with the reason it is there.
//===----------------------------------------------------------------------===//

#include "Passes/Pipeline.h"

namespace tgc {

const std::vector<NamedPipeline> &namedPipelines() {
  static const std::vector<NamedPipeline> pipelines = {
      {"lower-tensors",
       "pool-first,"   // an average pool of a 1x1 convolution pools its input instead (fewer multiply-adds)
       "nhcw-input,"   // CPU: 1x1 convolutions on small maps read their input row by row ([N, H, C, W])
       "winograd,"     // CPU: 3x3 stride-1 convolutions as 16 matmuls of transformed tiles (F(2x2, 3x3))
       "pack-matmul,"  // CPU: large matmuls read b through a copy in contiguous column panels
       "pack-conv,"    // CPU: convolutions read their weights channel-last (lanes along the output channels)
       "decompose,"    // composite ops -> primitives, so rangeify sees only movement, elementwise and reduce ops
       "split-reduce," // a large reduce to few outputs: partial reduces, then a reduce of them (threads, GPUs)
       "simplify,"     // fold constants of the tensor graph before it is split into kernels
       "rangeify,"     // tensors -> kernels over ranges, fused, split where values go to memory
       "simplify,"     // the index arithmetic rangeify wrote (reshape's div/mod, pad's bounds) folds here
       "schedule,"     // sink of calls -> linear program in data order
       "plan-memory",  // temporaries share one arena
       "Tensor graph to a scheduled program with planned memory: pool-first, nhcw-input, winograd, pack-matmul, "
       "pack-conv, decompose, split-reduce, simplify, rangeify, simplify, schedule, plan-memory."},
      {"codegen",
       "optimize,"                  // choose upcast/unroll actions for each kernel from the target's vector width
       "collapse-loops,"            // CPU: few outer iterations -> the next loop joins the outermost (threads)
       "decompose-transcendentals," // exp2/log2/sin as polynomials: vectorizable, same results on every target
       "gpudims,"                   // GPU targets: output loops -> launch indices, group reduces via local memory
       "simplify,"                  // the actions' r_o*a + r_i under reshape's div/mod fold: addresses turn affine
       "expand,"                    // upcast/unroll ranges -> vector lanes; memory accesses one per lane
       "lower-reduce,"              // reduces become register accumulators (explicit loads and stores)
       "simplify,"                  // lane addresses fold to base + constant
       "contract,"                  // f32/f64 a*b+c -> mulacc (one rounding) where the target has FMAs
       "emulate-floats,"            // half-type arithmetic the target lacks in f32; max without NaN max from compares
       "devectorize,"               // scalar targets: vectors back into lanes (no-op with vector ALU)
       "coalesce,"                  // vector targets: lane accesses to adjacent addresses -> vector loads/stores
       "lower-index,"               // index arithmetic gets a width (i32 where it fits)
       "lower-divmod,"              // floor division -> C division (with a sign fix-up where signs may differ)
       "simplify,"                  // fold what the lowering exposed
       "linearize",                 // each kernel becomes the ordered list renderers walk
       "A scheduled program to kernels ready for a renderer: optimize, collapse-loops, decompose-transcendentals, "
       "gpudims, simplify, expand, lower-reduce, simplify, contract, emulate-floats, devectorize, coalesce, "
       "lower-index, lower-divmod, simplify, linearize."},
  };
  return pipelines;
}

const NamedPipeline *findPipeline(std::string_view name) {
  for (const NamedPipeline &p : namedPipelines())
    if (p.name == name)
      return &p;
  return nullptr;
}

} // namespace tgc
