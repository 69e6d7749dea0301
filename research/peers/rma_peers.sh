#!/bin/sh
# locus rma on one host against Open MPI's OpenSHMEM (oshrun, UCX spml), interleaved:
# R rounds of { locus run -n 2 --bind core -- locus bench rma ; oshrun -n 2 oshmem_rma }
# with the same loops and sizes (research/peers/oshmem_rma.c), then per measurement the
# median over rounds of each and the ratio locus / OpenSHMEM, with the targets:
# put_lat 8 B <= 0.8x, put_bw 1 MiB >= 1.2x (heap buffers).
#
#   research/peers/rma_peers.sh BUILD_DIR [--rounds R] [--sizes LIST] [--time S] [--log FILE]
#
# Open MPI 4.1 (Debian 12) may crash in shmem_finalize after the output:
# OMPI_MCA_opal_common_ucx_opal_mem_hooks=0 avoids it; its status is ignored, its lines kept.
here=$(cd "$(dirname "$0")" && pwd)
build=$1
[ -n "$build" ] && [ -x "$build/bin/locus" ] || { echo "usage: $0 BUILD_DIR [--rounds R] [--sizes LIST] [--time S] [--log FILE]" >&2; exit 2; }
shift
rounds=5 sizes=8,64,4K,64K,1M,4M time=0.2 log=/dev/null
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    *) echo "rma_peers: unknown option $1" >&2; exit 2 ;;
    esac
done
command -v oshcc >/dev/null && command -v oshrun >/dev/null || { echo "rma_peers: oshcc/oshrun not found (openmpi-bin libopenmpi-dev): skipped" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
oshcc -O2 -o "$tmp/oshmem_rma" "$here/oshmem_rma.c" || exit 1
root=
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
export OMPI_MCA_opal_common_ucx_opal_mem_hooks=0
echo "# rma_peers: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); kernel $(uname -r); $(nproc) cpus; load $(cut -d' ' -f1-3 /proc/loadavg); rounds $rounds; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
: >"$tmp/all"
i=0
while [ $i -lt "$rounds" ]; do
    "$build/bin/locus" run -n 2 --bind core -- "$build/bin/locus" bench rma --sizes "$sizes" --time "$time" --reps 3 \
        >"$tmp/l" 2>&1
    oshrun $root --oversubscribe --bind-to core -n 2 "$tmp/oshmem_rma" --sizes "$sizes" --time "$time" --reps 3 \
        >"$tmp/o" 2>&1
    cat "$tmp/l" "$tmp/o" >>"$log" 2>/dev/null
    grep '^RESULT' "$tmp/l" "$tmp/o" -h >>"$tmp/all"
    i=$((i + 1))
done
grep -h '^# locus bench rma\|^# cpu' "$tmp/l" | head -2
awk '
    function val(line, key,   n, f, i, kv) {
        n = split(line, f, " ")
        for (i = 1; i <= n; i++) { split(f[i], kv, "="); if (kv[1] == key) return kv[2] }
        return ""
    }
    function median(list,   n, a, i, j, t) {
        n = split(list, a, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    /^RESULT/ {
        tool = val($0, "tool"); k = val($0, "test") " " val($0, "bytes")
        v = val($0, "lat_us"); unit = "lat_us"
        if (v == "") { v = val($0, "bw_MBps"); unit = "bw_MBps" }
        vals[tool, k] = vals[tool, k] " " v; units[k] = unit; keys[k] = 1
    }
    END {
        for (k in keys) {
            l = median(vals["locus_rma", k]); o = median(vals["oshmem", k])
            split(k, kk, " ")
            target = ""
            if (k == "put_lat 8") target = " target<=0.8"
            if (k == "put_bw 1048576") target = " target>=1.2"
            printf "MEDIAN test=%s bytes=%s %s locus=%s oshmem=%s ratio=%.3f%s\n", kk[1], kk[2], units[k], l, o, (o > 0 ? l / o : 0), target
        }
    }' "$tmp/all" | sort -k2,2 -k3,3V
