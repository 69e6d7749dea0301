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
expect() {
    want=$1 pat=$2
    shift 2
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
    # The in-guest watchdog ends a command that runs past --timeout.
    "$VM" --nodes 1 --timeout 5 -- 'echo started; sleep 600' >"$tmp/out" 2>"$tmp/err"
    rc=$?
    sed 's/^/  | /' "$tmp/out" "$tmp/err"
    [ $rc = 124 ] || fail "timeout: exit $rc, expected 124"
    grep -q "time limit" "$tmp/err" || fail "timeout: no message"
fi
[ $fails = 0 ] && echo "harness selftest ($mode): ok"
[ $fails = 0 ]
