#!/bin/sh
# `locus config` / `locus bench copy`: bad values give one clear line and the
# right exit status; --calibrate writes the file a new process then reads; the
# environment beats the file. Usage: test_copy_cli.sh path/to/locus
set -u
L=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() { # expect RC PATTERN -- command...
    want=$1 pat=$2
    shift 3
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" = "$want" ] || fail "'$*' exited $rc, expected $want: $out"
    printf '%s\n' "$out" | grep -q -- "$pat" || fail "'$*' output lacks '$pat': $out"
}
export LOCUS_COPY_CALIBRATION=none

expect 1 "LOCUS_COPY_NT_MIN='12Q': expected 'auto', 'never' or a size" -- env LOCUS_COPY_NT_MIN=12Q "$L" config --check
expect 1 "LOCUS_COPY_ISA='avx3'" -- env LOCUS_COPY_ISA=avx3 "$L" config --check
expect 1 "LOCUS_COPY_KERNEL='avx9': expected one of auto|libc" -- env LOCUS_COPY_KERNEL=avx9 "$L" bench copy --sizes 64 --reps 1
expect 0 "LOCUS_COPY_NT_MIN_FAR" -- "$L" config
# rep movsb can be the self-test's big-copy kernel: `locus tune` writes it, so it must validate
if grep -qw erms /proc/cpuinfo; then
    expect 0 "LOCUS_COPY_NT_KERNEL *= movsb" -- env LOCUS_COPY_NT_KERNEL=movsb "$L" config
    LOCUS_COPY_NT_KERNEL=movsb "$L" config --check >/dev/null 2>&1 || fail "LOCUS_COPY_NT_KERNEL=movsb does not validate"
fi
expect 2 "reps" -- "$L" bench copy --reps 0
expect 2 "12Q" -- "$L" bench copy --sizes 64,12Q
expect 2 "unknown option '--bogus'" -- "$L" bench copy --bogus

expect 0 "NT stores from 1.0 MiB (LOCUS_COPY_NT_MIN)" -- env LOCUS_COPY_NT_MIN=1M \
    "$L" bench copy --sizes 64,4K,2M --reps 1 --no-kernels --no-pollution
out=$(env LOCUS_COPY_NT_MIN=1M "$L" bench copy --sizes 64,2M --reps 1 --no-kernels --no-pollution)
printf '%s\n' "$out" | grep -E '^ +64 .* libc' >/dev/null || fail "64 B should be glibc: $out"
printf '%s\n' "$out" | grep -E '^ +2M .*-ntpf' >/dev/null || fail "2M over a 1M threshold should be NT: $out"

cal=$T/sub/dir/copy.conf
expect 0 "wrote $cal" -- env LOCUS_COPY_CALIBRATION="$cal" "$L" bench copy --calibrate --reps 1
grep -q '^nt_min=[0-9][0-9]*$' "$cal" || fail "no nt_min line in $cal: $(cat "$cal")"
grep -q '^nt_kernel=[a-z0-9]*-nt$' "$cal" || fail "no nt_kernel line in $cal: $(cat "$cal")"
expect 0 "(calibration $cal)" -- env LOCUS_COPY_CALIBRATION="$cal" \
    "$L" bench copy --sizes 64 --reps 1 --no-kernels --no-pollution
expect 0 "NT stores from 3.0 MiB (LOCUS_COPY_NT_MIN)" -- env LOCUS_COPY_CALIBRATION="$cal" \
    LOCUS_COPY_NT_MIN=3M "$L" bench copy --sizes 64 --reps 1 --no-kernels --no-pollution
echo "copy cli: ok"
