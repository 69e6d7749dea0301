#!/bin/sh
# locus's OpenSHMEM across two kernels against perftest, in ONE boot of `locus-vm --pair`
# (one PE / rank per guest over the link's Soft-RoCE rxe1; perftest servers in A, clients
# in B; the host side is pair_common.sh, shared with rma_pair_peers.sh):
#   shmem_bench (bench/shmem, built with locus-oshcc)  put_lat, put_nofence_lat, p_lat,
#                                                      get_lat --typical
#   locus bench rma                                    put_lat, get_lat (the layer below)
#   ib_write_lat, ib_read_lat                          at the same sizes (default 8,4K,64K)
# then the ratios of the typical (median) latencies: shmem / perftest, shmem / locus rma.
# Controls in the same boot ("RATIO ctl_..."): ib_write_lat / ib_read_lat 8 B also at the
# start of the boot (drift), ib_read_lat 8 B with guest A's CPU kept busy by a shell loop
# (Soft-RoCE's responder runs on that CPU under TCG).
#
# What each figure is (all "one way" figures are half a ping-pong's round trip):
#   ib_write_lat -s S   write ping-pong: one RDMA WRITE of S bytes each way, the receiver
#                       polls the buffer's last byte; reports half the round trip (t_typical:
#                       the median iteration).
#   shmem put_lat S     ping-pong, reported as half the round trip (no conversion needed),
#                       but each way is shmem_putmem(S) + shmem_fence + shmem_long_p(flag):
#                       two RDMA WRITEs with a fence between (the OSU-style idiom; S + 8
#                       bytes each way). The fence is a flush in locus rma today: a round
#                       trip, so at 8 B this is not the same thing as ib_write_lat.
#   shmem put_nofence_lat S  put_lat without the fence (a diagnostic: ordered only by the
#                       RC queue pair), so put_lat / put_nofence_lat is what the fence costs.
#   shmem p_lat         ping-pong of one shmem_long_p (8 B) each way, the peer waiting on
#                       that word: one 8-byte RDMA WRITE each way, i.e. exactly what
#                       ib_write_lat -s 8 does. The like-for-like row at 8 B.
#   locus rma put_lat S put_nbi of S-8 bytes then the 8-byte flag, no fence (the whole
#                       message at 8 B: the same as p_lat).
#   ib_read_lat -s S, shmem get_lat S, locus rma get_lat S: one blocking READ of S bytes
#                       per iteration, time per get.
# typ= (shmem_bench --typical) and lat_typ_us= (locus bench rma) are per-iteration
# medians like perftest's t_typical; shmem_bench's value= and locus's lat_us= are
# medians of run means (a long Soft-RoCE/TCG tail moves them): the means are beside.
# Under TCG only the ratios mean anything.
#
#   research/peers/shmem_pair_peers.sh BUILD_DIR [--iters N] [--time S] [--sizes LIST] [--log FILE]
#                                      [--rounds K]
#
# --rounds K (K > 1): only the 8-byte rows, as K interleaved rounds of ib_write_lat,
# ib_read_lat, shmem p_lat and get_lat; prints each round's ratios, their median and
# the ratio of the medians.
# --iters: perftest iterations (200); --time: seconds per shmem_bench / locus bench run
# (1.0); --sizes: comma list (8,4K,64K). stdout: the RESULT lines of every tool, then
# "RATIO name=value ..." lines.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ "$1" = guest ] && [ "${SHMEM_ROUNDS:-1}" -gt 1 ]; then
    # --rounds K: 8 B only, K rounds of (ib_write_lat, ib_read_lat, then shmem p_lat and
    # get_lat), so each locus figure has its perftest figure from a minute before: TCG's
    # drift within a boot (perftest alone moved 1.83x) falls on both sides of a ratio
    export LOCUS_RDMA_TIMEOUT=17
    r=1
    while [ $r -le "$SHMEM_ROUNDS" ]; do
        PEERS_TESTS="write_lat read_lat" PEERS_TAG=r$r sh /bin/pair_peers.sh guest
        SHMEM_SYMMETRIC_SIZE=128M SHMEM_PAIR_PORT=$((17100 + r)) sh /bin/shmem_pair.sh 1 \
            /bin/shmem_bench --tests p_lat,get_lat --sizes 8 --time "${SHMEM_TIME:-1.0}" --reps 1 --typical |
            sed "s/^RESULT /RESULT round=r$r /"
        r=$((r + 1))
    done
    exit 0
