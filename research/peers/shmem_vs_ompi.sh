#!/bin/sh
# locus's OpenSHMEM against Open MPI's, one run, same machine, same source:
# bench/shmem/shmem_bench.c built with locus-oshcc and with oshcc, run at
# 2 and 4 PEs (locus run / oshrun), then a table with the ratios
# (latency: locus / Open MPI, lower is better; bandwidth: locus / Open MPI,
# higher is better). Raw RESULT lines go to $OUT (default
# research/peers/results/shmem-<date>.txt).
#   research/peers/shmem_vs_ompi.sh BUILD_DIR [bench args, e.g. --reps 5 --time 0.2]
set -eu
build=$(cd "${1:?build dir}" && pwd)
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$src/research/peers/results/shmem-$(date +%Y%m%d-%H%M%S).txt}
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/locus-oshcc" -O2 -o "$tmp/locus_bench" "$src/bench/shmem/shmem_bench.c"
oshcc -O2 -o "$tmp/ompi_bench" "$src/bench/shmem/shmem_bench.c"
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
{
    echo "# $(date -Is) $(uname -r) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') cpus=$(nproc)"
    echo "# git $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?') args: $*"
    for n in ${PES:-2 4}; do
        # the same placement as oshrun's default: one core per PE while they
        # fit (Open MPI binds to core for np <= 2), unbound when oversubscribed
        bind=none
        [ "$n" -le "$(nproc)" ] && bind=core
        "$build/bin/locus" run -n "$n" --bind $bind -- "$tmp/locus_bench" "$@"
        OMPI_MCA_opal_common_ucx_opal_mem_hooks=0 oshrun $root --oversubscribe -np "$n" "$tmp/ompi_bench" "$@"
    done
} | tee "$out"
python3 - "$out" <<'PY'
import sys, re, collections
rows = collections.OrderedDict()
for line in open(sys.argv[1]):
    m = re.match(r"RESULT impl=(\S+) pes=(\d+) test=(\S+) size=(\d+) value=(\S+) unit=(\S+)", line)
    if m:
        impl, pes, test, size, value, unit = m.groups()
        rows.setdefault((int(pes), test, int(size), unit), {})[impl] = float(value)
print("%4s %-10s %9s %12s %12s %7s" % ("pes", "test", "size", "locus", "openmpi", "ratio"))
for (pes, test, size, unit), v in rows.items():
    if "locus" in v and "openmpi" in v:
        r = v["locus"] / v["openmpi"] if v["openmpi"] else float("nan")
        print("%4d %-10s %9d %10.3f %s %10.3f %s %7.2f" % (pes, test, size, v["locus"], unit[:2], v["openmpi"], unit[:2], r))
PY
echo "raw: $out"
