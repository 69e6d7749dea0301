#!/bin/sh
# Stand-in for qemu-system-x86_64 in the harness self-tests (no guest is booted).
# FAKE_QEMU_MODE: stall (never reaches the command), stall-once (stalls on the first
# boot only; FAKE_QEMU_STATE is the flag file), panic (dies after the start marker),
# lockup (the kernel reports a soft lockup, then panics), lockup-once (that on
# the first run only), setup (guest setup fails). FAKE_QEMU_PID: file that receives this process's pid.
initrd=
while [ $# -gt 0 ]; do [ "$1" = -initrd ] && initrd=$2; shift; done
nonce=$(cpio -i --quiet --to-stdout init <"$initrd" | sed -n 's/.*LOCUS-VM-START:\([0-9a-f]*\).*/\1/p' | head -n 1)
[ -n "$FAKE_QEMU_PID" ] && echo $$ >"$FAKE_QEMU_PID"
lockup() {
    echo "LOCUS-VM-START:$nonce"; echo "partial output"
    echo "[   28.6] watchdog: BUG: soft lockup - CPU#2 stuck for 26s! [locus:144]"
    echo "Kernel panic - not syncing: softlockup: hung tasks"
}
echo "SeaBIOS (fake)"
case $FAKE_QEMU_MODE in
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
esac
