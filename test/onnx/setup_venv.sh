#!/usr/bin/env bash
# Makes DIR (default build/pyenv) a Python virtual environment with the PyPI packages the ONNX tests compare
# against: onnx (the backend test suite and its reference outputs), onnxruntime, numpy and tinygrad (the exporter
# python/tgc_tinygrad is checked against it). Pinned, so results
# are reproducible. Without network access it says so and exits 1; the core test suite does not need it.
set -uo pipefail
cd "$(dirname "$0")/../.."
dir="${1:-build/pyenv}"
packages=(onnx==1.23.2 onnxruntime==1.32.0 numpy==2.4.6 tinygrad==0.14.0)
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import onnx, onnxruntime, numpy, tinygrad" 2>/dev/null; then
  exit 0
fi
python3 -m venv "$dir" || { echo "note: cannot make a Python venv in $dir (python3-venv missing)"; exit 1; }
if ! timeout 600 "$dir/bin/pip" install -q --disable-pip-version-check "${packages[@]}"; then
  echo "note: cannot install ${packages[*]} from PyPI (no network?): the ONNX comparison tests are skipped"
  exit 1
fi
