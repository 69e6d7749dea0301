#!/bin/sh
# Launch to exit of bench/shmem/heap_time at 1 PE (`locus run -n 1`), two
# builds interleaved (say an old and a new library), ROUNDS rounds, medians
# printed with every value: --init-only and the whole-heap write, at 256 MiB
# and 4 GiB. The first round of each is usually cold (this VM's host backs
# freed memory again). research/LOG.md 2026-11-29 13:10.
#   sh research/peers/heap_1pe.sh OLD_BUILD NEW_BUILD [ROUNDS]
old=$1 new=$2 n=${3:-5}
t() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
med() { echo "$@" | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
lscpu | grep 'Model name'; uname -r
for size in 256M 4G; do
    for mode in --init-only write; do
        o="" w=""
        for i in $(seq "$n"); do
            for b in "$old" "$new"; do
                a=""; [ "$mode" = --init-only ] && a=--init-only
                v=$(SHMEM_SYMMETRIC_SIZE=$size t "$b/bin/locus" run -n 1 -- "$b/bin/heap_time" $a)
                if [ "$b" = "$old" ]; then o="$o $v"; else w="$w $v"; fi
            done
        done
        echo "size=$size $mode: old [$o ] median $(med $o)  new [$w ] median $(med $w)"
    done
done
