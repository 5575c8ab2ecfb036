//===- HipDevice.cpp - Running programs through the HIP runtime -*- C++ -*-===//
// libamdhip64 opened with dlopen: module load of the HSA code object, kernel launch, device memory, events.
//===----------------------------------------------------------------------===//
//
// The few declarations needed are written here (the HIP module API is a C ABI), so tgc builds without ROCm's
// headers and an executable starts without ROCm: then it ends with one error line.

#include "Runtime/Device.h"

#include <dlfcn.h>
#include <vector>

namespace tgc::rt {
namespace {

using hipError_t = int;
using hipModule_t = void *;
using hipFunction_t = void *;
using hipEvent_t = void *;
using hipStream_t = void *;

struct Hip {
  hipError_t (*hipInit)(unsigned) = nullptr;
  hipError_t (*hipGetDeviceCount)(int *) = nullptr;
  hipError_t (*hipSetDevice)(int) = nullptr;
  const char *(*hipGetErrorString)(hipError_t) = nullptr;
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *) = nullptr;
  hipError_t (*hipModuleUnload)(hipModule_t) = nullptr;
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t, const char *) = nullptr;
  hipError_t (*hipMalloc)(void **, size_t) = nullptr;
  hipError_t (*hipFree)(void *) = nullptr;
  hipError_t (*hipMemcpyHtoD)(void *, const void *, size_t) = nullptr;
  hipError_t (*hipMemcpyDtoH)(void *, void *, size_t) = nullptr;
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void **, void **) = nullptr;
  hipError_t (*hipDeviceSynchronize)() = nullptr;
  hipError_t (*hipEventCreate)(hipEvent_t *) = nullptr;
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t) = nullptr;
  hipError_t (*hipEventSynchronize)(hipEvent_t) = nullptr;
  hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t) = nullptr;
  void *handle = nullptr;

  template <typename F> bool sym(F &f, const char *name, std::string &error) {
    f = reinterpret_cast<F>(dlsym(handle, name));
    if (!f)
      error = std::string("the HIP runtime lacks ") + name;
    return f != nullptr;
  }

  bool open(std::string &error) {
    for (const char *lib : {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"})
      if ((handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle) {
      error = "the HIP runtime (libamdhip64.so) is not installed: this program needs ROCm and an AMD GPU";
      return false;
    }
    return sym(hipInit, "hipInit", error) && sym(hipGetDeviceCount, "hipGetDeviceCount", error) &&
           sym(hipSetDevice, "hipSetDevice", error) && sym(hipGetErrorString, "hipGetErrorString", error) &&
           sym(hipModuleLoadData, "hipModuleLoadData", error) && sym(hipModuleUnload, "hipModuleUnload", error) &&
           sym(hipModuleGetFunction, "hipModuleGetFunction", error) && sym(hipMalloc, "hipMalloc", error) &&
           sym(hipFree, "hipFree", error) && sym(hipMemcpyHtoD, "hipMemcpyHtoD", error) &&
           sym(hipMemcpyDtoH, "hipMemcpyDtoH", error) && sym(hipModuleLaunchKernel, "hipModuleLaunchKernel", error) &&
           sym(hipDeviceSynchronize, "hipDeviceSynchronize", error) && sym(hipEventCreate, "hipEventCreate", error) &&
           sym(hipEventRecord, "hipEventRecord", error) && sym(hipEventSynchronize, "hipEventSynchronize", error) &&
           sym(hipEventElapsedTime, "hipEventElapsedTime", error);
  }
};

class HipDevice final : public Device {
public:
  ~HipDevice() override {
    if (module_)
      hip_.hipModuleUnload(module_);
  }

  bool open(std::string &error) {
    if (!hip_.open(error))
      return false;
    int count = 0;
    if (hip_.hipInit(0) != 0 || hip_.hipGetDeviceCount(&count) != 0 || count == 0) {
      error = "no AMD GPU is available to the HIP runtime";
      return false;
    }
    return check(hip_.hipSetDevice(0), "hipSetDevice", error);
  }

  bool load(const tgc_program_info &p, std::string &error) override {
    if (!check(hip_.hipModuleLoadData(&module_, p.code), "hipModuleLoadData (is the code object for this GPU?)", error))
      return false;
    for (int c = 0; c < p.num_calls; ++c) {
      hipFunction_t f = nullptr;
      if (!check(hip_.hipModuleGetFunction(&f, module_, p.calls[c].kernel), "hipModuleGetFunction", error))
        return false;
      functions_.push_back(f);
    }
    return true;
  }

  DeviceMemory allocate(size_t bytes, std::string &error) override {
    void *p = nullptr;
    if (!check(hip_.hipMalloc(&p, std::max<size_t>(bytes, 1)), "hipMalloc", error))
      return nullptr;
    return p;
  }

  DeviceMemory part(DeviceMemory arena, size_t offset, size_t) override { return static_cast<char *>(arena) + offset; }
  bool partsAreViews() const override { return true; }

  void release(DeviceMemory m) override {
    if (m)
      hip_.hipFree(m);
  }

  bool upload(DeviceMemory dst, const void *src, size_t bytes, std::string &error) override {
    return bytes == 0 || check(hip_.hipMemcpyHtoD(dst, src, bytes), "hipMemcpyHtoD", error);
  }

  bool download(void *dst, DeviceMemory src, size_t bytes, std::string &error) override {
    return bytes == 0 || check(hip_.hipMemcpyDtoH(dst, src, bytes), "hipMemcpyDtoH", error);
  }

  bool launch(int c, const tgc_call_info &call, const DeviceMemory *args, double *seconds,
              std::string &error) override {
    std::vector<void *> params;
    for (int a = 0; a < call.num_args; ++a)
      params.push_back(const_cast<DeviceMemory *>(&args[a]));
    hipEvent_t start = nullptr, stop = nullptr;
    if (seconds) {
      hip_.hipEventCreate(&start);
      hip_.hipEventCreate(&stop);
      hip_.hipEventRecord(start, nullptr);
    }
    if (!check(hip_.hipModuleLaunchKernel(functions_[size_t(c)], unsigned(call.grid[0]), unsigned(call.grid[1]),
                                          unsigned(call.grid[2]), unsigned(call.block[0]), unsigned(call.block[1]),
                                          unsigned(call.block[2]), 0, nullptr, params.data(), nullptr),
               "hipModuleLaunchKernel", error))
      return false;
    if (seconds) {
      hip_.hipEventRecord(stop, nullptr);
      hip_.hipEventSynchronize(stop);
      float ms = 0;
      hip_.hipEventElapsedTime(&ms, start, stop);
      *seconds = double(ms) * 1e-3;
    }
    return true;
  }

  bool finish(std::string &error) override { return check(hip_.hipDeviceSynchronize(), "hipDeviceSynchronize", error); }

  std::string describe() const override { return "hip: device 0"; }

private:
  bool check(hipError_t e, const char *what, std::string &error) {
    if (e == 0)
      return true;
    error = std::string(what) + " failed: " + (hip_.hipGetErrorString ? hip_.hipGetErrorString(e) : "error") + " (" +
            std::to_string(e) + ")";
    return false;
  }

  Hip hip_;
  hipModule_t module_ = nullptr;
  std::vector<hipFunction_t> functions_;
};

} // namespace

std::unique_ptr<Device> openHip(std::string &error) {
  auto d = std::make_unique<HipDevice>();
  if (!d->open(error))
    return nullptr;
  return d;
}

} // namespace tgc::rt
