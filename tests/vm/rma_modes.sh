#!/bin/sh
# rma_modes.sh [OPS]: in one --rdma guest, two processes through the NIC's loopback
# (LOCUS_RMA_ONNODE=nic) once per LOCUS_RMA_REG mode; rma_check verifies each run.
ops=${1:-600}
for m in cache static none; do
  echo "rma_modes: LOCUS_RMA_REG=$m"
  LOCUS_RMA_REG=$m locus run -n 2 -- rma_check --expect nic --ops "$ops" --quiet || exit 1
done
echo "rma_modes: ok"
