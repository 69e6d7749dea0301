#!/usr/bin/env bash
# The plots of docs/PERFORMANCE.md: runs the benchmarks on this machine with
# --json (records in docs/img/data/, docs/bench-schema.json) and draws them
# with `locus plot` into docs/img/. About 3 minutes on the 2-vCPU machine.
#
#   scripts/plots.sh            measure here, then plot
#   scripts/plots.sh --replot   plot the recorded data again (no measuring)
#
# Needs a build (scripts/build.sh) and the .venv (scripts/deps.sh). Run it on
# a quiet machine: every figure names the CPU and kernel it was measured on.
set -euo pipefail
cd "$(dirname "$0")/.."
locus=build/bin/locus
data=docs/img/data
img=docs/img
[ -x "$locus" ] || { echo "plots.sh: $locus not found: run scripts/build.sh first" >&2; exit 1; }
mkdir -p "$data"

measure() { # name, locus args... (the record to $data/name.json)
  local name=$1; shift
  echo "plots.sh: locus $* --json" >&2
  "$locus" "$@" --json >"$data/$name.json.tmp"
  mv "$data/$name.json.tmp" "$data/$name.json"
}

if [ "${1:-}" != "--replot" ]; then
  # copy: every kernel and the selector against glibc, 64 B .. 256 MiB
  measure copy bench copy --quick --no-pollution
  # heap: fault-in against a serial touch and the memset limit, at three sizes
  for s in 256M 1G 4G; do measure "heap-$s" heap --size "$s" --compare; done
  # stream: the triad per placement policy
  measure stream stream --size 1G
  # regcache: locus against UCX's ucs_rcache, every workload, 1 and 2 threads
  measure regcache bench regcache --reps 101
  # TODO(shm): pingpong / bw / msgrate write the record now (measure them with
  # `run -n 2 --bind core -- "$locus" bench pingpong`); their plots are not drawn yet.
fi

plot() { # out, records and options
  local out=$1; shift
  "$locus" plot "$@" -o "$out" --dpi 80
}
plot "$img/copy.png" "$data/copy.json" --metric bandwidth
plot "$img/heap.png" "$data"/heap-*.json
plot "$img/stream.png" "$data/stream.json"
plot "$img/regcache.png" "$data/regcache.json" --metric "time per op" \
  --metric "throughput, hits over 10^4 regions"
ls -l "$img"/*.png