fi
if [ "$1" = guest ]; then
    T=${SHMEM_TIME:-1.0}
    S=${SHMEM_SIZES:-8,4K,64K}
    # Under TCG a guest busy with its own traffic can leave a READ unanswered for longer
    # than the default dead-peer time (0.47 s): 4.096 us * 2^17 * 7 = 3.7 s here.
    export LOCUS_RDMA_TIMEOUT=17
    # controls at 8 B: perftest also first (drift within the boot), and ib_read_lat with
    # guest A's CPU kept busy (the responder's CPU runs Soft-RoCE under TCG)
    PEERS_TESTS="write_lat read_lat" PEERS_TAG=first sh /bin/pair_peers.sh guest
    PEERS_TESTS=read_lat PEERS_TAG=busy PEERS_BUSY_SERVER=1 sh /bin/pair_peers.sh guest
    # locus rma, as rma_pair_peers.sh runs it (hooks preloaded: the registration cache)
    LD_PRELOAD=/lib/liblocus_hooks.so RMA_PAIR_PORT=17041 sh /bin/rma_pair.sh \
        locus bench rma --sizes "$S" --tests put,get --time "$T" --reps 3
    # OpenSHMEM, one PE per guest (PE 0 in A prints)
    SHMEM_SYMMETRIC_SIZE=128M SHMEM_PAIR_PORT=17042 sh /bin/shmem_pair.sh 1 \
        /bin/shmem_bench --tests put_lat,put_nofence_lat,p_lat,get_lat --sizes "$S" --time "$T" --reps 3 --typical
    PEERS_TESTS="write_lat read_lat" PEERS_SIZES=$(echo "$S" | sed 's/[kK]/*1024/g; s/[mM]/*1048576/g' |
        tr ',' '\n' | while read -r x; do echo $(($x)); done) sh /bin/pair_peers.sh guest
    exit 0
fi

build=$1
[ -n "$build" ] && [ -x "$build/bin/locus" ] && [ -x "$build/bin/locus-oshcc" ] ||
    { echo "usage: $0 BUILD_DIR [--iters N] [--time S] [--sizes LIST] [--log FILE]" >&2; exit 2; }
shift
iters=200 time=1.0 sizes=8,4K,64K log=/dev/null rounds=1
while [ $# -gt 0 ]; do
    case $1 in
    --iters) iters=$2; shift 2 ;;
    --time) time=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "shmem_pair_peers: unknown option $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=pair_common.sh
. "$here/pair_common.sh"
bins=$(pair_perftest_bins ib_write_lat ib_read_lat) || exit $?
tmp=$(mktemp -d)
out=$tmp/out
trap 'rm -rf "$tmp"' EXIT
"$build/bin/locus-oshcc" -O2 -o "$tmp/shmem_bench" "$root/bench/shmem/shmem_bench.c" ||
    { echo "shmem_pair_peers: locus-oshcc failed" >&2; exit 1; }
# shellcheck disable=SC2086
pair_boot "$here/shmem_pair_peers.sh" "$out" "$log" --timeout 1500 --mem-per-node 1G \
    --bin "$build/bin/locus" --file "$tmp/shmem_bench:/bin/shmem_bench" $bins \
    --env PEERS_ITERS="$iters" --env SHMEM_TIME="$time" --env SHMEM_SIZES="$sizes" --env LOCUS_RMA_HEAP_SIZE=64M \
    --env SHMEM_ROUNDS="$rounds"
