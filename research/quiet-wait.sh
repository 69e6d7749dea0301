#!/bin/sh
# Wait (up to $1 seconds, default 120) until the machine has been ~idle for 3 s
# (other processes used < 10 % of the CPU time), then run the rest of the
# command line. Used in front of heap benchmarks on the shared VM.
max=${1:-120}; shift
busy() {
    set -- $(head -1 /proc/stat); t1=$(( $2+$3+$4+$5+$6+$7+$8+$9 )); i1=$(( $5+$6 ))
    sleep 3
    set -- $(head -1 /proc/stat); t2=$(( $2+$3+$4+$5+$6+$7+$8+$9 )); i2=$(( $5+$6 ))
    echo $(( 100 - 100 * (i2 - i1) / (t2 - t1 + 1) ))
}
start=$(date +%s)
while :; do
    b=$(busy)
    [ "$b" -lt 10 ] && break
    [ $(( $(date +%s) - start )) -ge "$max" ] && { echo "# quiet-wait: still ${b}% busy after ${max}s, running anyway"; break; }
done
echo "# quiet-wait: ${b}% busy before the run, $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
exec "$@"
