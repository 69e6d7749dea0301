#!/usr/bin/env bash
# Configure and build locus into ./build (Release with debug info).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${LOCUS_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$(nproc)"
