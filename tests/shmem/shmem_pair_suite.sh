#!/bin/sh
# shmem_pair_suite.sh PLACE PROG...: run each test program as a job across
# the two guests, placed by PLACE as shmem_pair.sh takes it (one port per
# program so that consecutive jobs never meet each other's boot hub). Guest A checks each
# program's output (every section "ok", "done" last) and says PASS/FAIL per
# program; the status is nonzero if any failed.
place=$1
shift
case $place in
*/*) npes=$(echo "$place" | tr ,/ '  ' | wc -w) ;;
*) npes=$((2 * place)) ;;
esac
port=17200
fail=0
for prog in "$@"; do
    port=$((port + 1))
    out=$(SHMEM_PAIR_PORT=$port sh /bin/shmem_pair.sh "$place" "$prog" 2>&1)
    rc=$?
    if [ "$LOCUS_VM_INDEX" = 0 ]; then
        echo "$out" | grep -v ': ok$' | sed "s/^/  $prog: /"
        if [ $rc = 0 ] && ! echo "$out" | grep -q ': FAIL$' && [ "$(echo "$out" | tail -n 1)" = done ]; then
            echo "PASS $prog ($npes PEs, $(echo "$out" | grep -c ': ok$') sections)"
        else
            echo "FAIL $prog (status $rc)"
            fail=1
        fi
    elif [ $rc != 0 ]; then
        echo "$out" | tail -5
        fail=1
    fi
done
exit $fail
