#!/usr/bin/env bash
# The whole test suite: install, build, C unit + multi-process + multi-NUMA VM
# tests (ctest), then the Python tests (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
rc=0
(cd build && ctest --output-on-failure --timeout 900 -j 2) || rc=$?
.venv/bin/python -m pytest -q tests/py || { r=$?; [ $r -eq 5 ] || rc=$r; }
exit $rc
