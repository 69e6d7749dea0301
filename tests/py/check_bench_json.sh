#!/bin/sh
# ctest bench_json_schema: the --json of every converted benchmark validates
# against docs/bench-schema.json (jsonschema from the project's .venv), and
# `locus plot` draws them. Usage: check_bench_json.sh path/to/locus SOURCE_DIR
# Exit 77 (skipped) without the .venv (scripts/deps.sh makes it).
set -u
locus="$1"
src="$2"
py="$src/.venv/bin/python"
if ! "$py" -c 'import jsonschema, matplotlib' 2>/dev/null; then
  echo "SKIP: $py with jsonschema and matplotlib not found (run scripts/deps.sh)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() { # name, args...
  name=$1; shift
  "$locus" "$@" --json >"$dir/$name.json" 2>"$dir/$name.err" || fail "locus $*: exit $?: $(cat "$dir/$name.err")"
}
run copy bench copy --sizes 4K,64K --reps 1 --no-pollution
run heap heap --size 32M --compare
run stream stream --size 24M --reps 2
run regcache bench regcache --reps 3 --ops 100 --thread-ops 2000
for b in pingpong bw msgrate; do run "$b" run -n 2 -- "$locus" bench "$b" --sizes 8,64K --reps 1; done
XDG_CACHE_HOME="$dir" run tune tune --reps 1 --dry-run --only copy
PYTHONPATH="$src/python" "$py" -m locus.bench "$dir"/*.json || fail "a record does not validate"
"$locus" plot "$dir/copy.json" "$dir/heap.json" -o "$dir/p.svg" || fail "locus plot failed"
grep -q "glibc memcpy" "$dir/p.svg" || fail "the plot lacks the glibc series"
echo ok
