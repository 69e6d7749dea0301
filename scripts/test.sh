#!/usr/bin/env bash
# The whole test suite: install, build, C unit + multi-process + multi-NUMA VM
# tests (ctest), then the Python tests (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
rc=0
(cd build && ctest --output-on-failure --timeout 900 -j 2) || rc=$?
if compgen -G "tests/py/test_*.py" >/dev/null; then
  .venv/bin/python -m pytest -q tests/py || rc=$?
else
  echo "pytest: no Python tests yet"
fi
exit $rc
