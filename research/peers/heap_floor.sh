#!/bin/sh
# Time to a usable symmetric heap against its floors, one run (docs/PERFORMANCE.md):
# per size (per PE, 2 PEs), launch to exit, medians of ROUNDS, each timed run right
# after WARM untimed ones of the same kind (warm memory: this VM hands freed memory back
# to its host, and cold huge pages fault at ~0.5 GB/s; after an Open MPI run, locus's
# shared THP heap needed two runs to be warm again: 1.40, 0.22, 0.07 s at 1 GiB/PE):
#   locus    bench/shmem/heap_time.c (init, shmem_malloc, memset every byte, barrier)
#   openmpi  the same source built with Open MPI's oshcc, under oshrun
#   plain    heap_time --plain: no OpenSHMEM, private anonymous THP + the same memset,
#            2 processes side by side (the floor any program pays: the kernel zeroes
#            each page at its first touch, then memset writes it)
#   zero     the memory-zeroing limit: the heap's parallel THP fault-in of the total
#            (heap_bench --kinds thp, column "locus"), no write after it; measured at the
#            start (3 runs) and again right after every timed locus run, which gives each
#            round its own locus/zero (locus/zero_per_round: their median; the limit moved
#            0.19-0.37 s for the same 8 GiB between runs minutes apart on 2026-11-28)
# WRITE=pieces in the environment: every program writes its heap in 2 MiB memsets
# (heap_time --pieces: the ordinary stores of an initialisation loop), not one memset.
#   research/peers/heap_floor.sh BUILD_DIR [SIZES (default "1G 4G")] [ROUNDS (default 3)] [WARM (default 2)]
set -u
wopt=""
[ "${WRITE:-memset}" = pieces ] && wopt="--pieces"
build=$(cd "${1:?build dir}" && pwd)
sizes=${2:-1G 4G}
rounds=${3:-3}
warm=${4:-2}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
export OMPI_MCA_opal_common_ucx_opal_mem_hooks=0
"$build/bin/locus-oshcc" -O2 -o "$tmp/locus" "$src/bench/shmem/heap_time.c"
oshcc -O2 -o "$tmp/ompi" "$src/bench/shmem/heap_time.c" 2>/dev/null || echo "# no oshcc: no Open MPI rows"
# launch to exit in ms resolution (/usr/bin/time's %e has 10 ms: 15 % of the 1 GiB limit)
wall() {
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}
run() {
    case $1 in
    plain) SHMEM_SYMMETRIC_SIZE=$2 wall "$build/bin/locus" run -n 2 --bind core -- "$tmp/locus" $wopt --plain ;;
    locus) SHMEM_SYMMETRIC_SIZE=$2 wall "$build/bin/locus" run -n 2 --bind core -- "$tmp/locus" $wopt ;;
    openmpi) SMA_SYMMETRIC_SIZE=$2 wall oshrun $root --oversubscribe -np 2 "$tmp/ompi" $wopt ;;
    esac
}
# the zeroing limit: the heap's parallel THP fault-in of both PEs' memory, GB/s
limit_gbps() { "$build/bin/heap_bench" --sizes "$(($1 * 2))M" --kinds thp --runs "$2" 2>&1 | awk '!/^#/ && $2 ~ /thp/ { print $5 }' | tail -1; }
zero_s() { awk -v m="$1" -v g="$2" 'BEGIN { printf "%.3f", 2 * (m - 64) * 1048576 / (g * 1e9) }'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "# $(date -Is) host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cpus, $(uname -r); git $(git -C "$src" rev-parse --short HEAD); write=${WRITE:-memset}"
for size in $sizes; do
    mib=$(( $(echo "$size" | sed 's/G$/*1024/;s/M$//') ))
    gbps=$(limit_gbps "$mib" 3)
    zero=$(zero_s "$mib" "$gbps")
    rr=""
    kinds="plain locus"
    [ -x "$tmp/ompi" ] && kinds="$kinds openmpi"
    for k in $kinds; do eval "t_$k="; done
    for r in $(seq "$rounds"); do
        for k in $kinds; do
            for w in $(seq "$warm"); do run "$k" "$size" >/dev/null; done
            t=$(run "$k" "$size")
            eval "t_$k=\"\$t_$k $t\""
            echo "RUN size=$size kind=$k round=$r wall=$t"
            if [ "$k" = locus ]; then # the limit again right after, for this round's own ratio
                zr=$(zero_s "$mib" "$(limit_gbps "$mib" 3)") # median of 3: a single run may meet memory the host reclaimed
                rr="$rr $(awk -v a="$t" -v b="$zr" 'BEGIN { printf "%.3f", a / b }')"
                echo "RUN size=$size kind=zero round=$r wall=$zr"
            fi
        done
    done
    mp=$(echo $t_plain | median) ml=$(echo $t_locus | median)
    mo=-; [ -x "$tmp/ompi" ] && mo=$(echo $t_openmpi | median)
    echo "RESULT size=$size/PE zero_limit=${zero}s (${gbps} GB/s) plain=${mp}s locus=${ml}s openmpi=${mo}s" \
        "locus/zero=$(awk -v a="$ml" -v b="$zero" 'BEGIN { printf "%.2f", a / b }')" \
        "locus/zero_per_round=$(echo $rr | median) ($rr )" \
        "plain/zero=$(awk -v a="$mp" -v b="$zero" 'BEGIN { printf "%.2f", a / b }')" \
        "locus/plain=$(awk -v a="$ml" -v b="$mp" 'BEGIN { printf "%.2f", a / b }')" \
        "locus/openmpi=$(awk -v a="$ml" -v b="$mo" 'BEGIN { if (b == "-") print "-"; else printf "%.2f", a / b }')"
done
