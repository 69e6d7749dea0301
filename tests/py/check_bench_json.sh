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
# a small symmetric heap: the default 256 MiB costs seconds per handle on a
# loaded machine, and exchange makes one per mode
export LOCUS_RMA_HEAP_SIZE=8M
run rma run -n 2 -- "$locus" bench rma --sizes 8,4K --reps 1 --time 0.002 --window 4
run exchange run -n 2 -- "$locus" bench exchange --keys 4K --rounds 2 --live 2
unset LOCUS_RMA_HEAP_SIZE
XDG_CACHE_HOME="$dir" run tune tune --reps 1 --dry-run --only copy
PYTHONPATH="$src/python" "$py" -m locus.bench "$dir"/*.json || fail "a record does not validate"
# one plot (one Python start): copy's kernels and glibc, heap, rma's latency and
# bandwidth curves by size, exchange's bars per reg mode
"$locus" plot "$dir/copy.json" "$dir/heap.json" "$dir/rma.json" "$dir/exchange.json" -o "$dir/p.svg" ||
  fail "locus plot failed"
for want in "glibc memcpy" fetch-add put_nbi "key rate per rank" small; do
  grep -q "$want" "$dir/p.svg" || fail "the plot lacks '$want'"
done
echo ok
