#!/bin/sh
# shmem_pair.sh PLACE PROG [ARGS...]: in one guest of `locus-vm --pair`,
# start this guest's PEs of an OpenSHMEM job spanning the two guests
# (LOCUS_BOOT=tcp on A's link address, the hub served by PE 0), RDMA over
# the link's Soft-RoCE device. PLACE is a count PPG (a job of 2*PPG PEs,
# guest A holding PEs 0..PPG-1, B the rest) or the world PEs of each guest,
# "A/B" with commas ("0,2,3/1": the uneven placement of mpirun --map-by node
# over nodes of 3 and 1 slots; PE 0 must be on A). Exit status: the first
# failing PE's. The test programs print from PE 0 (guest A) and end with
# "done"; a failed section prints "FAIL".
place=$1
shift
case $place in
*/*)
    a=$(echo "${place%/*}" | tr , ' ')
    b=$(echo "${place#*/}" | tr , ' ')
    size=$(echo $a $b | wc -w)
    if [ "$LOCUS_VM_INDEX" = 0 ]; then ranks=$a; else ranks=$b; fi ;;
*)
    size=$((2 * place))
    ranks=$(seq $((LOCUS_VM_INDEX * place)) $((LOCUS_VM_INDEX * place + place - 1))) ;;
esac
export LOCUS_BOOT="tcp:10.0.3.1:${SHMEM_PAIR_PORT:-17117}" LOCUS_SIZE=$size
export LOCUS_RDMA_DEVICE="$LOCUS_VM_RDMA_DEV" LOCUS_RDMA_GID_INDEX="$LOCUS_VM_GID_INDEX"
pids=""
for r in $ranks; do
    LOCUS_RANK=$r "$@" &
    pids="$pids $!"
done
rc=0
for p in $pids; do
    wait "$p" || { s=$?; [ $rc = 0 ] && rc=$s; }
done
exit $rc
