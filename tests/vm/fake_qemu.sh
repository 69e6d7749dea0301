#!/bin/sh
# Stand-in for qemu-system-x86_64 in the harness self-tests (no guest is booted).
# FAKE_QEMU_MODE: stall (never reaches the command), stall-once (stalls on the first
# boot only; FAKE_QEMU_STATE is the flag file), panic (dies after the start marker),
# lockup (the kernel reports a soft lockup, then panics), lockup-once (that on
# the first run only), setup (guest setup fails). FAKE_QEMU_PID: file that receives this process's pid.
# --pair guests (locus_vm.index=0|1 on the kernel command line) take FAKE_QEMU_MODE_A or
# FAKE_QEMU_MODE_B before FAKE_QEMU_MODE, and also: exit:N (the command prints a line and
# exits N), run (the command runs until the harness ends it), kill:X (the command asks for
# guest X to be killed, then exits 0 0.3 s later), timeout (the in-guest watchdog
# fires), port-once (the link port is taken
# on the first try; FAKE_QEMU_STATE is the flag file), linkstall:N (the command saw the
# link stall, then exits N), linkstall-once (that with N=1 on the first run only, exit 0
# after; FAKE_QEMU_STATE.A/.B are the flag files). FAKE_QEMU_ARGS: file that
# receives the command line.
initrd= append=
[ -n "$FAKE_QEMU_ARGS" ] && echo "$*" >>"$FAKE_QEMU_ARGS"
while [ $# -gt 0 ]; do
    case $1 in -initrd) initrd=$2 ;; -append) append=$2 ;; esac
    shift
done
nonce=$(cpio -i --quiet --to-stdout init <"$initrd" | sed -n 's/.*LOCUS-VM-START:\([0-9a-f]*\).*/\1/p' | head -n 1)
[ -n "$FAKE_QEMU_PID" ] && echo $$ >"$FAKE_QEMU_PID"
mode=$FAKE_QEMU_MODE me=
case $append in
*locus_vm.index=0*) me=A; mode=${FAKE_QEMU_MODE_A:-$mode} ;;
*locus_vm.index=1*) me=B; mode=${FAKE_QEMU_MODE_B:-$mode} ;;
esac
lockup() {
    echo "LOCUS-VM-START:$nonce"; echo "partial output"
    echo "[   28.6] watchdog: BUG: soft lockup - CPU#2 stuck for 26s! [locus:144]"
    echo "Kernel panic - not syncing: softlockup: hung tasks"
}
if [ "$mode" = port-once ]; then
    if [ ! -e "$FAKE_QEMU_STATE" ]; then
        : >"$FAKE_QEMU_STATE"
        echo "qemu-system-x86_64: -netdev socket,id=n1,listen=127.0.0.1:1: Address already in use" >&2
        exit 1
    fi
    mode=exit:0
fi
echo "SeaBIOS (fake)"
case $mode in
stall) exec sleep 600 ;;
stall-once)
    if [ ! -e "$FAKE_QEMU_STATE" ]; then : >"$FAKE_QEMU_STATE"; exec sleep 600; fi
    echo "LOCUS-VM-START:$nonce"; echo "hello from boot 2"; echo "LOCUS-VM-EXIT:$nonce:5" ;;
panic) echo "LOCUS-VM-START:$nonce"; echo "Kernel panic - not syncing: fake" ;;
lockup) lockup ;;
lockup-once)
    if [ -e "$FAKE_QEMU_STATE" ]; then
        echo "LOCUS-VM-START:$nonce"; echo "hello from run 2"; echo "LOCUS-VM-EXIT:$nonce:0"
    else
        : >"$FAKE_QEMU_STATE"; lockup
    fi ;;
setup) echo "LOCUS-VM-SETUP-FAILED:$nonce: insmod x.ko: fake" ;;
exit:*) echo "LOCUS-VM-START:$nonce"; echo "hello from $me"; echo "LOCUS-VM-EXIT:$nonce:${mode#exit:}" ;;
run) echo "LOCUS-VM-START:$nonce"; echo "$me runs"; exec sleep 600 ;;
linkstall:*)
    echo "LOCUS-VM-START:$nonce"; echo "retry counter exceeded"
    echo "LOCUS-VM-LINKSTALL:$nonce:4.2:4.0"; echo "LOCUS-VM-EXIT:$nonce:${mode#linkstall:}" ;;
linkstall-once)
    echo "LOCUS-VM-START:$nonce"
    if [ -e "$FAKE_QEMU_STATE.$me" ]; then
        echo "$me: run 2"; echo "LOCUS-VM-EXIT:$nonce:0"
    else
        : >"$FAKE_QEMU_STATE.$me"; echo "LOCUS-VM-LINKSTALL:$nonce:3.9:3.8"; echo "LOCUS-VM-EXIT:$nonce:1"
    fi ;;
timeout) echo "LOCUS-VM-START:$nonce"; echo "LOCUS-VM-TIMEOUT:$nonce"; exec sleep 600 ;;
kill:*)
    echo "LOCUS-VM-START:$nonce"; echo "LOCUS-VM-CTL:$nonce:kill:${mode#kill:}"
    sleep 0.3; echo "$me done"; echo "LOCUS-VM-EXIT:$nonce:0" ;;
esac
