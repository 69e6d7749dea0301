#!/bin/sh
# locus rma across two kernels against perftest, in ONE boot of `locus-vm --pair`
# (one rank per guest over the link's Soft-RoCE rxe1; perftest servers in A, clients in B):
#   locus bench rma       put ping-pong, get, put bandwidth (window 64), fetch-add (rank 0 = A)
#   locus bench exchange  static / cache / none / small-cache           (rank 0 = guest A)
#   ib_write_lat, ib_read_lat, ib_atomic_lat (fetch-and-add), ib_write_bw 64 KiB (guest B)
# then the ratios the targets name: put_lat(8) / ib_write_lat, get_lat(8) / ib_read_lat,
# amo_lat / ib_atomic_lat (typical = median latencies, the means beside), put_bw(64K) / ib_write_bw (perftest's MB/s
# is 2^20 B/s: converted). Under TCG only these ratios mean anything.
#
#   research/peers/rma_pair_peers.sh BUILD_DIR [--iters N] [--time S] [--keys N] [--log FILE]
#
# stdout: the RESULT lines of every tool, then "RATIO name=value target=..." lines.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ "$1" = guest ]; then
    T=${RMA_TIME:-0.5}
    # liblocus_hooks preloaded: LOCUS_RMA_REG=cache stays a cache (else init runs it as static).
    # Under TCG a guest busy with its own traffic can leave a READ unanswered for longer
    # than the default dead-peer time (0.47 s): 4.096 us * 2^17 * 7 = 3.7 s here.
    export LD_PRELOAD=/lib/liblocus_hooks.so LOCUS_RDMA_TIMEOUT=17
    # locus first: both guests run each job (hub in A), rank 0 prints
    RMA_PAIR_PORT=17031 sh /bin/rma_pair.sh locus bench rma --sizes 8,4K,64K --window 64 --time "$T" --reps 3
    RMA_PAIR_PORT=17032 sh /bin/rma_pair.sh locus bench rma --sizes 64K --tests bw --window 64 --mem private --time "$T" --reps 3
    RMA_PAIR_PORT=17033 sh /bin/rma_pair.sh locus bench exchange --keys "${RMA_KEYS:-64K}" --rounds 3 --live 4
    unset LD_PRELOAD
    PEERS_TESTS="write_lat read_lat atomic_lat write_bw" sh /bin/pair_peers.sh guest
    exit 0
fi

build=$1
[ -n "$build" ] && [ -x "$build/bin/locus" ] || { echo "usage: $0 BUILD_DIR [--iters N] [--time S] [--keys N] [--log FILE]" >&2; exit 2; }
shift
iters=300 time=0.5 keys=64K log=/dev/null
while [ $# -gt 0 ]; do
    case $1 in
    --iters) iters=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --keys) keys=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    *) echo "rma_pair_peers: unknown option $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=pair_common.sh
. "$here/pair_common.sh"
bins=$(pair_perftest_bins ib_write_lat ib_read_lat ib_atomic_lat ib_write_bw) || exit $?
out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT
# shellcheck disable=SC2086
pair_boot "$here/rma_pair_peers.sh" "$out" "$log" --timeout 1500 --bin "$build/bin/locus" $bins \
    --env PEERS_ITERS="$iters" --env RMA_TIME="$time" --env RMA_KEYS="$keys" --env LOCUS_RMA_HEAP_SIZE=64M
rc=$?
pair_report rma_pair_peers "$out" "iters $iters"
# ratios
grep -E '^\[[AB]\] RESULT' "$out" | sed 's/^\[[AB]\] //' | awk "$PAIR_AWK_VAL"'
    / tool=locus_rma / {
        t = val($0, "test"); b = val($0, "bytes"); m = val($0, "mem")
        if (t == "put_lat" && b == 8) { put = val($0, "lat_typ_us"); putm = val($0, "lat_us") }
        if (t == "get_lat" && b == 8) { get = val($0, "lat_typ_us"); getm = val($0, "lat_us") }
        if (t == "amo_lat") { amo = val($0, "lat_typ_us"); amom = val($0, "lat_us") }
        if (t == "put_bw" && b == 65536 && m == "heap") bw = val($0, "bw_MBps") * 1e6 / 1048576
        if (t == "put_bw" && b == 65536 && m == "private") bwp = val($0, "bw_MBps") * 1e6 / 1048576
    }
    / tool=locus_exchange / { ex[val($0, "mode")] = val($0, "keys_per_s_rank"); regs[val($0, "mode")] = val($0, "regs_per_round") }
    / tool=ib_write_lat / { wl = val($0, "lat_typ_us"); wla = val($0, "lat_avg_us") }
    / tool=ib_read_lat / { rl = val($0, "lat_typ_us"); rla = val($0, "lat_avg_us") }
    / tool=ib_atomic_lat / { al = val($0, "lat_typ_us"); ala = val($0, "lat_avg_us") }
    / tool=ib_write_bw / { wb = val($0, "bw_MBps") }
    END {
        if (put && wl) printf "RATIO put_lat_8B/ib_write_lat=%.3f target<=1.2 (typical; means %.3f)\n", put / wl, putm / wla
        if (get && rl) printf "RATIO get_lat_8B/ib_read_lat=%.3f target<=1.2 (typical; means %.3f)\n", get / rl, getm / rla
        if (amo && al) printf "RATIO amo_lat/ib_atomic_lat=%.3f (typical; means %.3f)\n", amo / al, amom / ala
        if (bw && wb) printf "RATIO put_bw_64K_heap/ib_write_bw=%.3f target>=0.9\n", bw / wb
        if (bwp && wb) printf "RATIO put_bw_64K_private/ib_write_bw=%.3f\n", bwp / wb
        if (ex["static"]) {
            printf "RATIO exchange_cache/static=%.3f target>=0.9\n", ex["cache"] / ex["static"]
            printf "RATIO exchange_none/static=%.3f (registrations per round %s)\n", ex["none"] / ex["static"], regs["none"]
            printf "RATIO exchange_small/static=%.3f (registrations per round %s)\n", ex["small"] / ex["static"], regs["small"]
        }
    }'
exit $rc
