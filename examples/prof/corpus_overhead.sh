#!/bin/sh
# Overhead of `locus profile` at default settings on programs of the corpus
# (tests/unit/test_prof_corpus.cc), interleaved plain/profiled runs, medians
# of wall time (includes the profiler's start-up and analysis) and of the CPU
# time of the whole run (user+sys of the program, and of the profiler when
# profiled). docs/PERFORMANCE.md, "prof: overhead on the corpus".
#   examples/prof/corpus_overhead.sh BUILD_DIR [ROUNDS]
# The input is the corpus's: 4 MiB of generated words (xz, bzip2), 200 000
# numbers (sort); the numpy run is the corpus's python_numpy line.
b=${1:-build}; rounds=${2:-7}
d=$(mktemp -d /tmp/corpus_overhead.XXXXXX)
trap 'rm -rf "$d"' EXIT
/usr/bin/python3 - "$d" <<'PY'
import sys
d = sys.argv[1]
x, m = 88172645463325252, (1 << 64) - 1
syll = ["lo", "cus", "nu", "ma", "page", "node", "ran", "tou", "ch", "mem"]
def nxt(x):
    x ^= (x << 13) & m; x ^= x >> 7; x ^= (x << 17) & m
    return x
text = []
n = 0
while n < (4 << 20):
    x = nxt(x); w = syll[x % 10]
    sep = "" if (x >> 8) % 7 else (" " if (x >> 12) % 5 else "\n")
    text.append(w + sep); n += len(w) + len(sep)
open(f"{d}/text", "w").write("".join(text))
nums = []
for i in range(200000):
    x = nxt(x); nums.append(str(x % 1000000007))
open(f"{d}/numbers", "w").write("\n".join(nums) + "\n")
PY
now() { date +%s%N; }
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cpu() { awk '{print $14 + $15 + $16 + $17}' /proc/$1/stat; } # utime stime cutime cstime (ticks)
hz=$(getconf CLK_TCK)
numpy='import numpy as np; r = np.random.default_rng(7); a = r.integers(0, 1000, size=4_000_000); a.sort(); c = np.cumsum(a); m = np.arange(1 << 20, dtype=np.int64).reshape(1024, 1024); print(int(c[-1]), int(a[123456]), int((m @ m.T).trace() % 1000003), np.__version__)'
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); kernel $(uname -r); load $(cut -d' ' -f1-3 /proc/loadavg)"
for prog in xz bzip2 python_numpy sort; do
  case $prog in
    xz) set -- /usr/bin/xz -6 -c "$d/text" ;;
    bzip2) set -- /bin/bzip2 -9 -c "$d/text" ;;
    python_numpy) set -- /usr/bin/python3 -c "$numpy" ;;
    sort) set -- /usr/bin/sort -n "$d/numbers" ;;
  esac
  [ -x "$1" ] || { echo "$prog: $1 not installed: skipped"; continue; }
  : > "$d/w0"; : > "$d/w1"; : > "$d/c0"; : > "$d/c1"
  for r in $(seq "$rounds"); do
    t0=$(now); sh -c '"$@" > /dev/null; cat /proc/$$/stat > '"$d/st0" sh "$@"; t1=$(now)
    sh -c '"$@" > /dev/null 2>&1; cat /proc/$$/stat > '"$d/st1" sh "$b/bin/locus" profile -q --no-json -- "$@"; t2=$(now)
    echo $(( (t1 - t0) / 1000000 )) >> "$d/w0"; echo $(( (t2 - t1) / 1000000 )) >> "$d/w1"
    awk -v hz="$hz" '{print ($16 + $17) * 1000 / hz}' "$d/st0" >> "$d/c0"
    awk -v hz="$hz" '{print ($16 + $17) * 1000 / hz}' "$d/st1" >> "$d/c1"
  done
  w0=$(med < "$d/w0"); w1=$(med < "$d/w1"); c0=$(med < "$d/c0"); c1=$(med < "$d/c1")
  echo "$prog: wall plain ${w0} ms, profiled ${w1} ms ($(awk "BEGIN{printf \"%+.1f\", ($w1-$w0)*100/$w0}") %);" \
       "cpu plain ${c0} ms, profiled ${c1} ms ($(awk "BEGIN{printf \"%+.1f\", ($c1-$c0)*100/($c0 ? $c0 : 1)}") %)"
done
