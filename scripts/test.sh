#!/usr/bin/env bash
# The whole test suite: install, build, C unit + multi-process + multi-NUMA VM
# tests (ctest), then the Python tests (pytest): the product's (tests/py) and the
# research scripts' (research/tests: peer-comparison parsers and tools).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
rc=0
(cd build && ctest --output-on-failure --timeout 900 -j 2) || rc=$?
pydirs=()
for d in tests/py research/tests; do
  compgen -G "$d/test_*.py" >/dev/null && pydirs+=("$d")
done
if [ ${#pydirs[@]} -gt 0 ]; then
  .venv/bin/python -m pytest -q "${pydirs[@]}" || rc=$?
else
  echo "pytest: no Python tests yet"
fi
exit $rc
