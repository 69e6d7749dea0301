#!/bin/sh
# Guest B's side of vm_pair_kill (locus-vm --pair): pair_rc RDMA-writes to guest A without
# end; once writes flow, guest A is powered off (locus-vm-kill A). Passes when pair_rc then
# fails (a failed completion, exit 1) within BOUND seconds of the kill request.
#   pair_kill.sh [BOUND] [PAIR_RC OPTIONS...]      (guest A runs `pair_rc` as the server)
bound=${1:-5}
[ $# -gt 0 ] && shift
locus-vm-wait server 60 || exit 3
pair_rc -n 0 "$@" "$LOCUS_VM_PEER_IP" &
p=$!
sleep 2
kill -0 $p 2>/dev/null || { echo "pair_kill: pair_rc ended before the kill"; wait $p; exit 3; }
t0=$(cut -d' ' -f1 /proc/uptime)
locus-vm-kill A
# A writer that never notices must not hang the test: stop it after 4 x BOUND.
(sleep $((bound * 4)); kill $p 2>/dev/null) &
w=$!
wait $p
rc=$?
t1=$(cut -d' ' -f1 /proc/uptime)
kill $w 2>/dev/null
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
echo "pair_kill: pair_rc exited $rc, $took s after guest A was killed (bound $bound s)"
[ $rc -ne 0 ] && [ $rc -lt 128 ] || { echo "pair_kill: FAIL: expected a reported error (exit 1..127)"; exit 1; }
awk -v t="$took" -v b="$bound" 'BEGIN { exit !(t <= b) }' || { echo "pair_kill: FAIL: slower than $bound s"; exit 1; }
echo "pair_kill: ok"
