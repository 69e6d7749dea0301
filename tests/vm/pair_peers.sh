#!/bin/sh
# Peers across two kernels: perftest (ib_write_lat, ib_read_lat, ib_atomic_lat,
# ib_write_bw) and ucx_perftest (UCT and UCP put/get/atomics over rc_verbs) between the
# two guests of `locus-vm --pair` (servers in guest A, clients in guest B, over rxe1).
#
#   tests/vm/pair_peers.sh [--iters N] [--tests "NAME..."] [--log FILE] [LOCUS-VM OPTIONS...]
#
# NAMEs: write_lat read_lat atomic_lat write_bw (perftest), uct_put_lat uct_put_bw uct_get
# uct_fadd (ucx_perftest, UCT API on rc_verbs): the default; ucp_put_lat ucp_put_bw ucp_get
# ucp_fadd (UCP API): only when named (they fail on Soft-RoCE, see guest()).
# PEERS_SIZES="8 4096 65536" in the environment (default 8): write_lat and read_lat at each
# of those sizes (the bytes= key of the RESULT line tells them apart). PEERS_TAG=T: the
# tests are named NAME.T (a second run in the same boot needs other event names).
# PEERS_BUSY_SERVER=1: a shell loop keeps guest A's CPU busy while each perftest server
# runs (under TCG Soft-RoCE's responder runs on that CPU: the control for a target
# process that waits busily).
#
# stdout: one line per measurement, `RESULT key=value ...` (keys: tool, test, api, tl,
# bytes, iters, then lat_typ_us lat_avg_us lat_p99_us | bw_MBps msg_Mps; status=failed
# when a tool failed), after `#` lines saying where it ran. The tools' own output goes
# to --log FILE (default: discarded). Exit status: locus-vm's (77: skipped).
# Under TCG the numbers are for correctness and ratios, not for absolute speed.
#
# Inside the guests the harness runs `sh /bin/pair_peers.sh guest`.
PEER_TOOLS="ib_write_lat ib_read_lat ib_atomic_lat ib_write_bw ucx_perftest"
UCX_MODDIR=/usr/lib/x86_64-linux-gnu/ucx
PERFTEST_PORT=18515
DEFAULT_TESTS="write_lat read_lat atomic_lat write_bw uct_put_lat uct_put_bw uct_get uct_fadd"
UCX_PORT=13337

# --- inside a guest ---------------------------------------------------------------------
# Whether test NAME is one of --tests (default: all but the ucp_* ones).
wanted() {
    case " ${PEERS_TESTS:-$DEFAULT_TESTS} " in *" $1 "*) return 0 ;; esac
    return 1
}

# perftest NAME TOOL ARGS...: the server in A, the client in B with the same ARGS
# (NAME.SUFFIX: test NAME, one of several runs of it).
perftest() {
    name=$1
    shift
    wanted "${name%%.*}" || return 0
    if [ "$LOCUS_VM_INDEX" = 0 ]; then
        busy=
        if [ -n "$PEERS_BUSY_SERVER" ]; then
            sh -c 'while :; do :; done' &
            busy=$!
        fi
        timeout "$LIMIT" "$@" >"/tmp/$name.srv" 2>&1 &
        p=$!
        locus-vm-wait-listen $PERFTEST_PORT 60 && locus-vm-signal "$name"
        wait $p
        [ -z "$busy" ] || kill "$busy"
        return
    fi
    locus-vm-wait "$name" 120 || { echo "RESULT tool=$1 test=$name status=no-server"; return; }
    if timeout "$LIMIT" "$@" "$LOCUS_VM_PEER_IP" >"/tmp/$name.out" 2>&1; then
        perftest_result "$1" "$name" <"/tmp/$name.out"
    else
        echo "RESULT tool=$1 test=$name status=failed"
    fi
    sed "s/^/$name: /" "/tmp/$name.out" >&2
}

# The last table row: bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9 (latency)
# or bytes iters bw_peak bw_avg msg_rate (bandwidth).
perftest_result() {
    awk -v tool="$1" -v name="$2" '
        $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { last = $0 }
        END {
            n = split(last, f)
            if (n >= 9)
                printf "RESULT tool=%s test=%s bytes=%s iters=%s lat_typ_us=%s lat_avg_us=%s lat_p99_us=%s\n", tool, name, f[1], f[2], f[5], f[6], f[8]
            else if (n >= 5)
                printf "RESULT tool=%s test=%s bytes=%s iters=%s bw_MBps=%s msg_Mps=%s\n", tool, name, f[1], f[2], f[4], f[5]
            else
                printf "RESULT tool=%s test=%s status=unparsed\n", tool, name
        }'
}

# ucx NAME API ARGS...: ucx_perftest server in A, client with ARGS in B.
ucx() {
    name=$1 api=$2
    shift 2
    wanted "$name" || return 0
    if [ "$LOCUS_VM_INDEX" = 0 ]; then
        timeout "$LIMIT" ucx_perftest -p $UCX_PORT >"/tmp/$name.srv" 2>&1 &
        p=$!
        locus-vm-wait-listen $UCX_PORT 60 && locus-vm-signal "$name"
        wait $p
        return
    fi
    locus-vm-wait "$name" 120 || { echo "RESULT tool=ucx_perftest test=$name status=no-server"; return; }
    if timeout "$LIMIT" ucx_perftest "$LOCUS_VM_PEER_IP" -p $UCX_PORT "$@" >"/tmp/$name.out" 2>&1; then
        ucx_result "$name" "$api" "$*" <"/tmp/$name.out"
    else
        echo "RESULT tool=ucx_perftest test=$name api=$api tl=rc_verbs status=failed"
    fi
    sed "s/^/$name: /" "/tmp/$name.out" >&2
}

