#!/bin/sh
# locus tune: measures, prints before/after, writes a tune file that the
# library then reads (locus config names it as the source); bad options fail.
set -u
locus="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
out=$("$locus" tune --reps 1 -o "$dir/t.conf" 2>&1) || fail "tune exited $?: $out"
echo "$out"
echo "$out" | grep -q "LOCUS_COPY_NT_MIN" || fail "no copy line"
grep -q '^host=' "$dir/t.conf" || fail "no host line"
grep -q '^LOCUS_COPY_NT_MIN=' "$dir/t.conf" || fail "no LOCUS_COPY_NT_MIN in the file"
# shm: every value written; 3 rounds (--reps 1) are too few to choose: the defaults
for v in SPLIT=32K SPLIT_PIECE=128K REF=1K FBOX=0; do
  grep -q "^LOCUS_SHM_$v\$" "$dir/t.conf" || fail "LOCUS_SHM_$v not in the file: $(cat "$dir/t.conf")"
done
echo "$out" | grep -q "LOCUS_SHM_SPLIT .* (default) kept" || fail "no shm verdict line"
echo "$out" | grep -q "3 rounds are too few" || fail "no word on too few rounds"
# the library runs with the file (shm reads its values at init)
LOCUS_TUNE_FILE="$dir/t.conf" "$locus" run -n 2 -- "$locus" bench pingpong --sizes 64K --reps 1 >/dev/null ||
  fail "shm with the tune file"
LOCUS_TUNE_FILE="$dir/t.conf" "$locus" config | grep -A1 "LOCUS_COPY_NT_MIN " | grep -q "tune file" ||
  fail "locus config does not name the tune file as the source"
LOCUS_TUNE_FILE="$dir/t.conf" "$locus" config --check >/dev/null || fail "the written file does not validate"
"$locus" tune --only nothing >/dev/null 2>&1; [ $? -eq 2 ] || fail "--only nothing: expected exit 2"
"$locus" tune --only shm,nothing 2>&1 | grep -q "expected a comma list of copy, heap, shm" ||
  fail "--only shm,nothing: the accepted parts are not named"
"$locus" tune --reps 0 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--reps 0: expected exit 2"
"$locus" tune --reps 1 --only heap --dry-run -o "$dir/none.conf" >/dev/null || fail "dry run failed"
[ ! -e "$dir/none.conf" ] || fail "--dry-run wrote a file"
echo "ok"
