#!/usr/bin/env bash
# Sets up and builds tgc (scripts/setup.sh), then runs every test suite; the last line is 'N passed, N failed'.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec python3 scripts/run_tests.py build
