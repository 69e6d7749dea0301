#!/bin/sh
# In the multi-NUMA guest: an MPI job of one rank per node, each profiled
# (-o prof.%r.json), the last rank started under numactl --membind=0 (its
# memory bound away from the node mpirun binds it to). The job report
# (locus profile --merge) must name that rank, the variable and the cause: a
# memory policy set from outside, not the first touch; no other rank.
#   prof_mpi_check.sh NODES SOURCE
nodes=$1 src=$2
ft=$(grep -n FIRST_TOUCH "$src" | head -1 | cut -d: -f1)
bad=$((nodes - 1))
fail() { echo "prof_mpi_check: FAIL: $*"; exit 1; }
cd /tmp || exit 1
orterun -np $bad locus profile -o /tmp/prof.%r.json -- mpi_field : \
        -np 1 numactl --membind=0 locus profile -o /tmp/prof.%r.json -- mpi_field > /tmp/run.txt 2>&1
rc=$?
cat /tmp/run.txt
[ $rc -eq 0 ] || fail "mpirun exited $rc"
r=0
while [ $r -lt "$nodes" ]; do
    [ -s /tmp/prof.$r.json ] || fail "no profile of rank $r (/tmp/prof.$r.json)"
    r=$((r + 1))
done
locus profile --merge -o /tmp/job.json /tmp/prof.*.json > /tmp/job.txt 2>&1 || { cat /tmp/job.txt; fail "merge failed"; }
cat /tmp/job.txt
line=$(grep "^  - rank $bad (.*field:" /tmp/job.txt | head -1)
[ -n "$line" ] || fail "the job report does not name rank $bad and 'field'"
echo "$line" | grep -q "set from outside" || fail "the cause (a memory policy set from outside) is not named"
echo "$line" | grep -q "bind to node 0" || fail "the binding (bind to node 0) is not named"
echo "$line" | grep -q "not by the first touch" || fail "the finding does not say it is not the first touch"
echo "$line" | grep -q "field.c:$ft" || fail "the first-touch line field.c:$ft is not named"
grep "^  - rank [0-9]* (.*field:" /tmp/job.txt | grep -v "^  - rank $bad " | grep -q . && fail "another rank is named"
grep -q "memory away from its threads" /tmp/job.txt || fail "no per-rank row marks the rank's memory as away"
grep -q '"remote_rank": true' /tmp/job.json || fail "remote_rank not set in the job JSON"
echo "prof_mpi_check: OK (rank $bad, field, bind to node 0 set from outside, first touch field.c:$ft)"
