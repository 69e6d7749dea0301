"""Plots of locus benchmark records (schema locus-bench/1, docs/bench-schema.json).

    locus plot RESULT.json... -o out.png|svg [--metric M]... [--series REGEX] [--title T]
    python -m locus.plot RESULT.json... -o out.svg

One panel per metric of the records (bandwidth, latency, fault-in, time per op,
...), each drawn as people expect it: a numeric x in bytes on a log scale
(latency then log-log), a categorical x (workload, policy, kernel) as grouped
bars. Peers (glibc memcpy, ucs_rcache, MPI libraries, baselines) are dashed or
hatched; highlighted series (the selector, glibc) drawn thick. Several files
are overlaid: from several hosts, every series is named with its host (AMD vs
Intel); runs of one host merge into one curve (heap runs at several sizes),
unless two runs measured the same point, then each run is named by its file.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence

from locus.bench import RecordError, host_key, host_label, load

TIME_UNITS = {"s", "ms", "us", "µs", "ns", "ns/op", "us/op"}
HOST_MARKERS = ["o", "s", "^", "D", "v", "P"]
HOST_LINES = ["-", ":", "-.", (0, (5, 1))]


class PlotError(Exception):
    """Bad arguments or records: the message is for the user."""


# ---------- from records to panels ----------

def _run_tags(records: Sequence[Dict[str, Any]], names: Sequence[str]) -> List[str]:
    """What distinguishes each record's series in the legend: the host when the
    records come from several hosts, and the file when runs of one host measured
    the same point (otherwise runs of one host merge into one curve)."""
    hosts = OrderedDict((host_key(r["host"]), host_label(r["host"])) for r in records)
    tags = [hosts[host_key(r["host"])] if len(hosts) > 1 else "" for r in records]
    seen: Dict[tuple, int] = {}
    clash = set()
    for i, r in enumerate(records):
        for row in r["rows"] + r["peers"]:
            key = (tags[i], r["benchmark"], row["metric"], row["series"], row.get("stat"), row["x"])
            if key in seen and seen[key] != i:
                clash.update({seen[key], i})
            seen.setdefault(key, i)
    for i in sorted(clash):
        stem = os.path.splitext(os.path.basename(names[i]))[0]
        tags[i] = f"{tags[i]}, {stem}" if tags[i] else stem
    return tags


def _series_name(row: Dict[str, Any], multi_stat: bool) -> str:
    return f"{row['series']} ({row['stat']})" if multi_stat and row.get("stat") else row["series"]


def panels(records: Sequence[Dict[str, Any]], names: Sequence[str] | None = None,
           metrics: Sequence[str] | None = None, series: str | None = None) -> List[Dict[str, Any]]:
    """The panels to draw: one per (benchmark, metric), in order of appearance.

    Each panel: benchmark, metric, x_unit, y_unit, categorical (bool), and
    series: an ordered dict label -> {name, tag, peer, highlight, points [(x, y)]}."""
    names = list(names) if names else [f"record {i + 1}" for i in range(len(records))]
    tags = _run_tags(records, names)
    want = re.compile(series) if series else None
    out: "OrderedDict[tuple, Dict[str, Any]]" = OrderedDict()
    for rec, tag in zip(records, tags):
        stats: Dict[tuple, set] = {}
        for row in rec["rows"] + rec["peers"]:
            stats.setdefault((row["metric"], row["series"]), set()).add(row.get("stat"))
        for peer, rows in ((False, rec["rows"]), (True, rec["peers"])):
            for row in rows:
                if metrics and row["metric"] not in metrics:
                    continue
                name = _series_name(row, len(stats[(row["metric"], row["series"])]) > 1)
                if want and not want.search(name):
                    continue
                key = (rec["benchmark"], row["metric"])
                p = out.setdefault(key, {"benchmark": rec["benchmark"], "metric": row["metric"],
                                         "x_unit": row["x_unit"], "y_unit": row["y_unit"],
                                         "categorical": isinstance(row["x"], str),
                                         "series": OrderedDict()})
                if row["y_unit"] != p["y_unit"]:
                    raise PlotError(f"metric {row['metric']!r} of {rec['benchmark']} has rows in "
                                    f"{p['y_unit']} and in {row['y_unit']}: one unit per metric")
                if isinstance(row["x"], str) != p["categorical"]:
                    raise PlotError(f"metric {row['metric']!r} of {rec['benchmark']} mixes numeric "
                                    "and categorical x")
                label = f"{name} — {tag}" if tag else name
                s = p["series"].setdefault(label, {"name": name, "tag": tag, "peer": peer,
                                                   "highlight": bool(row.get("highlight")),
                                                   "points": []})
                if row["y"] is not None:
                    s["points"].append((row["x"], row["y"]))
    if metrics:
        missing = [m for m in metrics if not any(k[1] == m for k in out)]
        if missing:
            have = sorted({row["metric"] for r in records for row in r["rows"] + r["peers"]})
            raise PlotError(f"no rows of metric {', '.join(map(repr, missing))}; "
                            f"the records have: {', '.join(have)}")
    result = [p for p in out.values() if p["series"]]
    if not result:
        raise PlotError("nothing to draw: no rows" + (" match --series" if series else ""))
    return result


# ---------- drawing ----------

def _size_text(v: float) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if v >= (1 << shift) and v % (1 << shift) == 0:
            return f"{int(v) >> shift}{unit}"
    return f"{v:g}"


def _axis_label(unit: str) -> str:
    return "size (bytes)" if unit == "bytes" else unit


def _colors(panel: Dict[str, Any]):
    """One colour per series name (the same kernel keeps its colour across hosts);
    highlighted peers (glibc) black."""
    import matplotlib

    names = list(OrderedDict((s["name"], 1) for s in panel["series"].values()))
    cmap = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"]
    colors, k = {}, 0
    for n in names:
        s = next(v for v in panel["series"].values() if v["name"] == n)
        if s["peer"] and s["highlight"]:
            colors[n] = "black"
        else:
            colors[n] = cmap(k % cmap.N)
            k += 1
    return colors


def _draw_lines(ax, panel, tags):
    colors = _colors(panel)
    xs_all = [x for s in panel["series"].values() for x, _ in s["points"] if x > 0]
    log_x = panel["x_unit"] == "bytes" and xs_all and max(xs_all) / min(xs_all) > 2
    for label, s in panel["series"].items():
        pts = sorted(p for p in s["points"] if p[0] > 0 or not log_x)  # 0 B has no place on a log axis
        if not pts:
            continue
        t = tags.index(s["tag"])
        style = "--" if s["peer"] else HOST_LINES[t % len(HOST_LINES)]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=style,
                marker=HOST_MARKERS[t % len(HOST_MARKERS)], markersize=4 if s["highlight"] else 3,
                linewidth=2.6 if s["highlight"] else 1.1, alpha=1.0 if s["highlight"] else 0.8,
                color=colors[s["name"]], label=label, zorder=3 if s["highlight"] else 2)
    if log_x:
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

        ax.set_xscale("log", base=2)
        lo, hi = min(xs_all), max(xs_all)
        e0, e1 = int(lo).bit_length() - 1, int(hi - 1).bit_length()
        step = max(1, -(-(e1 - e0) // 11))  # at most 12 ticks
        step = step + step % 2 if step > 1 else 1  # even exponents: 1K, 4K, 16K, ...
        ax.xaxis.set_major_locator(FixedLocator([2.0 ** e for e in range(e0 - e0 % step, e1 + 1, step)]))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _size_text(v)))
    ys = [y for s in panel["series"].values() for _, y in s["points"] if y > 0]
    if (log_x and panel["y_unit"] in TIME_UNITS) or (ys and max(ys) / min(ys) > 30):
        ax.set_yscale("log")  # latency against size: log-log; L1 and DRAM bandwidth on one axis


def _draw_bars(ax, panel, tags):
    import numpy as np

    colors = _colors(panel)
    cats = list(OrderedDict((x, 1) for s in panel["series"].values() for x, _ in s["points"]))
    n = max(1, len(panel["series"]))
    width = 0.8 / n
    for i, (label, s) in enumerate(panel["series"].items()):
        vals = dict(s["points"])
        xs = np.arange(len(cats)) - 0.4 + width * (i + 0.5)
        t = tags.index(s["tag"])
        ax.bar(xs, [vals.get(c, np.nan) for c in cats], width=width * 0.95, label=label,
               color=colors[s["name"]], alpha=0.85 if t == 0 else 0.55,
               hatch="//" if s["peer"] else (None if t == 0 else ".."),
               edgecolor="black" if s["highlight"] else "white", linewidth=0.6)
    ys = [y for s in panel["series"].values() for _, y in s["points"] if y > 0]
    if ys and max(ys) / min(ys) > 50:  # 15 ns hits beside 4 us misses: both readable
        ax.set_yscale("log")
    elif all(y >= 0 for s in panel["series"].values() for _, y in s["points"]):
        ax.set_ylim(bottom=0)  # counts that are all 0 (no registrations on-node): no negative axis
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(cats, rotation=30 if max(len(str(c)) for c in cats) > 7 else 0,
                       ha="right" if max(len(str(c)) for c in cats) > 7 else "center")


def _title(records) -> str:
    benches = list(OrderedDict((r["benchmark"], 1) for r in records))
    hosts = list(OrderedDict((host_key(r["host"]), host_label(r["host"])) for r in records).values())
    dates = sorted(r["date"][:10] for r in records)
    when = dates[0] if dates[0] == dates[-1] else f"{dates[0]} – {dates[-1]}"
    return f"locus {', '.join(benches)}: {' vs '.join(hosts)} ({when})"


def draw(records: Sequence[Dict[str, Any]], out: str, names: Sequence[str] | None = None,
         metrics: Sequence[str] | None = None, series: str | None = None,
         title: str | None = None, dpi: int = 90) -> List[Dict[str, Any]]:
    """Draw the records into `out` (.png or .svg). Returns the panels drawn:
    [{benchmark, metric, x_unit, y_unit, categorical, labels: [series labels]}]."""
    ext = os.path.splitext(out)[1].lower()
    if ext not in (".png", ".svg"):
        raise PlotError(f"-o {out}: expected a file name ending in .png or .svg")
    ps = panels(records, names, metrics, series)
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: small, searchable
    matplotlib.rcParams["svg.hashsalt"] = "locus"  # the same input gives the same file
    import matplotlib.pyplot as plt

    tags = list(OrderedDict((s["tag"], 1) for p in ps for s in p["series"].values()))
    ncols = 1 if len(ps) == 1 else 2
    nrows = (len(ps) + ncols - 1) // ncols
    wide = any(len(p["series"]) > 8 for p in ps)
    fig, axes = plt.subplots(nrows, ncols, figsize=((8.2 if wide else 6.4) * ncols, 3.9 * nrows), squeeze=False)
    for ax, p in zip(axes.flat, ps):
        (_draw_bars if p["categorical"] else _draw_lines)(ax, p, tags)
        ax.set_title(p["metric"] if len({q["benchmark"] for q in ps}) == 1 else f"{p['benchmark']}: {p['metric']}",
                     fontsize=10)
        ax.set_xlabel(_axis_label(p["x_unit"]))
        ax.set_ylabel(f"{p['metric']} ({p['y_unit']})" if len(p["metric"]) < 24 else p["y_unit"])
        ax.grid(True, which="major", alpha=0.3)
        if len(p["series"]) > 8:  # beside the panel: inside it would hide the curves
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), framealpha=0.85)
        else:
            ax.legend(fontsize=8 if len(p["series"]) <= 6 else 7, framealpha=0.85)
    for ax in list(axes.flat)[len(ps):]:
        ax.set_visible(False)
    fig.suptitle(title or _title(records), fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=dpi, metadata={"Date": None} if ext == ".svg" else None)
    plt.close(fig)
    return [{k: p[k] for k in ("benchmark", "metric", "x_unit", "y_unit", "categorical")}
            | {"labels": list(p["series"])} for p in ps]


# ---------- command line ----------

def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main(argv: Optional[List[str]] = None, prog: str = "locus plot") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="The records: docs/bench-schema.json. Plots in docs/PERFORMANCE.md: "
                                        "scripts/plots.sh.")
    ap.add_argument("files", nargs="+", metavar="RESULT.json", help="records from --json of the benchmarks")
    ap.add_argument("-o", "--output", help="the image: a .png or .svg file")
    ap.add_argument("--metric", action="append", help="draw only this metric (repeatable)")
    ap.add_argument("--series", metavar="REGEX", help="draw only the series whose label matches")
    ap.add_argument("--title", help="the figure's title (default: benchmark, hosts, dates)")
    ap.add_argument("--dpi", type=int, default=90, help="PNG resolution (default 90)")
    ap.add_argument("--check", action="store_true", help="validate the records and print what they hold")
    a = ap.parse_args(argv)
    missing = [m for m in (("jsonschema",) if a.check else ("jsonschema", "matplotlib")) if not _importable(m)]
    if missing:
        print(f"{prog}: {' and '.join(missing)} not installed for {sys.executable}: run scripts/deps.sh "
              "(the project's .venv), or pip install matplotlib jsonschema, or set LOCUS_PYTHON to a "
              "Python that has them", file=sys.stderr)
        return 1
    try:
        records = [load(f) for f in a.files]
        if a.check:
            from locus.bench import describe

            for f, r in zip(a.files, records):
                print(f"{f}: ok ({describe(r)})")
            return 0
        if not a.output:
            raise PlotError("-o FILE.png|FILE.svg is required (or --check)")
        drawn = draw(records, a.output, a.files, a.metric, a.series, a.title, a.dpi)
    except (RecordError, PlotError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    print(f"{a.output}: {len(drawn)} panel(s): " + "; ".join(
        f"{p['metric']} ({len(p['labels'])} series)" for p in drawn))
    return 0


if __name__ == "__main__":
    sys.exit(main(prog=os.environ.get("LOCUS_PLOT_PROG", "python -m locus.plot")))
