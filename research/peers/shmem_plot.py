#!/usr/bin/env python3
"""Plots of one shmem_perf_all.sh run (locus beside Open MPI, same run).

    .venv/bin/python research/peers/shmem_plot.py RESULTS.txt OUTDIR

Writes OUTDIR/shmem_lat.png (put ping-pong and blocking get latency by
size), OUTDIR/shmem_bw.png (put bandwidth by size) — both for 2 and 4 PEs —
and OUTDIR/shmem_heap.png (time to a usable heap, launch to exit, medians of
the runs per size and implementation). The host line of the results file is
the title.
"""
import collections
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESULT = re.compile(r"RESULT impl=(\S+) pes=(\d+) test=(\S+) size=(\d+) value=(\S+) unit=(\S+)")
HEAP = re.compile(r"HEAP impl=(\S+) size=(\S+) mode=(\S+) run=\d+ .*WALL ([0-9.]+)")
COLORS = {"locus": "tab:blue", "openmpi": "tab:red", "locus-huge2m": "tab:cyan"}


def read(path):
    micro = collections.defaultdict(dict)  # (impl, pes, test) -> {size: value}
    heap = collections.defaultdict(list)   # (impl, size, mode) -> [wall]
    host = ""
    for line in open(path):
        if line.startswith("# ") and "host:" in line and not host:
            host = line.split("host:", 1)[1].strip()
        m = RESULT.match(line)
        if m:
            impl, pes, test, size, value, _ = m.groups()
            micro[(impl, int(pes), test)][int(size)] = float(value)
        m = HEAP.search(line)
        if m:
            impl, size, mode, wall = m.groups()
            heap[(impl, size, mode)].append(float(wall))
    return micro, heap, host


def curves(ax, micro, tests, pes, ylabel):
    for (impl, p, test), v in sorted(micro.items()):
        if p != pes or test not in tests or len(v) < 2:
            continue
        xs = sorted(v)
        style = "-" if test == tests[0] else "--"
        ax.plot(xs, [v[x] for x in xs], style, marker=".", color=COLORS.get(impl, "gray"),
                label=f"{impl} {test}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{pes} PEs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def main():
    micro, heap, host = read(sys.argv[1])
    out = sys.argv[2]
    for name, tests, ylabel in (("lat", ["put_lat", "get_lat"], "µs (one-way put ping-pong; blocking get)"),
                                ("bw", ["put_bw"], "MB/s (window of 64 putmem_nbi + quiet)")):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, pes in zip(axes, (2, 4)):
            curves(ax, micro, tests, pes, ylabel)
        fig.suptitle(f"OpenSHMEM {name}: locus vs Open MPI 4.1.4, same run — {host}", fontsize=9)
        fig.tight_layout()
        fig.savefig(f"{out}/shmem_{name}.png", dpi=90)
    sizes = sorted({k[1] for k in heap}, key=lambda s: float(s[:-1]) * (1024 if s.endswith("G") else 1))
    impls = [i for i in ("locus", "locus-huge2m", "openmpi") if any(k[0] == i for k in heap)]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / max(len(impls), 1)
    for j, impl in enumerate(impls):
        ys = [statistics.median(heap[(impl, s, "full")]) if heap.get((impl, s, "full")) else 0 for s in sizes]
        ax.bar([i + j * width for i in range(len(sizes))], ys, width, color=COLORS.get(impl, "gray"), label=impl)
    ax.set_xticks([i + width * (len(impls) - 1) / 2 for i in range(len(sizes))])
    ax.set_xticklabels([f"{s} per PE" for s in sizes])
    ax.set_ylabel("s, launch to exit (median)")
    ax.set_title(f"time to a usable symmetric heap, 2 PEs: init, malloc, write every byte, finalize\n{host}",
                 fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(f"{out}/shmem_heap.png", dpi=90)


if __name__ == "__main__":
    main()
