#!/bin/sh
# Overhead of `locus profile` at default settings: interleaved plain and
# profiled runs, medians of wall time (includes the profiler's start-up and
# analysis) and of the time the kernel measures itself (stream: seconds of
# init + triads; chase: ns per dependent load). docs/PERFORMANCE.md, prof.
#   examples/numa/overhead.sh BUILD_DIR [ROUNDS]
# Each kernel runs at its default length (stream 20 triads, chase 4 Mi loads:
# 0.2-0.9 s here, where the fixed cost weighs most) and at a length closer to
# a real run (stream 100 triads, chase 16 Mi loads). The fixed cost is
# `locus profile -- true`: perf_event_open's first event (~20 ms in the
# kernel), the topology, the report.
b=${1:-build}; rounds=${2:-7}
now() { date +%s%N; }
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
self() { grep -Eo '[0-9.]+ (s,|ns per)' | grep -Eo '^[0-9.]+'; }
: > /tmp/ovh.fix
for r in $(seq "$rounds"); do
  t0=$(now); true; t1=$(now)
  "$b/bin/locus" profile -q --no-json -- true; t2=$(now)
  echo $(( ((t2 - t1) - (t1 - t0)) / 1000000 )) >> /tmp/ovh.fix
done
echo "fixed cost (locus profile -q --no-json -- true): $(med < /tmp/ovh.fix) ms"
for run in "stream" "stream 100" "chase" "chase 16"; do
  set -- $run; k=$1; shift
  : > /tmp/ovh.w0; : > /tmp/ovh.w1; : > /tmp/ovh.s0; : > /tmp/ovh.s1
  for r in $(seq "$rounds"); do
    t0=$(now); "$b/examples/numa_$k" "$@" > /tmp/ovh.o0; t1=$(now)
    "$b/bin/locus" profile -q -o /tmp/ovh.json -- "$b/examples/numa_$k" "$@" > /tmp/ovh.o1 2>/dev/null; t2=$(now)
    echo $(( (t1 - t0) / 1000000 )) >> /tmp/ovh.w0; echo $(( (t2 - t1) / 1000000 )) >> /tmp/ovh.w1
    self < /tmp/ovh.o0 >> /tmp/ovh.s0; self < /tmp/ovh.o1 >> /tmp/ovh.s1
  done
  w0=$(med < /tmp/ovh.w0); w1=$(med < /tmp/ovh.w1); s0=$(med < /tmp/ovh.s0); s1=$(med < /tmp/ovh.s1)
  ft=$(grep -o '"first_touches": [0-9]*' /tmp/ovh.json | grep -o '[0-9]*$')
  ac=$(grep -o '"access_samples": [0-9]*' /tmp/ovh.json | grep -o '[0-9]*$')
  echo "$run: wall plain ${w0} ms, profiled ${w1} ms ($(awk "BEGIN{printf \"%+.1f\", ($w1-$w0)*100/$w0}") %);" \
       "self-timed plain $s0, profiled $s1 ($(awk "BEGIN{printf \"%+.1f\", ($s1-$s0)*100/$s0}") %);" \
       "first-touch samples $ft, access samples $ac"
done
