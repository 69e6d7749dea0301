#!/bin/sh
# `locus run` exits with exactly its children's status: a rank's own exit code,
# 128+N for a rank killed by signal N, 127 for a program that cannot be
# executed, the first failure's when several fail, 0 when all succeed.
# A crash or a usage error of `locus run` itself cannot pass for any of these.
# Usage: run_exit_status.sh path/to/locus
set -u
L=$1
fail() { echo "FAIL: $*"; exit 1; }
expect() { # expect STATUS [STDERR-PATTERN] -- run-arguments...
    want=$1 pat=
    [ "$2" = "--" ] || { pat=$2; shift; }
    shift 2
    err=$("$L" run "$@" 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = "$want" ] || fail "locus run $* exited $rc, expected $want: $err"
    [ -z "$pat" ] || printf '%s\n' "$err" | grep -q -- "$pat" || fail "locus run $*: stderr lacks '$pat': $err"
    echo "ok: locus run $* -> $rc"
}

expect 0 -- -n 2 -- true
expect 1 -- -n 2 -- false
expect 3 -- -n 2 -- sh -c 'exit 3'
expect 200 -- -n 1 -- sh -c 'exit 200'
# Only rank 1 fails: its status, not a generic 1.
expect 5 -- -n 3 -- sh -c '[ "$LOCUS_RANK" = 1 ] && exit 5; exit 0'
# Killed by a signal: 128 + the signal number, and said on stderr.
expect 143 "rank 0 killed by signal 15" -- -n 1 -- sh -c 'kill -TERM $$'
expect 137 "killed by signal 9" -- -n 2 -- sh -c 'kill -KILL $$'
# Not executable at all.
expect 127 "cannot execute" -- -n 2 -- /nonexistent/locus-no-such-program
# A usage error of locus run itself is 2, distinct from every status above.
expect 2 -- -n 0 -- true
exit 0
