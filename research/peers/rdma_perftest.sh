#!/bin/sh
# The rdma transport (bench/rdma_probe) beside perftest (ib_write_lat,
# ib_read_lat, ib_atomic_lat, ib_write_bw, ib_read_bw) on the same Soft-RoCE
# device, in one locus-vm guest boot. Under TCG only the ratios between the
# two mean anything; run it a few times (the machine is shared). Two vCPUs:
# perftest's server and client both spin (one vCPU would time-slice them).
#
#   research/peers/rdma_perftest.sh [BUILD_DIR] [ITERATIONS]      (on the host)
#
# The guest part is this script again with --guest.
set -eu

if [ "${1:-}" = "--guest" ]; then
    N=${2:-1000}
    ip link set lo up 2>/dev/null || true
    echo "== rdma_probe (locus) =="
    rdma_probe "$N" 128 | tee /tmp/probe.txt
    G=$(sed -n 's/.* GID \([0-9]*\),.*/\1/p' /tmp/probe.txt)
    IP=$(ip -4 addr show eth0 | sed -n 's/.*inet \([0-9.]*\).*/\1/p')
    # perftest: server in the background, client against eth0's address
    pt() {
        tool=$1; shift
        "$tool" -d rxe0 -x "$G" -F "$@" >/tmp/srv.txt 2>&1 &
        srv=$!
        sleep 1
        "$tool" -d rxe0 -x "$G" -F "$@" "$IP" 2>&1 | grep -E '^ *[0-9]+ +[0-9]+' | sed "s/^/$tool /" || true
        wait "$srv" 2>/dev/null || true
    }
    echo "== perftest (same device, GID $G, server and client in this guest) =="
    echo "lat columns: #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9% (us)"
    for s in 8 64 256 1024 4096 65536; do pt ib_write_lat -s "$s" -n "$N"; done
    for s in 8 4096 65536; do pt ib_read_lat -s "$s" -n "$N"; done
    pt ib_atomic_lat -n "$N"
    echo "bw columns: #bytes #iterations BW_peak BW_average (MB/s) MsgRate (Mpps)"
    for s in 4096 65536 1048576 4194304; do
        pt ib_write_bw -s "$s" -n 200
        pt ib_read_bw -s "$s" -n 200
    done
    exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
n=${2:-1000}
bins=""
for t in ib_write_lat ib_read_lat ib_atomic_lat ib_write_bw ib_read_bw; do
    p=$(command -v "$t") || { echo "rdma_perftest: $t not found (apt-get install perftest)" >&2; exit 77; }
    bins="$bins --bin $p"
done
# shellcheck disable=SC2086
exec "$root/tests/vm/locus-vm" --nodes 1 --cpus-per-node 2 --rdma --timeout 900 --bin "$build/bin/rdma_probe" $bins \
    --file "$here/rdma_perftest.sh:/bin/rdma_perftest.sh" -- sh /bin/rdma_perftest.sh --guest "$n"
