#!/bin/sh
# A start_pes program whose last PE exits with status 7 while PE 0 waits for
# it (exit_start_pes.c with an argument): the spec's implicit finalize is
# collective, so the job cannot end (as with Open MPI), but the exiting PE
# says why within EXIT_NOTICE_S (10 s) + its check interval, and once the
# job is ended from outside nothing of it is left in /dev/shm.
#   exit_wait.sh LOCUS_CLI EXIT_START_PES
set -u
cli=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 25 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/pid" "$cli" run -n 2 -- "$prog" error-exit >"$tmp/out" 2>"$tmp/err"
rc=$?
pid=$(cat "$tmp/pid")
cat "$tmp/out" "$tmp/err"
fail=0
[ "$rc" = 124 ] || { echo "FAIL: status $rc, expected 124 (ended by timeout: the job cannot end by itself)"; fail=1; }
grep -q "PE 1 left main with status 7 and has waited 10 s in start_pes's implicit shmem_finalize (collective) for PE 0" \
    "$tmp/err" || { echo "FAIL: no notice from PE 1"; fail=1; }
sleep 0.5
left=$(ls /dev/shm 2>/dev/null | grep -- "-run$pid-" || true)
[ -n "$left" ] && { echo "FAIL: left in /dev/shm: $left"; fail=1; }
[ $fail = 0 ] && echo PASS
exit $fail
