#!/bin/sh
# locus run of a job whose rank dies during rma init: the exit status is the
# first failure's and no heap object of the job stays in /dev/shm. Only this
# job's names count (locus-<uid>-run<pid of locus run>-...): tests running
# beside this one have heaps of their own.
locus="$1"; prog="$2"
"$locus" run -n 2 --grace 2 -- "$prog" &
pid=$!
wait $pid
rc=$?
[ $rc -eq 142 ] || { echo "FAIL: exit status $rc, expected 142 (rank 0 killed by SIGALRM)"; exit 1; }
left=$(ls /dev/shm | grep "^locus-$(id -u)-run$pid-" || true)
[ -z "$left" ] || { echo "FAIL: left in /dev/shm: $left"; exit 1; }
echo ok
