#!/bin/sh
# Run inside the multi-NUMA guest (busybox sh/awk): checks `locus topo --json`
# against the guest kernel's own sysfs.
#   vm_topo_check.sh NODES MEMONLY DIST01
# NODES   expected number of NUMA nodes
# MEMONLY expected number of memory-only nodes (no cpus at all)
# DIST01  expected distance node0 -> node1 ("-" to skip; needs NODES >= 2)
# Prints the table and JSON, then "topo-check: ok" or the first failure (exit 1).
want_nodes=$1
want_memonly=$2
want_d01=$3
LOCUS=${LOCUS:-locus}

fail() { echo "topo-check: FAIL: $*"; exit 1; }

$LOCUS topo || fail "locus topo exited $?"
json=$($LOCUS topo --json) || fail "locus topo --json exited $?"
echo "$json"

nodes=$(echo "$json" | grep -c '"os_index":')
[ "$nodes" = "$want_nodes" ] || fail "nodes: got $nodes, expected $want_nodes"
memonly=$(echo "$json" | grep -c '"memory_only": true, "cpus": \[\]')
[ "$memonly" = "$want_memonly" ] || fail "memory-only nodes: got $memonly, expected $want_memonly"

# Each node against the guest kernel: its os index is online and its cpu list
# matches nodeN/cpulist (empty for the memory-only node).
echo "$json" | grep '"os_index":' | while read -r line; do
    os=$(echo "$line" | sed 's/.*"os_index": \([0-9]*\).*/\1/')
    cpus=$(echo "$line" | sed 's/.*"cpus": \[\([0-9, ]*\)\].*/\1/' | tr -d ' ')
    sysf=/sys/devices/system/node/node$os/cpulist
    [ -r "$sysf" ] || fail "node $os: no $sysf"
    kernel=$(awk -F, '{ out = ""
        for (i = 1; i <= NF; i++) {
            n = split($i, r, "-"); lo = r[1]; hi = (n == 2) ? r[2] : r[1]
            for (c = lo; c <= hi; c++) out = out (out == "" ? "" : ",") c
        }
        print out }' "$sysf")
    [ "$cpus" = "$kernel" ] || fail "node $os: cpus '$cpus', kernel says '$kernel'"
    mem=$(echo "$line" | sed 's/.*"memory_bytes": \([0-9]*\).*/\1/')
    [ "$mem" -gt 0 ] || fail "node $os: memory_bytes $mem"
done || exit 1

# Distance matrix: diagonal 10, symmetric, off-diagonal > 10, d(0,1) as asked.
echo "$json" | awk -v n="$want_nodes" -v d01="$want_d01" '
    /"distances": \[/ { inside = 1; next }
    inside && /^ *\]/ { inside = 0 }
    inside { gsub(/[^0-9-]+/, " "); row++; k = split($0, v, " ")
             if (k != n) { print "topo-check: FAIL: distance row " row " has " k " entries"; bad = 1 }
             for (j = 1; j <= k; j++) d[row, j] = v[j] }
    END {
        if (row != n) { print "topo-check: FAIL: " row " distance rows, expected " n; exit 1 }
        for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) {
            if (i == j && d[i, j] != 10) { print "topo-check: FAIL: d(" i-1 "," j-1 ") = " d[i, j]; exit 1 }
            if (i != j && d[i, j] <= 10) { print "topo-check: FAIL: d(" i-1 "," j-1 ") = " d[i, j]; exit 1 }
            if (d[i, j] != d[j, i]) { print "topo-check: FAIL: asymmetric at " i-1 "," j-1; exit 1 }
        }
        if (d01 != "-" && d[1, 2] != d01) { print "topo-check: FAIL: d(0,1) = " d[1, 2] ", expected " d01; exit 1 }
        exit bad }' || exit 1

# Page info is the guest's.
thp=$(sed 's/.*\[\([a-z]*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unavailable)
echo "$json" | grep -q "\"thp_mode\": \"$thp\"" || fail "thp_mode: expected $thp"
# Every L3 domain has a plausible size (a VM's odd cache reports are replaced).
echo "$json" | grep '"size_bytes":' | sed 's/.*"size_bytes": \([0-9]*\).*/\1/' | while read -r s; do
    [ "$s" -ge 262144 ] && [ "$s" -le 4294967296 ] || fail "L3 size $s"
done || exit 1
echo "topo-check: ok"
