#!/usr/bin/env bash
# Build the fuzz harnesses with clang (ASan + UBSan + libFuzzer) in their own
# build tree and run each from its seed corpus for FUZZ_SECONDS (default 30).
#   tests/fuzz/run.sh [BUILD_DIR] [HARNESS...]
# Prints, per harness, the executions, coverage (libFuzzer's cov: edges, ft:
# features) and corpus size; exits 1 if
# any harness crashed (the reproducer is kept in BUILD_DIR/crashes/ and
# should become a regression test: copy it into tests/fuzz/regress/<harness>/),
# 77 if clang or its fuzzer runtime is missing.
set -uo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$src/build/fuzz-build}"
mkdir -p "$out" && out="$(cd "$out" && pwd)" # the harnesses run from $out/crashes
shift || true
secs="${FUZZ_SECONDS:-30}"
if ! command -v clang >/dev/null; then
  echo "fuzz: SKIP: clang not installed (scripts/deps.sh installs clang and libclang-rt-14-dev)"
  exit 77
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){return 0;}' |
     clang -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "fuzz: SKIP: clang has no libFuzzer runtime (package libclang-rt-14-dev)"
  exit 77
fi
cmake -S "$src" -B "$out" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCUS_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null || exit 1
cmake --build "$out" --target fuzzers >/dev/null || { echo "fuzz: build failed"; exit 1; }
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in "$src"/tests/fuzz/fuzz_*.c; do harnesses+=("$(basename "$f" .c | sed 's/^fuzz_//')"); done
fi
mkdir -p "$out/crashes"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
rc=0
printf '%-12s %10s %8s %8s %8s %s\n' harness execs cov ft corpus result
for h in "${harnesses[@]}"; do
  work="$out/corpus/$h"
  mkdir -p "$work"
  # regression inputs first: every crash found once is replayed each run
  regress=()
  [ -d "$src/tests/fuzz/regress/$h" ] && regress=("$src/tests/fuzz/regress/$h")
  if [ ${#regress[@]} -gt 0 ] && ! "$out/fuzz/fuzz_$h" "${regress[0]}"/* >"$out/$h.regress.log" 2>&1; then
    echo "fuzz: $h: a regression input fails again:"; tail -20 "$out/$h.regress.log"; rc=1; continue
  fi
  log="$out/$h.log"
  (cd "$out/crashes" && "$out/fuzz/fuzz_$h" -max_total_time="$secs" -print_final_stats=1 \
     -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/crashes/$h-" \
     "$work" "$src/tests/fuzz/corpus/$h") >"$log" 2>&1
  status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  n=$(ls "$work" | wc -l)
  if [ $status -ne 0 ]; then
    printf '%-12s %10s %8s %8s %8s %s\n' "$h" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$n" "CRASH (see $log)"
    grep -m5 -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log"
    rc=1
  else
    printf '%-12s %10s %8s %8s %8s %s\n' "$h" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$n" ok
  fi
done
exit $rc
