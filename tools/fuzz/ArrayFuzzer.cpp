//===- ArrayFuzzer.cpp - libFuzzer target for .npy and safetensors readers -*- C++ -*-===//
// Any bytes must decode or fail with a message; decoded arrays must be exactly as large as their shape says.
//===----------------------------------------------------------------------===//

#include "Runtime/Npy.h"
#include "Runtime/Safetensors.h"

#include <cstdio>
#include <cstdlib>

using namespace tgc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Array a;
  std::string error;
  if (decodeNpy(data, size, a, error)) {
    if (a.data.size() != a.byteSize())
      std::abort();
    std::string again = encodeNpy(a);
    Array b;
    if (!decodeNpy(reinterpret_cast<const uint8_t *>(again.data()), again.size(), b, error) || b.data != a.data ||
        b.shape != a.shape || b.type != a.type)
      std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  SafetensorsFile f;
  std::string error2;
  if (f.parse(data, size, error2)) {
    for (const auto &[name, e] : f.entries())
      if (e.data < data || e.data + e.size > data + size || int64_t(e.size) != checkedNumel(e.shape) * elemSize(e.type))
        std::abort();
  } else if (error2.empty()) {
    std::abort();
  }
  return 0;
}
