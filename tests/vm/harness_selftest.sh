#!/bin/sh
# Tests of the locus-vm harness itself.
#   harness_selftest.sh noboot LOCUS_VM   options, skips, initramfs contents (no guest)
#   harness_selftest.sh boot LOCUS_VM     exit status, output, --env, --file, timeout (2 boots)
mode=$1
VM=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect STATUS PATTERN -- locus-vm args...: exit status and a line of stdout+stderr.
# @fake / @pfake first: the options for the stand-in QEMU (one guest / --pair),
# each a word of its own (the checkout may sit under a path with a space).
expect() {
    want=$1 pat=$2
    shift 2
    case ${1-} in
    @fake) shift; set -- --nodes 2 --qemu "$FAKE" --kernel "$tmp/fake-vmlinuz" --no-extract --start-timeout 2 "$@" ;;
    @pfake) shift; set -- --pair --qemu "$FAKE" --kernel "$tmp/fake-vmlinuz" --kernel-version "$kver" --no-extract \
        --start-timeout 2 "$@" ;;
    esac
    "$VM" "$@" >"$tmp/out" 2>&1
    got=$?
    if [ "$got" != "$want" ]; then
        fail "locus-vm $*: exit $got, expected $want"; sed 's/^/  | /' "$tmp/out"
    elif [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/out"; then
        fail "locus-vm $*: no line matching '$pat'"; sed 's/^/  | /' "$tmp/out"
    else
        echo "ok: exit $got: locus-vm $*"
    fi
}

