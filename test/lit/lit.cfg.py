# lit configuration for tgc's regression tests: one .uop file per pass or feature, checked with FileCheck.
import os
import platform

import lit.formats

config.name = "tgc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".uop", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.tgc_tools_dir), "test", "lit")

path = os.path.pathsep.join([config.tgc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["PATH"] = path + os.path.pathsep + os.environ.get("PATH", "")
config.substitutions.append(("%tgc_src", config.tgc_source_dir))
config.substitutions.append(("%tgc_build", config.tgc_build_dir))
config.substitutions.append(("%python", "python3"))
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")
# ONNX test models are written as text (onnx.proto's text format) and encoded by protoc (protobuf-compiler)
import shutil
if shutil.which("protoc") and os.path.exists("/usr/include/onnx/onnx.proto"):
    config.available_features.add("protoc")
    encode = "protoc -I/usr/include onnx/onnx.proto --encode=onnx."
    config.substitutions.append(("%onnx-model", encode + "ModelProto"))
    config.substitutions.append(("%onnx-tensor", encode + "TensorProto"))
# Python with onnx, onnxruntime, numpy and tinygrad (test/onnx/setup_venv.sh): lit --param pyenv=build/pyenv/bin/python
pyenv = lit_config.params.get("pyenv")
if pyenv and os.path.exists(pyenv):
    import subprocess
    if subprocess.run([pyenv, "-c", "import onnx, onnxruntime, numpy"], capture_output=True).returncode == 0:
        config.available_features.add("onnx-py")
        config.substitutions.append(("%pyenv", pyenv))
    if subprocess.run([pyenv, "-c", "import tinygrad"], capture_output=True).returncode == 0:
        config.available_features.add("tinygrad")
# The viewer's tests open pages in headless Chromium (Debian's chromium); without it they are reported unsupported
if shutil.which("chromium"):
    config.available_features.add("chromium")
if config.tgc_has_fuzzer:
    config.available_features.add("fuzzer")
# A build of tgc with UndefinedBehaviorSanitizer (scripts/test.sh makes one in build-ubsan/): lit --param ubsan_bin=DIR
ubsan_bin = lit_config.params.get("ubsan_bin")
if ubsan_bin and os.path.exists(os.path.join(ubsan_bin, "tgc")):
    config.available_features.add("ubsan")
    config.substitutions.append(("%tgc_ubsan_bin", ubsan_bin))


def opencl_device_available():
    """An OpenCL platform with a device (PoCL in CI): tests of the opencl target run on it."""
    import ctypes
    try:
        cl = ctypes.CDLL("libOpenCL.so.1")
    except OSError:
        return False
    count = ctypes.c_uint(0)
    if cl.clGetPlatformIDs(0, None, ctypes.byref(count)) != 0 or count.value == 0:
        return False
    platforms = (ctypes.c_void_p * count.value)()
    cl.clGetPlatformIDs(count.value, platforms, None)
    for p in platforms:
        n = ctypes.c_uint(0)
        if cl.clGetDeviceIDs(ctypes.c_void_p(p), ctypes.c_ulonglong(0xFFFFFFFF), 0, None, ctypes.byref(n)) == 0 and n.value:
            return True
    return False


if opencl_device_available():
    config.available_features.add("opencl")
if os.path.exists(os.path.join(config.llvm_tools_dir, "ld.lld")):
    config.available_features.add("lld")  # the amd target links code objects with it


def cuda_device_available():
    """The CUDA driver with at least one GPU: tests of the cuda target run on it."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


if config.tgc_ptxas and os.path.exists(config.tgc_ptxas):
    config.available_features.add("ptxas")  # the cuda target assembles PTX with it
if cuda_device_available():
    config.available_features.add("cuda-driver")
