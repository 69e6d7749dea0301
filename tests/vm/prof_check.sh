#!/bin/sh
# In the multi-NUMA guest: profile one example and check that the report
# names the variable, its first-touch line and the loop paying the remote
# accesses (lines found from the FIRST_TOUCH / REMOTE_LOOP markers in the
# example's source), and the expected pattern.
#   prof_check.sh EXAMPLE VARIABLE PATTERN SOURCE
ex=$1 var=$2 pattern=$3 src=$4
ft=$(grep -n FIRST_TOUCH "$src" | head -1 | cut -d: -f1)
loop=$(grep -n REMOTE_LOOP "$src" | head -1 | cut -d: -f1)
locus profile --top 5 -o /tmp/p.json -- numa_$ex > /tmp/out.txt 2>&1
rc=$?
cat /tmp/out.txt
fail() { echo "prof_check $ex: FAIL: $*"; dmesg | grep -i -A2 segfault | tail -6; exit 1; }
[ $rc -eq 0 ] || fail "locus profile exited $rc"
line=$(grep "^  - $var:" /tmp/out.txt | head -1)
[ -n "$line" ] || fail "no finding for variable '$var'"
echo "$line" | grep -q "$ex.c:$ft" || fail "finding does not name the first-touch site $ex.c:$ft"
echo "$line" | grep -q "$ex.c:$loop" || fail "finding does not name the remote loop $ex.c:$loop"
grep -q "\"pattern\": \"$pattern\"" /tmp/p.json || fail "pattern $pattern not in the JSON"
echo "prof_check $ex: OK ($var, first touch $ex.c:$ft, remote loop $ex.c:$loop, $pattern)"
