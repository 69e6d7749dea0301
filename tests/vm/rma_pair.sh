#!/bin/sh
# rma_pair.sh PROG [ARGS...]: run PROG as one rank of a 2-process job spanning the two
# guests of `locus-vm --pair` (rank = LOCUS_VM_INDEX; the boot hub is served by rank 0
# in guest A on 10.0.3.1; B's connect retries until A listens). The RDMA device is the
# link's Soft-RoCE rxe1 (RoCE v2, GID index 1).
prog=$1
shift
export LOCUS_BOOT="tcp:10.0.3.1:${RMA_PAIR_PORT:-17017}" LOCUS_RANK="$LOCUS_VM_INDEX" LOCUS_SIZE=2
export LOCUS_RDMA_DEVICE="$LOCUS_VM_RDMA_DEV" LOCUS_RDMA_GID_INDEX="$LOCUS_VM_GID_INDEX"
exec "$prog" "$@"
