//===- Device.cpp - The runtime's device libraries, by name -----*- C++ -*-===//
// A GPU program's device kind (tgc_program.device, Targets.def's device column) to the code that opens it.
//===----------------------------------------------------------------------===//

#include "Runtime/Device.h"

namespace tgc::rt {

namespace {

struct DeviceKind {
  const char *name;
  std::unique_ptr<Device> (*open)(std::string &error);
};

constexpr DeviceKind kDeviceKinds[] = {
    {"opencl", openOpenCL}, // OpenCLDevice.cpp: any OpenCL ICD (PoCL, vendors' drivers)
    {"hip", openHip},       // HipDevice.cpp: libamdhip64, loaded when a program needs it
    {"cuda", openCuda},     // CudaDevice.cpp: libcuda, loaded when a program needs it
};

} // namespace

std::unique_ptr<Device> openDevice(const std::string &kind, std::string &error) {
  for (const DeviceKind &d : kDeviceKinds)
    if (kind == d.name)
      return d.open(error);
  error = "unknown device kind '" + kind + "'";
  return nullptr;
}

} // namespace tgc::rt