# The "Final:" row: iterations, latency 50%ile, average, overall (us), bandwidth
# average, overall (MB/s), message rate average, overall (msg/s).
ucx_result() {
    awk -v name="$1" -v api="$2" -v args="$3" '
        /Final:/ { for (i = 1; i <= NF; i++) if ($i == "Final:") break; it = $(i + 1); typ = $(i + 2)
                   avg = $(i + 3); bw = $(i + 5); mr = $(i + 7); found = 1 }
        END {
            n = split(args, a); bytes = 8
            for (i = 1; i < n; i++) if (a[i] == "-s") bytes = a[i + 1]
            if (!found) { printf "RESULT tool=ucx_perftest test=%s status=unparsed\n", name; exit }
            printf "RESULT tool=ucx_perftest test=%s api=%s tl=rc_verbs bytes=%s iters=%s lat_typ_us=%s lat_avg_us=%s bw_MBps=%s msg_Mps=%.6f\n", name, api, bytes, it, typ, avg, bw, mr / 1e6
        }'
}

guest() {
    N=${PEERS_ITERS:-1000}
    NBW=$((N / 4 > 10 ? N / 4 : 10))
    LIMIT=${PEERS_LIMIT:-240}
    dev="-d $LOCUS_VM_RDMA_DEV -x $LOCUS_VM_GID_INDEX"
    for s in ${PEERS_SIZES:-8}; do
        sfx=${PEERS_TAG:+.$PEERS_TAG}
        [ "$s" = 8 ] || sfx=$sfx.$s
        perftest write_lat$sfx ib_write_lat $dev -s "$s" -n "$N"
        perftest read_lat$sfx ib_read_lat $dev -s "$s" -n "$N"
    done
    perftest atomic_lat ib_atomic_lat $dev -A FETCH_AND_ADD -n "$N"
    perftest write_bw ib_write_bw $dev -s 65536 -n "$NBW"
    # UCT: the rc_verbs transport itself, one endpoint per side.
    export UCX_NET_DEVICES="${UCX_NET_DEVICES:-$LOCUS_VM_RDMA_DEV:1}" UCX_WARN_UNUSED_ENV_VARS=n
    uctdev="-d $LOCUS_VM_RDMA_DEV:1 -x rc_verbs"
    ucx uct_put_lat uct -t put_lat $uctdev -s 8 -n "$N" -w 100
    ucx uct_put_bw uct -t put_bw $uctdev -D zcopy -s 65536 -n "$NBW" -w 10
    ucx uct_get uct -t get $uctdev -D bcopy -s 8 -n "$N" -w 100
    ucx uct_fadd uct -t fadd $uctdev -s 8 -n "$N" -w 100
    # UCP (only when named in --tests): RMA and atomics on rc_verbs lanes. UCP connects
    # RC endpoints through an auxiliary transport (UD); on Soft-RoCE here UD packets reach
    # the peer's rxe1 but never its UD endpoint ("UD endpoint ... unhandled timeout
    # error"), and without ud_verbs UCP reports "no auxiliary transport".
    export UCX_TLS="${UCX_TLS:-rc_verbs,ud_verbs:aux}"
    ucx ucp_put_lat ucp -t ucp_put_lat -s 8 -n "$N" -w 100
    ucx ucp_put_bw ucp -t ucp_put_bw -s 65536 -n "$NBW" -w 10
    ucx ucp_get ucp -t ucp_get -s 8 -n "$N" -w 100
    ucx ucp_fadd ucp -t ucp_fadd -s 8 -n "$N" -w 100
}

if [ "$1" = guest ]; then
    guest 2>/tmp/peers.log
    cat /tmp/peers.log >&2
    exit 0
fi

# --- on the host ------------------------------------------------------------------------
here=$(cd "$(dirname "$0")" && pwd)
iters=1000 log=/dev/null tests=
while [ $# -gt 0 ]; do
    case $1 in
    --iters) iters=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    *) break ;;
    esac
done
bins=
for t in $PEER_TOOLS; do
    p=$(command -v "$t") || { echo "pair_peers: $t not found (install perftest, ucx-utils): skipped" >&2; exit 77; }
    bins="$bins --bin $p"
done
[ -e "$UCX_MODDIR/libuct_ib.so.0" ] || { echo "pair_peers: no $UCX_MODDIR/libuct_ib.so.0 (libucx0): skipped" >&2; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086
"$here/locus-vm" --pair --timeout 1200 $bins --file "$UCX_MODDIR/libuct_ib.so.0:$UCX_MODDIR/" \
    --file "$here/pair_peers.sh:/bin/pair_peers.sh" --env PEERS_ITERS="$iters" \
    --env PEERS_TESTS="$tests" "$@" \
    -- 'sh /bin/pair_peers.sh guest' ::: 'sh /bin/pair_peers.sh guest' >"$out" 2>"$out.err"
rc=$?
cat "$out" "$out.err" >"$log" 2>/dev/null
echo "# pair_peers: two QEMU guests (locus-vm --pair), Soft-RoCE rxe1 over a virtual link; host $(uname -m), $(nproc) cpus; iters $iters; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
grep "^\[B\] RESULT " "$out" | sed 's/^\[B\] //'
tail -n 1 "$out.err" | sed 's/^/# /'
rm -f "$out.err"
exit $rc
