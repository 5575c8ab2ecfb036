#!/usr/bin/env bash
# Installs what tgc needs on Debian 12 (only what is missing), then configures and builds tgc and its runtime into
# build/. With --tests: also what the test suite needs (Chromium, python3-venv) and every target (tgc-opt, the unit
# tests, the fuzzers). Safe to run again: installed packages are skipped and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build ccache python3 git
  clang-19 llvm-19-dev llvm-19-tools libclang-rt-19-dev
  libcli11-dev nlohmann-json3-dev libspdlog-dev catch2
  lld-19 liblld-19-dev                                # executables linked in tgc's process; amd target's code objects
  opencl-c-headers ocl-icd-opencl-dev pocl-opencl-icd # opencl target: headers, ICD loader, PoCL runs it on the CPU
  libonnx-dev libprotobuf-dev protobuf-compiler       # ONNX import: the protobuf classes; protoc encodes test models
  libgraphviz-dev                                     # the viewer (--viz): graph layout with libgvc
  libmimalloc-dev                                     # tgc's allocator: its passes run 20-30% faster than with glibc's
)
tests=0
[ "${1:-}" = --tests ] && tests=1
if ((tests)); then
  packages+=(
    chromium     # the viewer tests open pages in headless Chromium
    python3-venv # the ONNX comparison tests' PyPI packages (test/onnx)
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 >/dev/null
fi
if ((tests)); then
  cmake --build build -- -j"$(nproc)"
else
  cmake --build build --target tgc -- -j"$(nproc)"
fi