rc=$?
if [ "$rounds" -gt 1 ]; then
    pair_report shmem_pair_peers "$out" "perftest iters $iters, --time $time, 8 B, $rounds interleaved rounds"
    # per round: locus typical / perftest typical of that round; then the median of
    # the rounds' ratios and the ratio of the medians
    grep -E '^\[[AB]\] RESULT' "$out" | sed 's/^\[[AB]\] //' | awk "$PAIR_AWK_VAL"'
        function median(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        / impl=locus / { r = val($0, "round"); loc[val($0, "test"), r] = val($0, "typ"); R[r] = 1 }
        / tool=ib_(write|read)_lat / {
            t = val($0, "test"); r = substr(t, index(t, ".") + 1); sub(/[.].*/, "", t); pt[t, r] = val($0, "lat_typ_us")
        }
        END {
            split("p_lat write_lat get_lat read_lat", pair, " ")
            for (k = 1; k <= 3; k += 2) {
                n = 0; nl = 0; np = 0
                for (r in R) {
                    a = loc[pair[k], r]; b = pt[pair[k + 1], r]
                    if (a != "" && b > 0) {
                        q[++n] = a / b; l[++nl] = a; pp[++np] = b
                        printf "ROUND %s %s/ib_%s=%.3f (%s / %s us)\n", r, pair[k], pair[k + 1], a / b, a, b
                    }
                }
                if (n)
                    printf "RATIO shmem_%s_8B/ib_%s: median of %d rounds %.3f, ratio of medians %.3f (%.1f / %.1f us) target<=1.2\n",
                        pair[k], pair[k + 1], n, median(q, n), median(l, nl) / median(pp, np), median(l, nl), median(pp, np)
                delete q; delete l; delete pp
            }
        }' | sort
    exit $rc
fi
pair_report shmem_pair_peers "$out" "perftest iters $iters, --time $time, sizes $sizes"
# ratios: typical (median) latencies, the means' ratio beside
grep -E '^\[[AB]\] RESULT' "$out" | sed 's/^\[[AB]\] //' | awk "$PAIR_AWK_VAL"'
    / impl=locus / {
        t = val($0, "test"); b = val($0, "size")
        typ[t, b] = val($0, "typ"); mean[t, b] = val($0, "value"); sz[b] = 1
    }
    / tool=locus_rma / {
        t = val($0, "test"); b = val($0, "bytes")
        rtyp[t, b] = val($0, "lat_typ_us"); rmean[t, b] = val($0, "lat_us")
    }
    / tool=ib_(write|read)_lat / {
        t = val($0, "test"); b = val($0, "bytes"); tag = t ~ /[.](first|busy)/ ? substr(t, index(t, ".") + 1) : ""
        sub(/[.].*/, "", t)
        if (tag != "") { ctl[t, tag] = val($0, "lat_typ_us"); ctla[t, tag] = val($0, "lat_avg_us") }
        else if (t == "write_lat") { wl[b] = val($0, "lat_typ_us"); wla[b] = val($0, "lat_avg_us") }
        else { rl[b] = val($0, "lat_typ_us"); rla[b] = val($0, "lat_avg_us") }
    }
    function ratio(name, a, am, b, bm, extra) {
        if (a != "" && b > 0)
            printf "RATIO %s=%.3f%s (typical %s / %s us; means %.3f)\n", name, a / b, extra, a, b, (bm > 0 ? am / bm : 0)
    }
    END {
        ratio("shmem_p_lat_8B/ib_write_lat", typ["p_lat", 8], mean["p_lat", 8], wl[8], wla[8], " target<=1.2")
        for (b in sz) {
            lim = b == 8 ? " target<=1.2" : ""
            ratio("shmem_put_lat_" b "B/ib_write_lat", typ["put_lat", b], mean["put_lat", b], wl[b], wla[b], lim)
            ratio("shmem_get_lat_" b "B/ib_read_lat", typ["get_lat", b], mean["get_lat", b], rl[b], rla[b], lim)
        }
        # controls: the same perftest at the start of the boot; ib_read_lat, responder CPU busy
        ratio("ctl_ib_write_lat_first/last", ctl["write_lat", "first"], ctla["write_lat", "first"], wl[8], wla[8], "")
        ratio("ctl_ib_read_lat_first/last", ctl["read_lat", "first"], ctla["read_lat", "first"], rl[8], rla[8], "")
        ratio("ctl_ib_read_lat_busy/last", ctl["read_lat", "busy"], ctla["read_lat", "busy"], rl[8], rla[8], "")
        ratio("ctl_shmem_get_lat_8B/ib_read_lat_busy", typ["get_lat", 8], mean["get_lat", 8], ctl["read_lat", "busy"], ctla["read_lat", "busy"], "")
        ratio("shmem_p_lat_8B/rma_put_lat_8B", typ["p_lat", 8], mean["p_lat", 8], rtyp["put_lat", 8], rmean["put_lat", 8], "")
        for (b in sz) {
            ratio("shmem_put_lat_" b "B/put_nofence_lat", typ["put_lat", b], mean["put_lat", b], typ["put_nofence_lat", b], mean["put_nofence_lat", b], "")
            ratio("shmem_put_nofence_lat_" b "B/ib_write_lat", typ["put_nofence_lat", b], mean["put_nofence_lat", b], wl[b], wla[b], "")
            ratio("shmem_put_lat_" b "B/rma_put_lat_" b "B", typ["put_lat", b], mean["put_lat", b], rtyp["put_lat", b], rmean["put_lat", b], "")
            ratio("shmem_get_lat_" b "B/rma_get_lat_" b "B", typ["get_lat", b], mean["get_lat", b], rtyp["get_lat", b], rmean["get_lat", b], "")
            ratio("rma_put_lat_" b "B/ib_write_lat", rtyp["put_lat", b], rmean["put_lat", b], wl[b], wla[b], "")
            ratio("rma_get_lat_" b "B/ib_read_lat", rtyp["get_lat", b], rmean["get_lat", b], rl[b], rla[b], "")
        }
    }' | sort -s -t= -k1,1
exit $rc
