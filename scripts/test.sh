#!/usr/bin/env bash
# Sets up and builds tgc and everything its tests use (scripts/setup.sh --tests) and a UBSan build of it, then runs
# every test suite; the last line is 'N passed, N failed, N skipped'.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
# tgc and its runtime again with UndefinedBehaviorSanitizer, for test/lit/fuzz/ubsan.test
if [ ! -f build-ubsan/build.ninja ]; then
  cmake -S . -B build-ubsan -G Ninja -DCMAKE_BUILD_TYPE=Release -DTGC_SANITIZE=undefined -DTGC_ENABLE_FUZZER=OFF \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 >/dev/null
fi
cmake --build build-ubsan --target tgc tgc-opt tgcRuntime tgc-unittests -- -j"$(nproc)"
# PyPI packages for the ONNX comparisons (the backend test suite, onnxruntime); without them those tests are skipped
test/onnx/setup_venv.sh build/pyenv || true
exec python3 scripts/run_tests.py build
