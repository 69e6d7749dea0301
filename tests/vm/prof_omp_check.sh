#!/bin/sh
# In the multi-NUMA guest: profile the OpenMP example (serial first touch,
# parallel loop; OMP_PROC_BIND/OMP_PLACES from the test's environment) and
# check that the finding names the array, the serial first-touch line and
# the parallel loop (FIRST_TOUCH / REMOTE_LOOP markers in the source), and
# that the report shows a thread on every node with its cpu.
#   prof_omp_check.sh NODES SOURCE
nodes=$1 src=$2
ft=$(grep -n FIRST_TOUCH "$src" | head -1 | cut -d: -f1)
loop=$(grep -n REMOTE_LOOP "$src" | head -1 | cut -d: -f1)
locus profile --top 5 -o /tmp/p.json -- omp_serial_init > /tmp/out.txt 2>&1
rc=$?
cat /tmp/out.txt
fail() { echo "prof_omp_check: FAIL: $*"; exit 1; }
[ $rc -eq 0 ] || fail "locus profile exited $rc"
line=$(grep "^  - field:" /tmp/out.txt | head -1)
[ -n "$line" ] || fail "no finding for the array 'field'"
echo "$line" | grep -q "serial_init.c:$ft" || fail "finding does not name the serial first touch serial_init.c:$ft"
echo "$line" | grep -q "one thread" || fail "finding does not say one thread touched it first"
echo "$line" | grep -q "serial_init.c:$loop" || fail "finding does not name the parallel loop serial_init.c:$loop"
grep -q '"pattern": "one-node-init"' /tmp/p.json || fail "pattern one-node-init not in the JSON"
n=0
while [ $n -lt "$nodes" ]; do
    grep -Eq "cpu [0-9]+ → node $n([^0-9]|$)" /tmp/out.txt || fail "no thread shown on node $n (cpu → node)"
    n=$((n + 1))
done
echo "prof_omp_check: OK (field, first touch serial_init.c:$ft, parallel loop serial_init.c:$loop, threads on $nodes nodes)"
