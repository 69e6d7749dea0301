#!/bin/sh
# `locus profile` inside a job (`locus run -n 2 -- locus profile -o p.%r.json
# -- PROG`, the form the docs give for MPI and OpenSHMEM jobs), then --merge:
# the job report names the program's symmetric objects on both ranks and no
# variable whose site is one of locus's own sources (the runtime's scratch,
# e.g. a helper child's stack, is not the program's memory).
#   prof_job.sh LOCUS_CLI PROG SRC_DIR
set -u
cli=$1 prog=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
timeout 120 "$cli" run -n 2 -- "$cli" profile -q -o p.%r.json -- "$prog" >out 2>&1
rc=$?
cat out
[ "$rc" = 0 ] || { echo "FAIL: job status $rc"; exit 1; }
"$cli" profile --merge p.0.json p.1.json >merged 2>&1 || { cat merged; echo "FAIL: merge"; exit 1; }
cat merged
fail=0
for v in "grid +heap +prof_symmetric.c:[0-9]+ +2 " "halo +heap +prof_symmetric.c:[0-9]+ +2 "; do
    grep -Eq "^ +$v" merged || { echo "FAIL: no row: $v"; fail=1; }
done
# every C source of the library, by basename: none may be a variable's site
for f in $(cd "$src" && ls */*.c */*/*.c 2>/dev/null); do
    b=$(basename "$f")
    [ "$b" = prof_symmetric.c ] && continue
    if grep -Eq " $b:[0-9]+ " merged; then
        echo "FAIL: a variable of locus's own ($b) listed as the program's"
        fail=1
    fi
done
[ $fail = 0 ] && echo PASS
exit $fail
