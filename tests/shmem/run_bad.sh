#!/bin/sh
# Bad input: tests/shmem/progs/badinput.c makes one bad call on the last PE
# (argv[1] says which) while the others wait in a barrier. Expected: status
# EXPECT, stderr matching REGEX (the call, the PE, the address), no hang
# (the launcher tears every PE down) and no shared-memory name left behind.
#   run_bad.sh LOCUS_CLI BADINPUT NP CASE EXPECT REGEX
set -u
cli=$1 prog=$2 np=$3 case=$4 expect=$5 regex=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the shell records its pid, then becomes `locus run` (same pid)
timeout 60 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/pid" "$cli" run -n "$np" -- "$prog" "$case" >"$tmp/out" 2>"$tmp/err"
rc=$?
pid=$(cat "$tmp/pid")
cat "$tmp/out" "$tmp/err"
fail=0
[ "$rc" = 124 ] && { echo "FAIL: hung (killed after 60 s)"; exit 1; }
[ "$rc" != "$expect" ] && { echo "FAIL: status $rc, expected $expect"; fail=1; }
grep -Eq "$regex" "$tmp/out" "$tmp/err" || { echo "FAIL: no line matches: $regex"; fail=1; }
# the job's shared-memory names carry its id, "run<pid of locus run>-..."
# ($! is that pid); other jobs on the machine do not count
sleep 0.2
left=$(ls /dev/shm 2>/dev/null | grep -- "-run$pid-" || true)
[ -n "$left" ] && { echo "FAIL: left in /dev/shm: $left"; fail=1; }
[ $fail = 0 ] && echo PASS
exit $fail
