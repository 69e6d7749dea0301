#!/usr/bin/env python3
"""Same-run A/B of two locus builds on the shm, reg and copy benchmarks.

    python3 research/ab_builds.py OLD_BUILD NEW_BUILD [--rounds 7]

Each round runs every benchmark once with each build, in alternating order,
so load changes fall on both alike; prints the median over rounds of each
figure for both builds and new/old. Used for issue #12 (the restructuring
must not regress: before = 5ce1910)."""
import argparse, re, statistics, subprocess, sys

def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return r.stdout

def shm(build, what, sizes, col):
    out = run([f"{build}/bin/locus", "run", "-n", "2", "--bind", "core", "--",
               f"{build}/bin/locus", "bench", what, "--sizes", sizes, "--reps", "5"])
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[0].isdigit():
            res[f"{what} {f[0]} B " + ("us" if col == 1 else "MB/s" if col == 2 else "msg/s")] = float(f[col])
    return res

def regcache(build):
    out = run([f"{build}/bin/locus", "bench", "regcache", "--no-ucx", "--reps", "101"])
    res = {}
    for line in out.splitlines():
        m = re.match(r"\s*(same|hit100|hit10k|below|above|above-rnd|adjacent)\s+([\d.]+)\s", line)
        if m:
            res[f"regcache {m.group(1)} ns/op"] = float(m.group(2))
        m = re.search(r"threads locus\s+all .*2 threads\s+([\d.]+) Mops/s", line)
        if m:
            res["regcache 2 threads Mops/s"] = float(m.group(1))
    return res

def copy(build):
    out = run([f"{build}/bin/locus", "bench", "copy", "--sizes", "4K,1M,16M,64M", "--no-kernels",
               "--no-pollution", "--reps", "5"])
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 6 and re.match(r"^\d+[KM]?$", f[0]):
            res[f"copy {f[0]} selector GB/s"] = float(f[2])
            res[f"copy {f[0]} glibc GB/s"] = float(f[1])
    return res

def one(build):
    r = {}
    r.update(shm(build, "pingpong", "8,1K,64K,1M", 1))
    r.update(shm(build, "bw", "64K,1M,4M", 2))
    r.update(shm(build, "msgrate", "8,128,1K", 3))
    r.update(regcache(build))
    r.update(copy(build))
    return r

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old"); ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    data = {"old": {}, "new": {}}
    for i in range(a.rounds):
        order = [("old", a.old), ("new", a.new)] if i % 2 == 0 else [("new", a.new), ("old", a.old)]
        for name, b in order:
            for k, v in one(b).items():
                data[name].setdefault(k, []).append(v)
        print(f"round {i + 1}/{a.rounds} done", file=sys.stderr)
    print(f"{'figure':36s} {'old':>12s} {'new':>12s} {'new/old':>8s}")
    for k in data["old"]:
        if k not in data["new"]:
            continue
        o, n = statistics.median(data["old"][k]), statistics.median(data["new"][k])
        print(f"{k:36s} {o:12.3f} {n:12.3f} {n / o if o else float('nan'):8.3f}")

if __name__ == "__main__":
    main()
