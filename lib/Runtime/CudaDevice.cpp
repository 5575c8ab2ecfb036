//===- CudaDevice.cpp - Running programs through the CUDA driver -*- C++ -*-===//
// libcuda opened with dlopen: the primary context, cubin (or PTX) modules, device memory, async copies, events.
//===----------------------------------------------------------------------===//
//
// The few declarations needed are written here (the driver API is a C ABI with stable versioned symbols), so tgc
// builds without the CUDA toolkit's headers and an executable starts on a machine without a driver: then it ends
// with one error line. The cubin is loaded first; when the driver rejects it (a GPU newer than --gpu-arch) the PTX
// beside it is JIT-compiled by the driver.

#include "Runtime/Device.h"

#include <dlfcn.h>
#include <vector>

namespace tgc::rt {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUdeviceptr = unsigned long long;

struct Cuda {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule *, const void *) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuEventCreate)(CUevent *, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
  void *handle = nullptr;

  template <typename F> bool sym(F &f, const char *name, std::string &error) {
    f = reinterpret_cast<F>(dlsym(handle, name));
    if (!f)
      error = std::string("the CUDA driver lacks ") + name;
    return f != nullptr;
  }

  bool open(std::string &error) {
    for (const char *lib : {"libcuda.so.1", "libcuda.so"})
      if ((handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle) {
      error = "the CUDA driver (libcuda.so.1) is not installed: this program needs an NVIDIA GPU and its driver";
      return false;
    }
    return sym(cuInit, "cuInit", error) && sym(cuDeviceGetCount, "cuDeviceGetCount", error) &&
           sym(cuDeviceGet, "cuDeviceGet", error) && sym(cuDeviceGetName, "cuDeviceGetName", error) &&
           sym(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", error) &&
           sym(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", error) &&
           sym(cuCtxSetCurrent, "cuCtxSetCurrent", error) && sym(cuGetErrorString, "cuGetErrorString", error) &&
           sym(cuModuleLoadData, "cuModuleLoadData", error) && sym(cuModuleUnload, "cuModuleUnload", error) &&
           sym(cuModuleGetFunction, "cuModuleGetFunction", error) && sym(cuMemAlloc, "cuMemAlloc_v2", error) &&
           sym(cuMemFree, "cuMemFree_v2", error) && sym(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", error) &&
           sym(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", error) && sym(cuLaunchKernel, "cuLaunchKernel", error) &&
           sym(cuStreamSynchronize, "cuStreamSynchronize", error) && sym(cuEventCreate, "cuEventCreate", error) &&
           sym(cuEventDestroy, "cuEventDestroy_v2", error) && sym(cuEventRecord, "cuEventRecord", error) &&
           sym(cuEventSynchronize, "cuEventSynchronize", error) && sym(cuEventElapsedTime, "cuEventElapsedTime", error);
  }
};

CUdeviceptr devicePtr(DeviceMemory m) { return CUdeviceptr(reinterpret_cast<uintptr_t>(m)); }

class CudaDevice final : public Device {
public:
  ~CudaDevice() override {
    for (CUevent e : {start_, stop_})
      if (e)
        cuda_.cuEventDestroy(e);
    if (module_)
      cuda_.cuModuleUnload(module_);
    if (context_)
      cuda_.cuDevicePrimaryCtxRelease(device_);
  }

  bool open(std::string &error) {
    if (!cuda_.open(error))
      return false;
    int count = 0;
    if (cuda_.cuInit(0) != 0 || cuda_.cuDeviceGetCount(&count) != 0 || count == 0) {
      error = "no NVIDIA GPU is available to the CUDA driver";
      return false;
    }
    char name[256] = {};
    return check(cuda_.cuDeviceGet(&device_, 0), "cuDeviceGet", error) &&
           check(cuda_.cuDeviceGetName(name, int(sizeof(name)) - 1, device_), "cuDeviceGetName", error) &&
           (name_ = name,
            check(cuda_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain", error)) &&
           check(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent", error);
  }

  bool load(const tgc_program_info &p, std::string &error) override {
    if (!bind(error))
      return false;
    CUresult r = cuda_.cuModuleLoadData(&module_, p.code);
    if (r != 0 && p.fallback_code) { // the cubin is for another GPU: let the driver compile the PTX
      module_ = nullptr;
      r = cuda_.cuModuleLoadData(&module_, p.fallback_code);
    }
    if (!check(r, "cuModuleLoadData (is the cubin for this GPU?)", error))
      return false;
    for (int c = 0; c < p.num_calls; ++c) {
      CUfunction f = nullptr;
      if (!check(cuda_.cuModuleGetFunction(&f, module_, p.calls[c].kernel), "cuModuleGetFunction", error))
        return false;
      functions_.push_back(f);
    }
    return true;
  }

  DeviceMemory allocate(size_t bytes, std::string &error) override {
    CUdeviceptr p = 0;
    if (!bind(error) || !check(cuda_.cuMemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc", error))
      return nullptr;
    return reinterpret_cast<DeviceMemory>(uintptr_t(p));
  }

  DeviceMemory part(DeviceMemory arena, size_t offset, size_t) override { return static_cast<char *>(arena) + offset; }
  bool partsAreViews() const override { return true; }

  void release(DeviceMemory m) override {
    if (m)
      cuda_.cuMemFree(devicePtr(m));
  }

  bool upload(DeviceMemory dst, const void *src, size_t bytes, std::string &error) override {
    if (bytes == 0)
      return true;
    return bind(error) && check(cuda_.cuMemcpyHtoDAsync(devicePtr(dst), src, bytes, nullptr), "cuMemcpyHtoD", error);
  }

  /// Returns when the copy is done (pageable host memory): the stream orders it after the launches.
  bool download(void *dst, DeviceMemory src, size_t bytes, std::string &error) override {
    return bytes == 0 || check(cuda_.cuMemcpyDtoHAsync(dst, devicePtr(src), bytes, nullptr), "cuMemcpyDtoH", error);
  }

  bool launch(int c, const tgc_call_info &call, const DeviceMemory *args, double *seconds,
              std::string &error) override {
    if (!bind(error))
      return false;
    std::vector<void *> params;
    for (int a = 0; a < call.num_args; ++a)
      params.push_back(const_cast<DeviceMemory *>(&args[a]));
    if (seconds && !start_ &&
        !(check(cuda_.cuEventCreate(&start_, 0), "cuEventCreate", error) &&
          check(cuda_.cuEventCreate(&stop_, 0), "cuEventCreate", error)))
      return false;
    if (seconds)
      cuda_.cuEventRecord(start_, nullptr);
    if (!check(cuda_.cuLaunchKernel(functions_[size_t(c)], unsigned(call.grid[0]), unsigned(call.grid[1]),
                                    unsigned(call.grid[2]), unsigned(call.block[0]), unsigned(call.block[1]),
                                    unsigned(call.block[2]), 0, nullptr, params.data(), nullptr),
               "cuLaunchKernel", error))
      return false;
    if (seconds) {
      float ms = 0;
      if (!check(cuda_.cuEventRecord(stop_, nullptr), "cuEventRecord", error) ||
          !check(cuda_.cuEventSynchronize(stop_), "kernel " + std::string(call.kernel), error) ||
          !check(cuda_.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime", error))
        return false;
      *seconds = double(ms) * 1e-3;
    }
    return true;
  }

  bool finish(std::string &error) override {
    return check(cuda_.cuStreamSynchronize(nullptr), "cuStreamSynchronize", error);
  }

  std::string describe() const override { return "cuda: " + name_; }

private:
  /// The model may be created on one thread and run on others: the context is made current on each call's thread
  /// (a thread-local setting, cheap to repeat).
  bool bind(std::string &error) { return check(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent", error); }

  bool check(CUresult e, const std::string &what, std::string &error) {
    if (e == 0)
      return true;
    const char *message = nullptr;
    if (cuda_.cuGetErrorString)
      cuda_.cuGetErrorString(e, &message);
    error = what + " failed: " + (message ? message : "error") + " (" + std::to_string(e) + ")";
    return false;
  }

  Cuda cuda_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  std::string name_;
  std::vector<CUfunction> functions_;
};

} // namespace

std::unique_ptr<Device> openCuda(std::string &error) {
  auto d = std::make_unique<CudaDevice>();
  if (!d->open(error))
    return nullptr;
  return d;
}

} // namespace tgc::rt
