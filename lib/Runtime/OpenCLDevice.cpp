//===- OpenCLDevice.cpp - Running programs through OpenCL -------*- C++ -*-===//
// The ICD loader (libOpenCL.so.1) opened with dlopen: first GPU device, else the first device of any kind.
//===----------------------------------------------------------------------===//
//
// The program's OpenCL C is built once per process with -cl-fp32-correctly-rounded-divide-sqrt (division and
// square root round like the interpreter's). Buffers of the arena are sub-buffers where the device's base address
// alignment allows. Kernels are timed with profiling events when asked.

#define CL_TARGET_OPENCL_VERSION 120
#include "Runtime/Device.h"

#include <CL/cl.h>

#include <dlfcn.h>
#include <vector>

namespace tgc::rt {
namespace {

// The entry points tgc uses, in one table: name, type.
#define TGC_CL_FUNCTIONS(X)                                                                                            \
  X(clGetPlatformIDs)                                                                                                  \
  X(clGetDeviceIDs)                                                                                                    \
  X(clGetDeviceInfo)                                                                                                   \
  X(clCreateContext)                                                                                                   \
  X(clCreateCommandQueue)                                                                                              \
  X(clCreateProgramWithSource)                                                                                         \
  X(clBuildProgram)                                                                                                    \
  X(clGetProgramBuildInfo)                                                                                             \
  X(clCreateKernel)                                                                                                    \
  X(clCreateBuffer)                                                                                                    \
  X(clCreateSubBuffer)                                                                                                 \
  X(clEnqueueWriteBuffer)                                                                                              \
  X(clEnqueueReadBuffer)                                                                                               \
  X(clSetKernelArg)                                                                                                    \
  X(clEnqueueNDRangeKernel)                                                                                            \
  X(clWaitForEvents)                                                                                                   \
  X(clGetEventProfilingInfo)                                                                                           \
  X(clReleaseEvent)                                                                                                    \
  X(clFinish)                                                                                                          \
  X(clReleaseMemObject)                                                                                                \
  X(clReleaseKernel)                                                                                                   \
  X(clReleaseProgram)                                                                                                  \
  X(clReleaseCommandQueue)                                                                                             \
  X(clReleaseContext)

struct CL {
#define TGC_CL_POINTER(name) decltype(&::name) name = nullptr;
  TGC_CL_FUNCTIONS(TGC_CL_POINTER)
#undef TGC_CL_POINTER
  void *handle = nullptr;

