#!/bin/bash
# The Quadrics/ofiwg `sping` ping-pong (openshmem-org/openshmem-tutorial,
# examples/sping.c: not ours, give its path) under outside CPU load: NLOAD busy
# loops, then ROUNDS rounds of locus (2 PEs, locus run OPTS) beside Open MPI
# (oshrun, which binds 2 processes to cores), and, given OLD_LIB_DIR (a build
# of another liblocus_shmem, e.g. a worktree of an earlier commit), the same
# locus binary run against that library first. Prints per round the half
# round trips in µs (sping's mean over -n 20000) and the medians; writes
# research/peers/results/sping-load-*.txt.
#   research/peers/sping_load.sh BUILD SPING_C NLOAD ROUNDS [OLD_LIB_DIR] [-- locus run opts]
set -u
build=$(cd "${1:?build dir}" && pwd); sping=${2:?sping.c}; nload=${3:?}; rounds=${4:?}
old=${5:-}
shift $(($# < 5 ? $# : 5))
[ "${1:-}" = -- ] && shift
opts=("$@")
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$src/research/peers/results/sping-load-$(date +%Y%m%d-%H%M%S).txt
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$tmp"' EXIT
"$build/bin/locus-oshcc" -O2 -o "$tmp/sping.locus" "$sping" || exit 1
oshcc -O2 -o "$tmp/sping.ompi" "$sping" || exit 1
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
export OMPI_MCA_opal_common_ucx_opal_mem_hooks=0
for _ in $(seq "$nload"); do (while :; do :; done) & pids+=($!); done
sleep 1
one() { awk '/pinged/ {print $6}' | head -1 | grep . || echo NA; }
{
    echo "# $(date -Is) $(uname -r) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model[[:space:]]' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') cpus=$(nproc)"
    echo "# git $(git -C "$src" rev-parse --short HEAD) load=$nload busy loops, locus run -n 2 ${opts[*]:-}; old library: ${old:-none}"
    echo "# columns: ${old:+old }locus openmpi (µs, half round trip, sping -n 20000 1)"
    for _ in $(seq "$rounds"); do
        line=""
        [ -n "$old" ] && line="$(LD_LIBRARY_PATH=$old timeout 120 "$build/bin/locus" run -n 2 "${opts[@]}" -- "$tmp/sping.locus" -n 20000 1 | one) "
        line+="$(timeout 120 "$build/bin/locus" run -n 2 "${opts[@]}" -- "$tmp/sping.locus" -n 20000 1 | one) "
        line+="$(timeout 120 oshrun $root --oversubscribe -np 2 "$tmp/sping.ompi" -n 20000 1 2>/dev/null | one)"
        echo "$line"
    done
} | tee "$out"
python3 - "$out" ${old:+old} locus openmpi <<'PY' | tee -a "$out"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
for i, name in enumerate(sys.argv[2:]):
    v = [float(r[i]) for r in rows if len(r) > i and r[i] != "NA"]
    if v:
        print(f"median {name} {statistics.median(v):.2f} us (min {min(v):.2f}, max {max(v):.2f}, {len(v)} runs)")
PY

