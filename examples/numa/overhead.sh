#!/bin/sh
# Wall-time overhead of `locus profile` at default settings, interleaved
# plain/profiled runs, medians (docs/PERFORMANCE.md, prof section).
#   examples/numa/overhead.sh BUILD_DIR [ROUNDS]
b=${1:-build}; rounds=${2:-5}
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for k in stream chase; do
  : > /tmp/ovh.plain; : > /tmp/ovh.prof
  for r in $(seq "$rounds"); do
    t0=$(now); "$b/examples/numa_$k" >/dev/null; t1=$(now)
    "$b/bin/locus" profile -q -o /tmp/ovh.json -- "$b/examples/numa_$k" >/dev/null 2>&1; t2=$(now)
    echo $(( (t1 - t0) / 1000000 )) >> /tmp/ovh.plain
    echo $(( (t2 - t1) / 1000000 )) >> /tmp/ovh.prof
  done
  p=$(median < /tmp/ovh.plain); q=$(median < /tmp/ovh.prof)
  ft=$(grep -o '"first_touches": [0-9]*' /tmp/ovh.json | grep -o '[0-9]*$')
  ac=$(grep -o '"access_samples": [0-9]*' /tmp/ovh.json | grep -o '[0-9]*$')
  echo "$k: plain ${p} ms, profiled ${q} ms, overhead $(awk "BEGIN{printf \"%.1f\", ($q-$p)*100/$p}") % (first touches $ft, access samples $ac; runs: plain $(tr '\n' ' ' < /tmp/ovh.plain)| profiled $(tr '\n' ' ' < /tmp/ovh.prof))"
done
