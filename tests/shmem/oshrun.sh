#!/bin/sh
# locus-oshrun and the spec-named directory (build/osh: oshcc, oshc++, oshCC,
# oshcxx, oshrun): an OpenSHMEM program built with `oshcc` and run with
# `oshrun -np N` from that directory on PATH; the runner options scripts
# written for Open MPI's oshrun pass (binding, -x, hosts of this node,
# -wdir, --report-bindings, the accepted no-ops); the exit status passed on;
# and every bad option a usage error (status 2) that names it.
# usage: oshrun.sh <build dir> <tests/shmem/progs/setup.c>
set -u
b=$1 src=$2
osh=$b/osh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PATH=$osh:$PATH
export PATH
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect_out NAME EXPECTED CMD...: stdout of CMD (sorted) must be EXPECTED
expect_out() {
    name=$1 want=$2
    shift 2
    got=$(timeout 120 "$@" 2>"$tmp/err" | sort)
    if [ "$got" = "$want" ]; then ok; else bad "$name: got [$got], want [$want]; stderr: $(cat "$tmp/err")"; fi
}
# expect_usage NAME PATTERN ARGS...: status 2 and PATTERN in stderr
expect_usage() {
    name=$1 pat=$2
    shift 2
    timeout 60 oshrun "$@" >"$tmp/out" 2>"$tmp/err"
    st=$?
    if [ $st = 2 ] && grep -q -- "$pat" "$tmp/err"; then ok; else
        bad "$name: status $st, stderr [$(cat "$tmp/err")], want 2 and '$pat'"; fi
}

# the spec's names resolve to locus's wrappers
[ "$(command -v oshcc)" = "$osh/oshcc" ] && [ "$(command -v oshrun)" = "$osh/oshrun" ] && ok ||
    bad "oshcc/oshrun on PATH are not $osh's"
case $(oshcc -show x.c) in *-llocus_shmem*) ok ;; *) bad "oshcc -show: $(oshcc -show x.c)" ;; esac
for w in oshc++ oshCC oshcxx; do
    case $($w -show x.cc) in c++\ *-llocus_shmem*) ok ;; *) bad "$w -show: $($w -show x.cc)" ;; esac
done

# an OpenSHMEM program built by oshcc, run by oshrun -np N (N = 1..3)
if oshcc -O1 -I"$(dirname "$src")" "$src" -o "$tmp/setup" -lpthread 2>"$tmp/err"; then
    for n in 1 3; do
        out=$(timeout 120 oshrun -np "$n" "$tmp/setup" 2>&1)
        st=$?
        if [ $st = 0 ] && [ "$(echo "$out" | tail -n 1)" = done ] && ! echo "$out" | grep -q FAIL; then ok; else
            bad "oshrun -np $n setup: status $st: $out"; fi
    done
else
    bad "oshcc could not build setup.c: $(cat "$tmp/err")"
fi

pe='echo "$LOCUS_RANK/$LOCUS_SIZE"'
expect_out "-np 3" "$(printf '0/3\n1/3\n2/3')" oshrun -np 3 sh -c "$pe"
expect_out "-n 2" "$(printf '0/2\n1/2')" oshrun -n 2 sh -c "$pe"
expect_out "--np=2" "$(printf '0/2\n1/2')" oshrun --np=2 sh -c "$pe"
expect_out "-N 2 (one node)" "$(printf '0/2\n1/2')" oshrun -N 2 sh -c "$pe"
# no count: the CPUs this command may use (mpirun's slots)
cpus=$(nproc)
expect_out "default count" "$cpus" sh -c "oshrun sh -c 'echo \$LOCUS_SIZE' | sort -u"
# -x VAR=VALUE sets, -x VAR passes the value this shell has
T_OSH_B=from-shell
export T_OSH_B
expect_out "-x" "$(printf 'a=1 b=from-shell\na=1 b=from-shell')" \
    oshrun -x T_OSH_A=1 -x T_OSH_B -np 2 sh -c 'echo "a=$T_OSH_A b=$T_OSH_B"'
# binding: core gives each PE one cpu, none leaves the whole set
expect_out "--bind-to core" "$(printf '1\n1')" oshrun --bind-to core -np 2 sh -c 'nproc'
expect_out "--bind-to none" "$(printf '%s\n%s' "$cpus" "$cpus")" oshrun --bind-to none -np 2 sh -c 'nproc'
# what Open MPI scripts pass and means nothing more here; hosts of this node
expect_out "no-op options" "$(printf '0/2\n1/2')" oshrun --oversubscribe --allow-run-as-root --map-by core \
    -q -H "localhost:2,$(uname -n)" --host 127.0.0.1 -np 2 sh -c "$pe"
printf '# hosts\nlocalhost slots=2\n\n%s\n' "$(uname -n)" >"$tmp/hosts"
expect_out "--hostfile of this node" "0/1" oshrun --hostfile "$tmp/hosts" -np 1 sh -c "$pe"
# --mca: ignored with a note (Open MPI's parameters)
out=$(timeout 60 oshrun --mca spml ucx -np 1 true 2>&1)
case $out in *"ignoring --mca spml ucx"*) ok ;; *) bad "--mca: [$out]" ;; esac
mkdir "$tmp/dir with space"
expect_out "-wdir" "$(cd "$tmp/dir with space" && pwd)" oshrun -wdir "$tmp/dir with space" -np 1 pwd
# --report-bindings: each PE names its cpus on stderr, the program still runs
out=$(timeout 60 oshrun --report-bindings --bind-to core -np 2 sh -c "$pe" 2>&1)
n=$(echo "$out" | grep -c "PE [01] may run on cpus [0-9]")
if [ "$n" = 2 ] && echo "$out" | grep -q '^1/2$'; then ok; else bad "--report-bindings: [$out]"; fi
# the program's exit status comes back
timeout 60 oshrun -np 2 sh -c 'exit 3' 2>/dev/null
st=$?
[ $st = 3 ] && ok || bad "exit status: $st, want 3"
# arguments after the program are the program's, options included
expect_out "program arguments" "$(printf -- '-np 9 --host x\n-np 9 --host x')" \
    oshrun -np 2 sh -c 'echo "$*"' sh -np 9 --host x

# bad input: status 2 and a message naming the mistake
expect_usage "-np 0" "-np '0'" -np 0 true
expect_usage "-np abc" "-np 'abc'" -np abc true
expect_usage "-np missing value" "-np needs a value" -np
expect_usage "no program" "missing program" -np 2
expect_usage "unknown option" "unknown option '--frobnicate'" --frobnicate -np 2 true
expect_usage "remote host" "host 'node-that-is-not-here' is not this node" --host node-that-is-not-here -np 2 true
expect_usage "remote host in a hostfile" "is not this node" --hostfile /dev/null -H otherbox:4 -np 1 true
expect_usage "unreadable hostfile" "cannot read" --hostfile "$tmp/none" -np 1 true
expect_usage "-np and -N disagree" "must agree" -np 2 -N 3 true
expect_usage "--bind-to socket" "expected core, hwthread" --bind-to socket -np 1 true
expect_usage "-x bad name" "expected VAR or VAR=VALUE" -x 1BAD=2 -np 1 true
expect_usage "-wdir missing" "no such directory" -wdir "$tmp/none" -np 1 true
expect_usage "--bind bad value (locus run's)" "--bind" --bind sideways -np 1 true

echo "oshrun: $passes passed, $fails failed"
[ $fails = 0 ]