if [ "$mode" = noboot ]; then
    : >"$tmp/fake-vmlinuz"
    expect 2 "--nodes '0': expected an integer 1..16" --nodes 0 -- true
    expect 2 "--nodes 'x': expected an integer" --nodes x -- true
    expect 2 "no COMMAND" --nodes 2
    expect 2 "--mem-per-node '12X': expected a size" --nodes 2 --mem-per-node 12X -- true
    expect 2 "--cpus-per-node '0'" --nodes 2 --cpus-per-node 0 -- true
    expect 2 "--env 'FOO': expected NAME=VALUE" --nodes 2 --env FOO -- true
    expect 77 "not found.*skipped" --nodes 2 --qemu /nonexistent/qemu -- true
    expect 77 "kernel '/nonexistent/vmlinuz' not found" --nodes 2 --qemu /bin/true --kernel /nonexistent/vmlinuz -- true
    # QEMU that dies at once without guest output: cannot run here.
    expect 77 "QEMU cannot start here" --nodes 2 --qemu /bin/false --kernel "$tmp/fake-vmlinuz" --no-extract -- true
    expect 2 "--bin '/nonexistent/x': no such file" --nodes 2 --qemu /bin/true --kernel "$tmp/fake-vmlinuz" --no-extract --bin /nonexistent/x -- true
    expect 2 "destination 'rel' must be an absolute" --nodes 1 --print-initramfs "$tmp/i.cpio" --file /etc/hostname:rel -- true
    # Failure paths, with a stand-in QEMU (tests/vm/fake_qemu.sh).
    FAKE="$(dirname "$0")/fake_qemu.sh"
    FAKE_QEMU_MODE=stall expect 125 "did not reach the command in 2 boots" @fake --retries 1 -- true
    FAKE_QEMU_MODE=stall-once FAKE_QEMU_STATE=$tmp/state expect 5 "hello from boot 2" @fake --retries 2 -- true
    grep -q "killing and retrying" "$tmp/out" || fail "stall-once: no retry message"
    FAKE_QEMU_MODE=panic expect 125 "stopped without reporting an exit status" @fake -- true
    # A guest kernel soft lockup is not the command's result: rerun, then give up.
    FAKE_QEMU_MODE=lockup-once FAKE_QEMU_STATE=$tmp/lockstate expect 0 "hello from run 2" @fake -- true
    grep -q "soft lockup.*rerunning it" "$tmp/out" || fail "lockup-once: no rerun message"
    FAKE_QEMU_MODE=lockup expect 125 "soft lockup in 2 runs; giving up" @fake --retries 1 -- true
    FAKE_QEMU_MODE=setup expect 125 "guest setup failed: insmod x.ko: fake" @fake -- true
    # QEMU never outlives locus-vm, even when locus-vm is killed hard (its own
    # temporary directory, left behind by SIGKILL, goes in $tmp: removed on exit).
    FAKE_QEMU_MODE=stall FAKE_QEMU_PID=$tmp/qpid TMPDIR=$tmp "$VM" --nodes 2 --qemu "$FAKE" --kernel "$tmp/fake-vmlinuz" --no-extract \
        --start-timeout 60 -- true >/dev/null 2>&1 &
    vmpid=$!
    i=0; while [ ! -s "$tmp/qpid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    qpid=$(cat "$tmp/qpid" 2>/dev/null)
    kill -9 $vmpid; wait $vmpid 2>/dev/null
    sleep 0.5
    if [ -z "$qpid" ]; then fail "fake QEMU did not start"
    elif kill -0 "$qpid" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$qpid/status" 2>/dev/null; then fail "QEMU (pid $qpid) survived a killed locus-vm"; kill "$qpid"
    else echo "ok: QEMU dies with locus-vm"; fi
    # --pair: options, then outcomes with a stand-in QEMU per guest (FAKE_QEMU_MODE_A/_B).
    expect 2 "--nodes N is required" -- true
    expect 2 "expected '-- COMMAND_A" --pair -- true
    expect 2 "a command on each side" --pair -- true :::
    expect 2 "a command on each side" --pair -- ::: true
    expect 2 "one ':::'" --pair -- a ::: b ::: c
    expect 2 "--kill-after: only with --pair" --nodes 1 --kill-after A:1 -- true
    expect 2 "--kill-after 'C:1': expected A:SECONDS" --pair --kill-after C:1 -- a ::: b
    expect 2 "--pair-grace 'x'" --pair --pair-grace x -- a ::: b
    # (the pair's initramfs carries the rxe modules: some installed kernel's will do)
    kver=$(ls /lib/modules 2>/dev/null | head -n 1)
    if [ -z "$kver" ] || [ ! -e "/lib/modules/$kver/modules.dep" ]; then
        echo "skipped: pair outcomes (no /lib/modules/*/modules.dep)"
    else
    FAKE_QEMU_MODE_A=exit:0 FAKE_QEMU_MODE_B=exit:0 FAKE_QEMU_ARGS=$tmp/args expect 0 "B: .*exit 0; total" @pfake -- a ::: b
    grep -qx "\[A\] hello from A" "$tmp/out" && grep -qx "\[B\] hello from B" "$tmp/out" || fail "pair: output without [A]/[B] prefixes"
    # A listens and B connects on the same loopback port; the link NICs' MACs differ.
    a_port=$(sed -n '1s/.*socket,id=n1,listen=127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/args")
    b_port=$(sed -n '2s/.*socket,id=n1,connect=127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/args")
    [ -n "$a_port" ] && [ "$a_port" = "$b_port" ] || fail "pair: link ports differ or missing (A '$a_port', B '$b_port')"
    [ "$(grep -o 'mac=[0-9a-f:]*' "$tmp/args" | sort -u | wc -l)" = 2 ] || fail "pair: the two link NICs do not have two MACs"
    grep -q "locus_vm.index=0" "$tmp/args" && grep -q "locus_vm.index=1" "$tmp/args" || fail "pair: no guest index on the kernel command line"
    FAKE_QEMU_MODE_A=exit:0 FAKE_QEMU_MODE_B=exit:3 expect 3 "guest B's command exited 3, the first nonzero (A: exit 0)" @pfake -- a ::: b
    FAKE_QEMU_MODE_A=exit:4 FAKE_QEMU_MODE_B=run expect 4 "guest B was stopped 1 s after guest A's command failed" @pfake --pair-grace 1 -- a ::: b
    FAKE_QEMU_MODE_A=stall FAKE_QEMU_MODE_B=exit:0 expect 125 "guest A did not reach the command in 2 boots" @pfake --start-timeout 1 --retries 1 -- a ::: b
    FAKE_QEMU_MODE_A=exit:0 FAKE_QEMU_MODE_B=setup expect 125 "guest B setup failed: insmod x.ko: fake" @pfake -- a ::: b
    FAKE_QEMU_MODE_A=panic FAKE_QEMU_MODE_B=run expect 125 "guest A stopped without reporting an exit status" @pfake -- a ::: b
    FAKE_QEMU_MODE_A=run FAKE_QEMU_MODE_B=timeout expect 124 "time limit: guest B did not finish within --timeout 300 s; killed (both guests)" @pfake -- a ::: b
    # Killing one side: asked for by the other's command, or by --kill-after.
    FAKE_QEMU_MODE_A=run FAKE_QEMU_MODE_B=kill:A expect 0 "guest A was killed; guest B's command exited 0" @pfake -- a ::: b
    grep -q "killing guest A (asked by guest B's command)" "$tmp/out" || fail "pair kill: no message naming who asked"
    FAKE_QEMU_MODE_A=exit:0 FAKE_QEMU_MODE_B=run expect 0 "killing guest B (--kill-after B:0.5)" @pfake --kill-after B:0.5 -- a ::: b
    # Both commands failed on a stalled link: rerun; one failure, or no stall: no rerun.
    FAKE_QEMU_MODE_A=linkstall-once FAKE_QEMU_MODE_B=linkstall-once FAKE_QEMU_STATE=$tmp/stallstate \
        expect 0 "the commands failed on a stalled link: not their result; rerunning the pair" @pfake -- a ::: b
    grep -q "guest A: no ping reply from the other guest for 3.9 s" "$tmp/out" || fail "link stall: no message naming the gap"
    grep -qx "\[B\] B: run 2" "$tmp/out" || fail "link stall: the pair was not run again"
    FAKE_QEMU_MODE_A=linkstall:1 FAKE_QEMU_MODE_B=linkstall:1 expect 1 "the link stalled in 2 runs; giving up" @pfake --retries 1 -- a ::: b
    FAKE_QEMU_MODE_A=linkstall:1 FAKE_QEMU_MODE_B=exit:0 expect 1 "guest A's command exited 1" @pfake -- a ::: b
    grep -q "rerunning" "$tmp/out" && fail "link stall with one failed command: rerun"
    FAKE_QEMU_MODE_A=linkstall:1 FAKE_QEMU_MODE_B=run expect 1 "the link stalled in 2 runs" @pfake --pair-grace 1 --retries 1 -- a ::: b
    FAKE_QEMU_MODE_A=exit:2 FAKE_QEMU_MODE_B=exit:2 expect 2 "exited 2, the first nonzero" @pfake -- a ::: b
    grep -q "rerunning" "$tmp/out" && fail "both failed on a healthy link: rerun"
    # The link port was taken between picking it and QEMU binding it: another port.
    FAKE_QEMU_MODE_A=port-once FAKE_QEMU_MODE_B=exit:0 FAKE_QEMU_STATE=$tmp/portstate expect 0 "link port [0-9]* taken" @pfake -- a ::: b
    fi
    # The pair's initramfs: both commands, the in-guest helpers, Soft-RoCE pieces.
    "$VM" --pair --print-initramfs "$tmp/p.cpio" -- 'echo a' ::: 'echo b' >"$tmp/out" 2>&1
    rc=$?
    if [ $rc = 77 ]; then
        echo "skipped: pair initramfs ($(tail -n 1 "$tmp/out"))"
    elif [ $rc != 0 ]; then
        fail "pair --print-initramfs: exit $rc"; sed 's/^/  | /' "$tmp/out"
    else
        plist=$(cd "$tmp" && cpio -it <p.cpio 2>/dev/null)
        for f in locus-vm/cmd-0.sh locus-vm/cmd-1.sh bin/locus-vm-kill bin/locus-vm-freeze bin/locus-vm-signal \
                 bin/locus-vm-wait bin/locus-vm-wait-listen bin/rdma locus-vm/modules/rdma_rxe.ko; do
            echo "$plist" | grep -qx "$f" || fail "pair initramfs has no $f"
        done
        cpio -i --quiet --to-stdout locus-vm/cmd-1.sh <"$tmp/p.cpio" | grep -qx "echo b" || fail "pair: cmd-1.sh is not B's command"
        cpio -i --quiet --to-stdout init <"$tmp/p.cpio" | grep -q "rdma link add rxe1 type rxe netdev eth1" || fail "pair: /init does not add rxe1 on eth1"
    fi
    # The initramfs: busybox, /init, numactl with libnuma and the loader, files where asked.
    expect 0 "" --nodes 1 --print-initramfs "$tmp/i.cpio" --bin "$(command -v numactl)" \
        --file /etc/hostname:/data/ --file "$tmp/fake-vmlinuz:/x/y" -- true
    list=$(cd "$tmp" && cpio -it <i.cpio 2>/dev/null)
    for f in init bin/busybox bin/sh bin/numactl dev/console locus-vm/cmd.sh data/hostname x/y lib64; do
        echo "$list" | grep -qx "$f" || fail "initramfs has no $f"
    done
    echo "$list" | grep -q "libnuma.so.1$" || fail "initramfs has no libnuma.so.1"
    mkdir "$tmp/root" && (cd "$tmp/root" && cpio -idm <../i.cpio 2>/dev/null)
    # The copied ELF runs from the initramfs tree alone (loader and libraries complete).
    if [ "$(id -u)" = 0 ]; then
        chroot "$tmp/root" /bin/numactl --show >"$tmp/show" 2>&1 || { fail "numactl does not run in the initramfs tree"; cat "$tmp/show"; }
        chroot "$tmp/root" /bin/sh -c 'echo $((6*7))' | grep -qx 42 || fail "busybox sh does not run in the initramfs tree"
    fi
    cmp -s "$tmp/root/data/hostname" /etc/hostname || fail "--file copy differs"
    grep -q "^true$" "$tmp/root/locus-vm/cmd.sh" || fail "cmd.sh does not hold the command"
else
    command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 not found: skipped"; exit 77; }
    echo "payload 42" >"$tmp/payload"
    # Several words: quoted one by one; the exit status passes through; output is clean.
    "$VM" --nodes 1 --env FOO='a b' --file "$tmp/payload:/data/p" -- \
        sh -c 'cat /data/p; echo "foo=$FOO nodes=$LOCUS_VM_NODES"; printf partial; exit 7' \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc = 77 ] && { cat "$tmp/err"; exit 77; }
    sed 's/^/  | /' "$tmp/out" "$tmp/err"
    [ $rc = 7 ] || fail "exit status $rc, expected 7"
    printf 'payload 42\nfoo=a b nodes=1\npartial\n' | cmp -s - "$tmp/out" || fail "guest output differs from the command's output"
    # The guest environment the harness promises; then the in-guest watchdog ends a
    # command that runs past --timeout.
    "$VM" --nodes 1 --timeout 8 -- 'cat /sys/kernel/mm/transparent_hugepage/enabled
        echo "numa_balancing=$(cat /proc/sys/kernel/numa_balancing)"
        grep -qw avx2 /proc/cpuinfo && echo avx2; grep -qw avx512f /proc/cpuinfo && echo avx512f
        echo started; sleep 600' >"$tmp/out" 2>"$tmp/err"
    rc=$?
    sed 's/^/  | /' "$tmp/out" "$tmp/err"
    [ $rc = 124 ] || fail "timeout: exit $rc, expected 124"
    grep -q "time limit" "$tmp/err" || fail "timeout: no message"
    grep -q "started" "$tmp/out" || fail "timeout: the command did not start"
    grep -q '^\[always\] madvise never$' "$tmp/out" || fail "guest THP is not 'always'"
    grep -qx "numa_balancing=0" "$tmp/out" || fail "guest numa_balancing is not 0"
    grep -qx avx2 "$tmp/out" || fail "guest has no AVX2"
    if [ ! -d /sys/module/kvm_intel ] && [ ! -d /sys/module/kvm_amd ]; then
        grep -qx avx512f "$tmp/out" && fail "TCG guest reports AVX-512"
    fi
    # --pair: guest A takes the link down for 3 s, then both commands fail: the harness
    # names the stall (in both guests' ping replies) and, with --retries 0, gives up.
    "$VM" --pair --retries 0 --timeout 120 -- 'sleep 1; ip link set eth1 down; sleep 3; ip link set eth1 up; exit 1' \
        ::: 'sleep 5; exit 1' >"$tmp/out" 2>"$tmp/err"
    rc=$?
    sed 's/^/  | /' "$tmp/err"
    if [ $rc = 77 ]; then
        echo "skipped: pair link stall ($(tail -n 1 "$tmp/err"))"
    else
        [ $rc = 1 ] || fail "pair link stall: exit $rc, expected 1"
        grep -q "guest A: no ping reply from the other guest for [3-9].[0-9] s" "$tmp/err" || fail "pair link stall: A's gap not named"
        grep -q "the link stalled in 1 runs; giving up" "$tmp/err" || fail "pair link stall: not recognised"
    fi
fi
[ $fails = 0 ] && echo "harness selftest ($mode): ok"
[ $fails = 0 ]
