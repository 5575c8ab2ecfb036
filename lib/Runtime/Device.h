//===- Device.h - A GPU runtime as the model runner sees it -----*- C++ -*-===//
// Memory, copies, code loading and kernel launches behind one interface; OpenCL, HIP and CUDA are loaded with dlopen.
//===----------------------------------------------------------------------===//
//
// A compiled program for a GPU target names its device kind ("opencl", "hip", "cuda") and carries its code
// (OpenCL C source, an HSA code object, a cubin with its PTX). The vendor library is opened at run time, so an
// executable starts on any machine and a missing runtime or device is one error line, not a loader failure.

#pragma once

#include "Runtime/tgc_runtime.h"

#include <cstddef>
#include <memory>
#include <string>

namespace tgc::rt {

/// Device memory: an OpenCL cl_mem, or a HIP device pointer.
using DeviceMemory = void *;

class Device {
public:
  virtual ~Device() = default;
  /// Build or load the program's code and find every call's kernel.
  virtual bool load(const tgc_program_info &p, std::string &error) = 0;
  /// `bytes` of device memory (at least one byte is allocated). nullptr with `error` set on failure.
  virtual DeviceMemory allocate(size_t bytes, std::string &error) = 0;
  /// The part of `arena` at `offset`, or nullptr when the device cannot address it as a buffer of its own (then
  /// the caller allocates separately).
  virtual DeviceMemory part(DeviceMemory arena, size_t offset, size_t bytes) = 0;
  /// Whether parts are plain addresses into the arena (HIP, CUDA), not objects to release (OpenCL sub-buffers).
  virtual bool partsAreViews() const { return false; }
  virtual void release(DeviceMemory m) = 0;
  virtual bool upload(DeviceMemory dst, const void *src, size_t bytes, std::string &error) = 0;
  virtual bool download(void *dst, DeviceMemory src, size_t bytes, std::string &error) = 0;
  /// Launch call `c` of the loaded program with its buffers; with `seconds`, wait and time it.
  virtual bool launch(int c, const tgc_call_info &call, const DeviceMemory *args, double *seconds,
                      std::string &error) = 0;
  /// Wait for everything launched.
  virtual bool finish(std::string &error) = 0;
  /// A one-line description ("opencl: pthread-znver4 (Portable Computing Language)").
  virtual std::string describe() const = 0;
};

/// The device for a program's device kind, or nullptr with `error` set (no such runtime or no device).
std::unique_ptr<Device> openDevice(const std::string &kind, std::string &error);

std::unique_ptr<Device> openOpenCL(std::string &error);
std::unique_ptr<Device> openHip(std::string &error);
std::unique_ptr<Device> openCuda(std::string &error);

} // namespace tgc::rt
