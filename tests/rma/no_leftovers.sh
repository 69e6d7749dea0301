#!/bin/sh
# locus run of a job whose rank dies during rma init: the exit status is the
# first failure's and no heap object of the job stays in /dev/shm.
locus="$1"; prog="$2"
before=$(ls /dev/shm | grep -c "^locus-$(id -u)-run" || true)
"$locus" run -n 2 --grace 2 -- "$prog"
rc=$?
[ $rc -eq 142 ] || { echo "FAIL: exit status $rc, expected 142 (rank 0 killed by SIGALRM)"; exit 1; }
after=$(ls /dev/shm | grep -c "^locus-$(id -u)-run" || true)
[ "$after" -le "$before" ] || { echo "FAIL: left in /dev/shm:"; ls /dev/shm | grep "^locus-"; exit 1; }
echo ok
