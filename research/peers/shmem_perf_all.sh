#!/bin/sh
# Every OpenSHMEM figure of docs/PERFORMANCE.md in one run, locus beside Open
# MPI 4.1.4 (Debian's), same machine, same sources:
#   1. micro-benchmarks at 2 and 4 PEs (shmem_vs_ompi.sh -> bench/shmem/shmem_bench.c)
#   2. time to a usable heap (bench/shmem/heap_time.c), launch to exit, at
#      1 GiB and 4 GiB per PE (2 PEs) and 50 % of RAM in total (2 PEs), with
#      init+finalize alone beside it, and the memory-zeroing limit of the same
#      total size (bin/heap_bench: memset of populated memory by every CPU, and
#      the kernel's zeroing through MADV_POPULATE_WRITE)
#   3. the distributed sort (examples/shmem/isort.c) at 2 and 4 PEs
# Raw output: research/peers/results/shmem-all-<date>.txt; plots with
# research/peers/shmem_plot.py.
#   research/peers/shmem_perf_all.sh BUILD_DIR
set -u
build=$(cd "${1:?build dir}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$src/research/peers/results/shmem-all-$(date +%Y%m%d-%H%M%S).txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"
export OMPI_MCA_opal_common_ucx_opal_mem_hooks=0
for p in bench/shmem/heap_time.c examples/shmem/isort.c; do
    n=$(basename "$p" .c)
    "$build/bin/locus-oshcc" -O2 -o "$tmp/locus_$n" "$src/$p"
    oshcc -O2 -o "$tmp/ompi_$n" "$src/$p"
done
wall() { /usr/bin/time -f "WALL %e" "$@" 2>&1; }
# pool_up SIZE_PER_PE: a hugetlbfs mount and 2 MiB pages for 2 PEs (root only)
pool=/proc/sys/vm/nr_hugepages
pool_up() {
    [ "$(id -u)" = 0 ] || return 1
    mb=$(( $(echo "$1" | sed 's/G$/*1024/;s/M$//') )); pages=$(( mb + 16 )) # 2 PEs of 2 MiB pages
    mkdir -p /dev/hugepages
    mount | grep -q ' /dev/hugepages ' || mount -t hugetlbfs -o pagesize=2M none /dev/hugepages || return 1
    echo "$pages" >"$pool"
    [ "$(cat "$pool")" -ge "$pages" ] || { pool_down; return 1; }
}
pool_down() { echo 0 >"$pool"; umount /dev/hugepages 2>/dev/null; true; }
trap 'pool_down; rm -rf "$tmp"' EXIT
{
    echo "# $(date -Is) host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cpus, $(uname -r), $(free -g | awk '/Mem:/{print $2}') GiB"
    echo "# git $(git -C "$src" rev-parse --short HEAD)"
    if [ -z "${SKIP_MICRO:-}" ]; then # SKIP_MICRO=1: only the heap times and the sort
        OUT=$tmp/micro.txt sh "$src/research/peers/shmem_vs_ompi.sh" "$build" --reps 5 --time 0.2 | grep -v "^raw:"
        cat "$tmp/micro.txt" | grep RESULT
    fi
    ram=$(awk '/MemTotal/{print $2 * 1024}' /proc/meminfo)
    half_per_pe=$((ram / 2 / 2 / 1048576))M
    for size in 1G 4G $half_per_pe; do
        for mode in full --init-only; do
            arg=""; [ "$mode" = --init-only ] && arg=--init-only
            for i in 1 2 3; do
                echo "HEAP impl=locus size=$size mode=$mode run=$i $(SHMEM_SYMMETRIC_SIZE=$size wall "$build/bin/locus" run -n 2 --bind core -- "$tmp/locus_heap_time" $arg | tr '\n' ' ')"
                echo "HEAP impl=openmpi size=$size mode=$mode run=$i $(SMA_SYMMETRIC_SIZE=$size wall oshrun $root --oversubscribe -np 2 "$tmp/ompi_heap_time" $arg | tr '\n' ' ')"
            done
        done
        # locus with a 2 MiB hugetlb pool provisioned (what an HPC node usually
        # has; locus's auto takes it, Open MPI's heap does not); one untimed
        # run first: the host backs fresh pool pages slowly the first time
        if pool_up "$size"; then
            SHMEM_SYMMETRIC_SIZE=$size "$build/bin/locus" run -n 2 --bind core -- "$tmp/locus_heap_time" >/dev/null 2>&1
            for i in 1 2 3; do
                echo "HEAP impl=locus-huge2m size=$size mode=full run=$i $(SHMEM_SYMMETRIC_SIZE=$size wall "$build/bin/locus" run -n 2 --bind core -- "$tmp/locus_heap_time" | tr '\n' ' ')"
            done
            pool_down
        fi
        total=$(( $(echo "$size" | sed 's/G$/*1024/;s/M$//') * 2 ))M
        echo "ZEROLIMIT size_total=$total $("$build/bin/heap_bench" --sizes "$total" --kinds 4k --runs 3 2>&1 | grep -v '^#' | tail -1)"
    done
    for n in 2 4; do
        for i in 1 2 3; do
            bind=none; [ "$n" -le "$(nproc)" ] && bind=core # as oshrun places them
            "$build/bin/locus" run -n $n --bind $bind -- "$tmp/locus_isort" 4000000 7
            oshrun $root --oversubscribe -np $n "$tmp/ompi_isort" 4000000 7
        done
    done
} | tee "$out"
echo "raw: $out"
