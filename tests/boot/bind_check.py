#!/usr/bin/env python3
"""locus run's CPU binding as the ranks see it (/proc/self/status), for
--bind auto (the default), none and core, at 1 .. CPUs+1 ranks, and inside a
narrower affinity (taskset): auto gives each rank a non-empty block of its own
whose union is every CPU locus run may use while the ranks fit, and leaves
them unbound when they do not; none never binds; core one CPU each.
   bind_check.py LOCUS_BIN"""
import os
import subprocess
import sys

locus = sys.argv[1]
fails = []


def cpus(text):
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return frozenset(out)


def masks(n, opts=(), prefix=()):
    cmd = list(prefix) + [locus, "run", "-n", str(n), *opts, "--", "sh", "-c",
                          'echo "$LOCUS_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"']
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if res.returncode:
        fails.append(f"{' '.join(cmd)}: exit {res.returncode}: {res.stderr.strip()}")
        return {}
    got = dict(line.split() for line in res.stdout.splitlines())
    return {int(r): cpus(m) for r, m in got.items()}


def check(what, cond):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def check_auto(avail, prefix=()):
    for n in range(1, len(avail) + 2):
        m = masks(n, prefix=prefix)
        if len(m) != n:
            check(f"auto, {n} ranks: every rank answered ({len(m)})", False)
            continue
        sets = list(m.values())
        if n <= len(avail):
            disjoint = sum(len(s) for s in sets) == len(frozenset().union(*sets))
            check(f"auto, {n} ranks on {sorted(avail)}: blocks {[sorted(m[r]) for r in range(n)]} non-empty, "
                  "disjoint, covering", all(sets) and disjoint and frozenset().union(*sets) == avail)
            sizes = [len(s) for s in sets]
            check(f"auto, {n} ranks: block sizes {sizes} differ by at most one", max(sizes) - min(sizes) <= 1)
        else:
            check(f"auto, {n} ranks > {len(avail)} cpus: unbound", all(s == avail for s in sets))


avail = frozenset(os.sched_getaffinity(0))
check_auto(avail)
m = masks(2, ["--bind", "none"])
check("--bind none: both ranks keep every cpu", len(m) == 2 and all(s == avail for s in m.values()))
m = masks(2, ["--bind", "core"])
check("--bind core: one cpu each", len(m) == 2 and all(len(s) == 1 for s in m.values()))
if len(avail) >= 2:  # locus run inside a narrower affinity binds within it
    sub = frozenset(sorted(avail)[1:])
    check_auto(sub, prefix=["taskset", "-c", ",".join(map(str, sorted(sub)))])
for f in fails:
    print("FAILED:", f, file=sys.stderr)
sys.exit(1 if fails else 0)
