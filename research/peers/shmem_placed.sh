#!/bin/sh
# The on-node OpenSHMEM latency targets (8 B put, p, barrier, fetch-add) and
# 1 MiB put bandwidth, locus beside Open MPI, in rounds tagged by the vCPUs'
# placement: this VM's host moves its two vCPUs between near and far physical
# cores every few seconds, which moves every on-node latency by 2-4x, so a
# single run of each implementation can compare a near one with a far one.
# Each round is one test: clping --probe, locus (2 PEs, bound) and Open MPI
# (2 PEs) in alternating order, probe again; it counts only when both probes
# agree. Prints one line per
# round and the per-placement medians of the rounds' ratios.
#   research/peers/shmem_placed.sh BUILD_DIR [ROUNDS]
set -u
build=$(cd "${1:?build dir}" && pwd)
rounds=${2:-9}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$src/research/peers/results/shmem-placed-$(date +%Y%m%d-%H%M%S).txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/clping" "$src/research/peers/clping.c"
"$build/bin/locus-oshcc" -O2 -o "$tmp/locus_bench" "$src/bench/shmem/shmem_bench.c"
oshcc -O2 -o "$tmp/ompi_bench" "$src/bench/shmem/shmem_bench.c"
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
export OMPI_MCA_opal_common_ucx_opal_mem_hooks=0
tests=${TESTS:-put_lat p_lat barrier fadd_lat put_bw}
common="--sizes 8,1M --reps 3 --time 0.05"
{
    echo "# $(date -Is) $(uname -r) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model[[:space:]]' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') cpus=$(nproc)"
    echo "# git $(git -C "$src" rev-parse --short HEAD) tests: $tests args: $common"
    n=0
    for i in $(seq "$rounds"); do
        for t in $tests; do
            # one test per probe pair (the placement holds for seconds only),
            # the order of the two implementations alternating
            n=$((n + 1))
            a=$("$tmp/clping" --probe | sed 's/ .*//')
            l() { "$build/bin/locus" run -n 2 --bind core -- "$tmp/locus_bench" --tests "$t" $common; }
            o() { oshrun $root --oversubscribe -np 2 "$tmp/ompi_bench" --tests "$t" $common; }
            if [ $((i % 2)) = 1 ]; then l; o; else o; l; fi | sed "s/^/ROUND $n /"
            b=$("$tmp/clping" --probe | sed 's/ .*//')
            echo "PLACE $n $a $b"
        done
    done
} >"$out"
python3 - "$out" <<'PY'
import re, sys, collections, statistics
vals = collections.defaultdict(dict); place = {}
for line in open(sys.argv[1]):
    m = re.match(r"ROUND (\d+) RESULT impl=(\S+) pes=\d+ test=(\S+) size=(\d+) value=(\S+)", line)
    if m:
        vals[int(m[1])][(m[2], m[3], int(m[4]))] = float(m[5])
    m = re.match(r"PLACE (\d+) placement=(\S+) placement=(\S+)", line)
    if m:
        place[int(m[1])] = m[2] if m[2] == m[3] else None
ratios = collections.defaultdict(list)
for r, v in sorted(vals.items()):
    if not place.get(r):
        print(f"round {r}: placement changed, dropped"); continue
    for (impl, test, size), x in sorted(v.items()):
        if impl == "locus" and ("openmpi", test, size) in v:
            ratios[(place[r], test, size)].append(x / v[("openmpi", test, size)])
    print(f"round {r} {place[r]}: " + " ".join(f"{t}@{s} {x:.3f}/{v.get(('openmpi', t, s), float('nan')):.3f}"
          for (i, t, s), x in sorted(v.items()) if i == "locus"))
print("placement test size rounds median(locus/openmpi) [bandwidth: > 1 is locus faster]")
for (p, t, s), rs in sorted(ratios.items()):
    print(f"{p:5s} {t:10s} {s:8d} {len(rs):3d} {statistics.median(rs):.2f}")
PY
echo "raw: $out"
