#!/bin/sh
# rma_modes.sh [OPS]: in one --rdma guest, two processes through the NIC's loopback
# (LOCUS_RMA_ONNODE=nic) once per LOCUS_RMA_REG mode, and once with a registration
# cache too small for the buffers; rma_check verifies each run.
ops=${1:-600}
for m in cache static none; do
  echo "rma_modes: LOCUS_RMA_REG=$m"
  LOCUS_RMA_REG=$m locus run -n 2 -- rma_check --expect nic --ops "$ops" --quiet || exit 1
done
# cache, with room for 64 KiB beside the heap (LOCUS_RMA_HEAP_SIZE=48M registers
# 50 MiB: rma's own collective space on top): buffers that do not fit go through
# the bounce buffers (rma_check checks that some did, and every byte)
full=$((50 * 1048576 + 65536))
echo "rma_modes: LOCUS_RMA_REG=cache, LOCUS_REG_MAX_BYTES=$full"
LOCUS_RMA_REG=cache LOCUS_REG_MAX_BYTES=$full locus run -n 2 -- rma_check --expect nic --ops "$ops" \
  --expect-reg-full || exit 1
echo "rma_modes: ok"
