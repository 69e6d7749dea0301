#!/usr/bin/env bash
# The main demo: install, build, show the topology, then the heap startup
# comparison (serial touch vs locus parallel fault-in vs the memset limit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
L=build/bin/locus
echo; echo "== locus topo"; $L topo
echo; echo "== locus heap --size 2G --policy interleave --pages auto --compare"
$L heap --size 2G --policy interleave --pages auto --compare
