# Host side shared by the two-kernel peer scripts (rma_pair_peers.sh, shmem_pair_peers.sh):
# one boot of `locus-vm --pair` running the caller's script as `sh /bin/NAME guest` in both
# guests, with the launchers and perftest's driver in the guests, then the report.
# Sourced (POSIX sh); the caller sets here (its directory) and root (the source tree).

# pair_perftest_bins TOOL...: "--bin PATH" for each perftest tool, or exit 77 when one is
# missing (system tools only: the caller word-splits the result).
pair_perftest_bins() {
    pb=""
    for t in "$@"; do
        p=$(command -v "$t") || { echo "$(basename "$0"): $t not found (perftest): skipped" >&2; exit 77; }
        pb="$pb --bin $p"
    done
    echo "$pb"
}

# pair_boot SCRIPT OUT LOG [LOCUS-VM OPTIONS...]: the boot; SCRIPT (a path) runs as
# `sh /bin/$(basename SCRIPT) guest` in A and in B; the guests' stdout goes to OUT
# (lines "[A] ..." / "[B] ..."), stdout and stderr both to LOG. Status: locus-vm's.
# In the guests: /bin/rma_pair.sh and /bin/shmem_pair.sh (a job across the guests),
# /bin/pair_peers.sh (perftest), /lib/liblocus_hooks.so from $build.
pair_boot() {
    script=$1 out=$2 log=$3
    shift 3
    name=$(basename "$script")
    "$root/tests/vm/locus-vm" --pair "$@" \
        --file "$root/tests/vm/rma_pair.sh:/bin/rma_pair.sh" --file "$root/tests/shmem/shmem_pair.sh:/bin/shmem_pair.sh" \
        --file "$root/tests/vm/pair_peers.sh:/bin/pair_peers.sh" --file "$script:/bin/$name" \
        --file "$build/liblocus_hooks.so:/lib/liblocus_hooks.so" \
        -- "sh /bin/$name guest" ::: "sh /bin/$name guest" >"$out" 2>"$out.err"
    st=$?
    cat "$out" "$out.err" >"$log" 2>/dev/null
    return $st
}

# pair_report NAME OUT WHAT: the header (host CPU and kernel, WHAT, the time), guest A's
# RESULT and "# cpu" lines, B's perftest RESULT lines, locus-vm's summary line.
pair_report() {
    echo "# $1: two QEMU guests (locus-vm --pair), Soft-RoCE rxe1; host $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), kernel $(uname -r); $3; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    grep -E '^\[A\] (RESULT|# cpu)' "$2" | sed 's/^\[A\] //'
    grep '^\[B\] RESULT tool=ib_' "$2" | sed 's/^\[B\] //'
    tail -n 1 "$2.err" | sed 's/^/# /'
}

# For the callers' awk ratio programs: val(line, key), the value of key=value in line.
PAIR_AWK_VAL='
    function val(line, key,   n, f, i, kv) {
        n = split(line, f, " ")
        for (i = 1; i <= n; i++) { split(f[i], kv, "="); if (kv[1] == key) return kv[2] }
        return ""
    }'
