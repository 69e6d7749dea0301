#!/bin/sh
# shmem_pair.sh PPG PROG [ARGS...]: in one guest of `locus-vm --pair`, start
# PPG PEs of an OpenSHMEM job of 2*PPG PEs spanning the two guests (guest A
# holds PEs 0..PPG-1, B the rest; LOCUS_BOOT=tcp on A's link address, the
# hub served by PE 0), RDMA over the link's Soft-RoCE device. Exit status:
# the first failing PE's. The test programs print from PE 0 (guest A) and
# end with "done"; a failed section prints "FAIL".
ppg=$1
shift
export LOCUS_BOOT="tcp:10.0.3.1:${SHMEM_PAIR_PORT:-17117}" LOCUS_SIZE=$((2 * ppg))
export LOCUS_RDMA_DEVICE="$LOCUS_VM_RDMA_DEV" LOCUS_RDMA_GID_INDEX="$LOCUS_VM_GID_INDEX"
pids=""
i=0
while [ $i -lt "$ppg" ]; do
    LOCUS_RANK=$((LOCUS_VM_INDEX * ppg + i)) "$@" &
    pids="$pids $!"
    i=$((i + 1))
done
rc=0
for p in $pids; do
    wait "$p" || { s=$?; [ $rc = 0 ] && rc=$s; }
done
exit $rc
