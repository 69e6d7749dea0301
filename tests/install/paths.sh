#!/usr/bin/env bash
# A checkout under a path with a space ("/srv/with space/x") builds and runs:
# the source is copied into a temporary directory whose name holds a space, a
# subset is configured and built there (the CLI and the profiler's shim, one
# rma example on liblocus.so, liblocus_shmem for locus-oshcc), and real
# commands run from it: locus config, locus run -n 2 (true, then the example
# through its RPATH), locus profile (the shim must load: LD_PRELOAD splits at
# spaces) and locus-oshcc from the build tree.
#   tests/install/paths.sh SOURCE_DIR
# Exit 77 (skipped) when the directories cannot be made.
set -euo pipefail
src=$(cd "$1" && pwd)
t0=$(date +%s)
fail() { echo "FAIL: $*"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/locus paths.XXXXXX" 2>/dev/null) ||
  { echo "SKIP: cannot create a directory with a space in its name under ${TMPDIR:-/tmp}"; exit 77; }
trap 'rm -rf "$tmp"' EXIT
s="$tmp/src tree"
b="$tmp/build tree"
mkdir -p "$s" 2>/dev/null || { echo "SKIP: cannot create '$s'"; exit 77; }

# The source as it is, local changes included: the files git knows and the new
# ones it does not ignore; without git, everything but .git, build* and .venv.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$src" ls-files -z --cached --others --exclude-standard |
    tar -C "$src" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$s" -xf -
else
  tar -C "$src" --exclude=./.git --exclude='./build*' --exclude=./.venv -cf - . | tar -C "$s" -xf -
fi
[ -f "$s/CMakeLists.txt" ] || fail "copying $src to '$s'"

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$s" -B "$b" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$tmp/configure.log" 2>&1 ||
  { tail -n 30 "$tmp/configure.log"; fail "configure in '$b'"; }
cmake --build "$b" -j 2 --target locus_cli locus_prof_preload rma_histogram numa_spawn locus_shmem locus_hooks \
  >"$tmp/build.log" 2>&1 || { tail -n 30 "$tmp/build.log"; fail "build in '$b'"; }
t1=$(date +%s)
L="$b/bin/locus"
cd "$tmp"

# 1. every tunable and where it came from
out=$("$L" config 2>&1) || fail "locus config: $out"
echo "$out" | grep -q LOCUS_ || fail "locus config printed no tunable: $out"

# 2. the launcher, then an example on liblocus.so found through its RPATH (a
# directory with a space) over the shared-memory transport
out=$("$L" run -n 2 -- true 2>&1) || fail "locus run -n 2 -- true: $out"
out=$(LOCUS_RMA_HEAP_SIZE=16M "$L" run -n 2 -- "$b/examples/rma_histogram" 20000 1000 2>&1) ||
  fail "locus run -n 2 -- rma_histogram: $out"
echo "$out" | grep -Eq "rma_histogram: 2 processes, .*: ok" || fail "rma_histogram did not say ok: $out"

# 3. the profiler: the shim sits under the space and must load anyway
prof="$tmp/a profile.json"
rc=0
"$L" profile -q -o "$prof" -- "$b/examples/numa_spawn" >"$tmp/spawn.out" 2>"$tmp/spawn.err" || rc=$?
[ "$rc" = 3 ] || fail "locus profile numa_spawn: status $rc, expected the program's 3: $(cat "$tmp/spawn.err")"
grep -q '"shim": {"status": "ok"' "$prof" || fail "the preload shim did not load: $(grep -o '"shim": {[^}]*' "$prof")"
grep -q '"name": "buf"' "$prof" || fail "no allocation named buf in the profile (the shim's log)"

# 4. locus-oshcc from the build tree: its include and library directories hold the space
"$b/bin/locus-oshcc" -O1 "$s/examples/shmem/isort.c" -o "$tmp/isort" >"$tmp/oshcc.log" 2>&1 ||
  { cat "$tmp/oshcc.log"; fail "locus-oshcc in '$b'"; }
out=$("$L" run -n 2 -- "$tmp/isort" 20000 2 2>&1) || fail "locus run -n 2 -- isort: $out"
echo "$out" | grep -q "check=ok" || fail "isort (built by locus-oshcc) did not check ok: $out"

echo "paths: built in '$b' in $((t1 - t0)) s; locus config, locus run -n 2, locus profile (shim loaded)" \
     "and locus-oshcc from there: ok ($(($(date +%s) - t0)) s)"