  bool open(std::string &error) {
    for (const char *lib : {"libOpenCL.so.1", "libOpenCL.so"})
      if ((handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!handle) {
      error = "the OpenCL runtime (libOpenCL.so.1) is not installed";
      return false;
    }
#define TGC_CL_LOAD(name)                                                                                              \
  if (!(name = reinterpret_cast<decltype(name)>(dlsym(handle, #name)))) {                                              \
    error = "the OpenCL runtime lacks " #name;                                                                         \
    return false;                                                                                                      \
  }
    TGC_CL_FUNCTIONS(TGC_CL_LOAD)
#undef TGC_CL_LOAD
    return true;
  }
};

std::string clError(const char *what, cl_int code) {
  return std::string(what) + " failed (OpenCL error " + std::to_string(code) + ")";
}

class OpenCLDevice final : public Device {
public:
  ~OpenCLDevice() override {
    for (cl_kernel k : kernels_)
      if (k)
        cl_.clReleaseKernel(k);
    if (program_)
      cl_.clReleaseProgram(program_);
    if (queue_)
      cl_.clReleaseCommandQueue(queue_);
    if (context_)
      cl_.clReleaseContext(context_);
  }

  bool open(std::string &error) {
    if (!cl_.open(error))
      return false;
    cl_uint n = 0;
    cl_platform_id platforms[16];
    if (cl_.clGetPlatformIDs(16, platforms, &n) != CL_SUCCESS || n == 0) {
      error = "no OpenCL platform is installed (an ICD such as pocl-opencl-icd)";
      return false;
    }
    // a GPU first, else any device
    for (cl_device_type type : {cl_device_type(CL_DEVICE_TYPE_GPU), cl_device_type(CL_DEVICE_TYPE_ALL)}) {
      for (cl_uint p = 0; p < std::min<cl_uint>(n, 16) && !device_; ++p) {
        cl_uint count = 0;
        if (cl_.clGetDeviceIDs(platforms[p], type, 1, &device_, &count) != CL_SUCCESS || count == 0)
          device_ = nullptr;
      }
      if (device_)
        break;
    }
    if (!device_) {
      error = "no OpenCL device found";
      return false;
    }
    cl_int err = 0;
    context_ = cl_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    if (!context_) {
      error = clError("clCreateContext", err);
      return false;
    }
    queue_ = cl_.clCreateCommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!queue_) {
      error = clError("clCreateCommandQueue", err);
      return false;
    }
    cl_uint alignBits = 0;
    cl_.clGetDeviceInfo(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof alignBits, &alignBits, nullptr);
    align_ = std::max<size_t>(1, alignBits / 8);
    return true;
  }

  bool load(const tgc_program_info &p, std::string &error) override {
    const char *src = static_cast<const char *>(p.code);
    size_t len = size_t(p.code_size);
    cl_int err = 0;
    program_ = cl_.clCreateProgramWithSource(context_, 1, &src, &len, &err);
    if (!program_) {
      error = clError("clCreateProgramWithSource", err);
      return false;
    }
    err = cl_.clBuildProgram(program_, 1, &device_, "-cl-fp32-correctly-rounded-divide-sqrt", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t size = 0;
      cl_.clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      cl_.clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      error = "the OpenCL program does not build: " + log.substr(0, 2000);
      return false;
    }
    for (int c = 0; c < p.num_calls; ++c) {
      kernels_.push_back(cl_.clCreateKernel(program_, p.calls[c].kernel, &err));
      if (!kernels_.back()) {
        error = clError(("clCreateKernel(" + std::string(p.calls[c].kernel) + ")").c_str(), err);
        return false;
      }
    }
    return true;
  }

  DeviceMemory allocate(size_t bytes, std::string &error) override {
    cl_int err = 0;
    cl_mem m = cl_.clCreateBuffer(context_, CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1), nullptr, &err);
    if (!m)
      error = clError(("allocating " + std::to_string(bytes) + " bytes: clCreateBuffer").c_str(), err);
    return m;
  }

  DeviceMemory part(DeviceMemory arena, size_t offset, size_t bytes) override {
    if (offset % align_ != 0 || bytes == 0)
      return nullptr;
    cl_buffer_region region{offset, bytes};
    cl_int err = 0;
    return cl_.clCreateSubBuffer(static_cast<cl_mem>(arena), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region,
                                 &err);
  }

  void release(DeviceMemory m) override {
    if (m)
      cl_.clReleaseMemObject(static_cast<cl_mem>(m));
  }

  bool upload(DeviceMemory dst, const void *src, size_t bytes, std::string &error) override {
    if (bytes == 0)
      return true;
    cl_int err =
        cl_.clEnqueueWriteBuffer(queue_, static_cast<cl_mem>(dst), CL_FALSE, 0, bytes, src, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
      error = clError("clEnqueueWriteBuffer", err);
    return err == CL_SUCCESS;
  }

  bool download(void *dst, DeviceMemory src, size_t bytes, std::string &error) override {
    if (bytes == 0)
      return true;
    cl_int err = cl_.clEnqueueReadBuffer(queue_, static_cast<cl_mem>(src), CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr);
    if (err != CL_SUCCESS)
      error = clError("clEnqueueReadBuffer", err);
    return err == CL_SUCCESS;
  }

  bool launch(int c, const tgc_call_info &call, const DeviceMemory *args, double *seconds,
              std::string &error) override {
    cl_kernel k = kernels_[size_t(c)];
    for (int a = 0; a < call.num_args; ++a) {
      cl_mem m = static_cast<cl_mem>(args[a]);
      if (cl_int err = cl_.clSetKernelArg(k, cl_uint(a), sizeof m, &m); err != CL_SUCCESS) {
        error = clError("clSetKernelArg", err);
        return false;
      }
    }
    size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      local[d] = size_t(call.block[d]);
      global[d] = size_t(call.grid[d] * call.block[d]);
    }
    if (global[0] * global[1] * global[2] == 0)
      return true; // no work-items: nothing to run
    cl_event event = nullptr;
    cl_int err =
        cl_.clEnqueueNDRangeKernel(queue_, k, 3, nullptr, global, local, 0, nullptr, seconds ? &event : nullptr);
    if (err != CL_SUCCESS) {
      error = clError(("launching " + std::string(call.kernel) + ": clEnqueueNDRangeKernel").c_str(), err);
      return false;
    }
    if (seconds) {
      cl_.clWaitForEvents(1, &event);
      cl_ulong start = 0, end = 0;
      cl_.clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
      cl_.clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      *seconds = double(end - start) * 1e-9;
      cl_.clReleaseEvent(event);
    }
    return true;
  }

  bool finish(std::string &error) override {
    cl_int err = cl_.clFinish(queue_);
    if (err != CL_SUCCESS)
      error = clError("clFinish", err);
    return err == CL_SUCCESS;
  }

  std::string describe() const override {
    char name[256] = {0};
    cl_.clGetDeviceInfo(device_, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    return std::string("opencl: ") + name;
  }

private:
  CL cl_;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::vector<cl_kernel> kernels_;
  size_t align_ = 128;
};

} // namespace

std::unique_ptr<Device> openOpenCL(std::string &error) {
  auto d = std::make_unique<OpenCLDevice>();
  if (!d->open(error))
    return nullptr;
  return d;
}

} // namespace tgc::rt
