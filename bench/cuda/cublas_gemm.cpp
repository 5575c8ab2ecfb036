//===- cublas_gemm.cpp - cuBLAS GEMM times, the baseline of tgc's cuda GEMMs -*- C++ -*-===//
// fp32 (cublasSgemm) and fp16 (cublasGemmEx, f32 accumulation) square GEMMs timed with CUDA events.
//===----------------------------------------------------------------------===//
//
// Built on a machine with the CUDA toolkit's headers only: libcuda and libcublas are opened with dlopen on the GPU
// machine (scripts/gpu_check.py builds it and runs it there). Usage: cublas_gemm [N] [RUNS]; prints one line per
// precision: `cublas f32 N=4096: median 7.123 ms, 19.29 TFLOPS`.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda.h>
#include <dlfcn.h>
#include <vector>

namespace {

void *library(std::initializer_list<const char *> names) {
  for (const char *n : names)
    if (void *h = dlopen(n, RTLD_NOW | RTLD_GLOBAL))
      return h;
  return nullptr;
}

template <typename F> F symbol(void *lib, const char *name) {
  F f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) {
    std::fprintf(stderr, "cublas_gemm: %s not found\n", name);
    std::exit(1);
  }
  return f;
}

void check(int status, const char *what) {
  if (status != 0) {
    std::fprintf(stderr, "cublas_gemm: %s failed (%d)\n", what, status);
    std::exit(1);
  }
}

} // namespace

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  int runs = argc > 2 ? std::atoi(argv[2]) : 20;
  void *cuda = library({"libcuda.so.1"});
  void *cublas = library({"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
  if (!cuda || !cublas) {
    std::fprintf(stderr, "cublas_gemm: %s not found\n", cuda ? "libcublas" : "libcuda");
    return 1;
  }
  auto cuInit_ = symbol<decltype(&cuInit)>(cuda, "cuInit");
  auto cuDeviceGet_ = symbol<decltype(&cuDeviceGet)>(cuda, "cuDeviceGet");
  auto cuRetain = symbol<decltype(&cuDevicePrimaryCtxRetain)>(cuda, "cuDevicePrimaryCtxRetain");
  auto cuSetCurrent = symbol<decltype(&cuCtxSetCurrent)>(cuda, "cuCtxSetCurrent");
  auto cuAlloc = symbol<decltype(&cuMemAlloc)>(cuda, "cuMemAlloc_v2");
  auto cuSet32 = symbol<decltype(&cuMemsetD32)>(cuda, "cuMemsetD32_v2");
  auto cuSet16 = symbol<decltype(&cuMemsetD16)>(cuda, "cuMemsetD16_v2");
  auto cuEvCreate = symbol<decltype(&cuEventCreate)>(cuda, "cuEventCreate");
  auto cuEvRecord = symbol<decltype(&cuEventRecord)>(cuda, "cuEventRecord");
  auto cuEvSync = symbol<decltype(&cuEventSynchronize)>(cuda, "cuEventSynchronize");
  auto cuEvElapsed = symbol<decltype(&cuEventElapsedTime)>(cuda, "cuEventElapsedTime");
  auto create = symbol<decltype(&cublasCreate_v2)>(cublas, "cublasCreate_v2");
  auto sgemm = symbol<decltype(&cublasSgemm_v2)>(cublas, "cublasSgemm_v2");
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                    const void *, cudaDataType, int, const void *, cudaDataType, int, const void *,
                                    void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  auto gemmEx = symbol<GemmEx>(cublas, "cublasGemmEx"); // (the C++ header overloads the name)

  CUdevice dev;
  CUcontext ctx;
  check(cuInit_(0), "cuInit");
  check(cuDeviceGet_(&dev, 0), "cuDeviceGet");
  check(cuRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuSetCurrent(ctx), "cuCtxSetCurrent");
  size_t elems = size_t(n) * n;
  CUdeviceptr a, b, c;
  for (CUdeviceptr *p : {&a, &b, &c})
    check(cuAlloc(p, elems * 4), "cuMemAlloc");
  cublasHandle_t handle;
  check(create(&handle), "cublasCreate");
  CUevent start, stop;
  check(cuEvCreate(&start, 0), "cuEventCreate");
  check(cuEvCreate(&stop, 0), "cuEventCreate");
  float one = 1.0f, zero = 0.0f;

  for (int half = 0; half < 2; ++half) {
    if (half) { // 1.0 in binary16
      check(cuSet16(a, 0x3c00, elems), "cuMemsetD16");
      check(cuSet16(b, 0x3c00, elems), "cuMemsetD16");
    } else {
      check(cuSet32(a, 0x3f800000u, elems), "cuMemsetD32");
      check(cuSet32(b, 0x3f800000u, elems), "cuMemsetD32");
    }
    auto gemm = [&] {
      void *pa = reinterpret_cast<void *>(a), *pb = reinterpret_cast<void *>(b), *pc = reinterpret_cast<void *>(c);
      if (half)
        return int(gemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, pa, CUDA_R_16F, n, pb, CUDA_R_16F, n, &zero,
                          pc, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      return int(sgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<float *>(pa), n,
                       static_cast<float *>(pb), n, &zero, static_cast<float *>(pc), n));
    };
    check(gemm(), "gemm (warm-up)");
    std::vector<float> ms;
    for (int r = 0; r < runs; ++r) {
      float t = 0;
      check(cuEvRecord(start, nullptr), "cuEventRecord");
      check(gemm(), "gemm");
      check(cuEvRecord(stop, nullptr), "cuEventRecord");
      check(cuEvSync(stop), "cuEventSynchronize");
      check(cuEvElapsed(&t, start, stop), "cuEventElapsedTime");
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    double median = ms[ms.size() / 2];
    std::printf("cublas %s N=%d: median %.3f ms, %.2f TFLOPS\n", half ? "f16" : "f32", n, median,
                2.0 * n * n * double(n) / (median * 1e-3) / 1e12);
  }
  return 0;
}
