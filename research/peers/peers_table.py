"""Parsing, aggregation and the markdown table of research/peers/compare.py.

Standard library only, so compare.py runs from the system python3, and the
parsers are tested on recorded outputs (research/tests/test_peers_compare.py)
without running the peers.

Units: latency one-way in microseconds, bandwidth in GB/s (1e9 B/s), message
rate in millions of messages per second. ucx_perftest prints "MB/s" that are
MiB/s (UCS_MBYTE = 2**20); parse_ucx_perftest converts.
"""

import json
import re
import statistics

# The cells of the table: (kind, size in bytes). kind: lat | bw | mr.
LAT_SIZES = (8, 4096, 65536, 1 << 20)
BW_SIZES = (65536, 1 << 20, 4 << 20)
MR_SIZES = (8, 128, 1024)
CELLS = tuple([("lat", s) for s in LAT_SIZES] + [("bw", s) for s in BW_SIZES]
              + [("mr", s) for s in MR_SIZES])

LOCUS = "locus shm"                          # buffers in the shared locus heap (default)
LOCUS_PRIVATE = "locus shm, private buffers"  # malloc buffers: CMA or pipelined copies
LOCUS_PRIVATE_COPY = "locus shm, private buffers, CMA off"  # LOCUS_SHM_CMA=off: pipelined copy
# `--touch`: heap buffers the sender writes before each send and the receiver
# reads after (the peers' benchmarks never touch theirs): context, no targets
LOCUS_TOUCH = "locus shm, buffers written and read (--touch)"
CL_ONE = "cache line, one shared line"
CL_TWO = "cache line, one line per direction"
# research/probes/shm_floor.c streaming: no library, copy-in/copy-out through a 256-cell
# ring between the same two cores (the floor under any ring transport's rate)
RING_FLOOR = "bare ring, no library (shm_floor)"
# `locus bench copy`: one core copying a buffer to another, both its own and
# reused (the selector's figure): the copy limit a one-copy transfer works at
COPY_LIMIT = "memcpy, one core, buffers reused (locus bench copy)"
NOT_PEERS = (LOCUS, LOCUS_PRIVATE, LOCUS_PRIVATE_COPY, LOCUS_TOUCH, CL_ONE, CL_TWO, RING_FLOOR,
             COPY_LIMIT)

# Targets of issue 4, stated as ratios of medians measured in the same run.
LAT_VS_PEER_MAX = 0.8
LAT_VS_TWO_LINE_MAX = 2.0
BW_VS_PEER_MIN = 1.2
MR_VS_8B_MIN = 0.8


def size_label(size):
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return "%d MiB" % (size >> 20)
    if size >= 1024 and size % 1024 == 0:
        return "%d KiB" % (size >> 10)
    return "%d B" % size


class ParseError(ValueError):
    pass


# ---------------------------------------------------------------- parsers

def parse_clping(text):
    """clping output: --probe `key=value` line, --json object, or the human line.

    Returns {"placement", "one_line_ns", "two_line_ns"}."""
    text = text.strip()
    if text.startswith("{"):
        d = json.loads(text)
        return {"placement": d["placement"], "one_line_ns": float(d["one_line_ns"]),
                "two_line_ns": float(d["two_line_ns"])}
    kv = dict(re.findall(r"(\w+)=(\S+)", text))
    if {"placement", "one_line_ns", "two_line_ns"} <= kv.keys():
        return {"placement": kv["placement"], "one_line_ns": float(kv["one_line_ns"]),
                "two_line_ns": float(kv["two_line_ns"])}
    m = re.search(r"one shared line ([\d.]+) ns, one line per direction ([\d.]+) ns.*"
                  r"placement (\w+)", text)
    if m:
        return {"placement": m.group(3), "one_line_ns": float(m.group(1)),
                "two_line_ns": float(m.group(2))}
    raise ParseError("not clping output: %r" % text[:120])


def parse_locus_record(text):
    """`locus bench pingpong|bw|msgrate --json`: the benchmark record (schema
    locus-bench/1, docs/bench-schema.json), one row per size of the
    benchmark's metric with the other two figures in its extra.

    Returns {size: {"lat_us", "mbps", "msgps"}} like parse_osu."""
    try:
        rec = json.loads(text)
    except ValueError as e:
        raise ParseError("not JSON: %s" % e)
    if not isinstance(rec, dict) or rec.get("schema") != "locus-bench/1":
        raise ParseError("not a locus-bench/1 record: %r" % text[:120])
    out = {}
    for r in rec.get("rows", []):
        if r.get("series") != "locus" or r.get("x_unit") != "bytes":
            continue
        fig = dict(r.get("extra", {}))
        key = {"latency": "lat_us", "bandwidth": "gbps", "message rate": "mmsgps"}.get(r["metric"])
        if key is None:
            raise ParseError("row of metric %r: expected latency, bandwidth or message rate" % r["metric"])
        fig[key] = r["y"]
        if any(fig.get(k) is None for k in ("lat_us", "gbps", "mmsgps")):
            raise ParseError("row at %s B lacks a figure: %r" % (r["x"], r))
        out[int(r["x"])] = {"lat_us": float(fig["lat_us"]), "mbps": float(fig["gbps"]) * 1e3,
                            "msgps": float(fig["mmsgps"]) * 1e6}
    if not out:
        raise ParseError("locus-bench/1 record of %r without locus rows" % rec.get("benchmark"))
    return out


def parse_osu(text):
    """`locus bench ... --json` (the benchmark record, parse_locus_record) or
    osu_mpi --json/--tsv output (a list of rows, or a tab-separated table).

    Returns {size: {"lat_us", "mbps", "msgps"}} (mbps = 1e6 B/s)."""
    text = text.strip()
    if text.startswith("{"):
        return parse_locus_record(text)
    start = text.find("[")
    if start >= 0 and text.rstrip().endswith("]"):
        rows = json.loads(text[start:])
        if not isinstance(rows, list):
            raise ParseError("expected a JSON list of rows")
        out = {}
        for r in rows:
            out[int(r["size"])] = {k: float(r[k]) for k in ("lat_us", "mbps", "msgps")}
        return out
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if lines and lines[0].split("\t")[:4] == ["size", "lat_us", "mbps", "msgps"]:
        out = {}
        for ln in lines[1:]:
            f = ln.split("\t")
            out[int(f[0])] = {"lat_us": float(f[1]), "mbps": float(f[2]), "msgps": float(f[3])}
        return out
    raise ParseError("not a locus benchmark record, OSU-style JSON or TSV output: %r" % text[:120])


_UCX_FIELDS = ("iterations", "lat_median_us", "lat_avg_us", "lat_overall_us",
               "bw_avg_mibps", "bw_overall_mibps", "mr_avg", "mr_overall")


def parse_ucx_perftest(text):
    """ucx_perftest client output (default table, -f, or -v CSV): the final row.

    Returns the 8 numbers of the final row plus "gbps" (overall, GB/s)."""
    row = None
    for ln in text.splitlines():
        s = ln.strip()
        if s.startswith("Final:"):
            row = s[len("Final:"):].split()
        elif re.fullmatch(r"[\d.]+(,[\d.]+){7}", s):
            row = s.split(",")
        elif row is None and re.fullmatch(r"[\d.]+(\s+[\d.]+){7}", s):
            row = s.split()  # -f: the only numeric row is final
    if row is None:
        raise ParseError("no final row in ucx_perftest output: %r" % text[-200:])
    vals = dict(zip(_UCX_FIELDS, (float(x) for x in row)))
    vals["gbps"] = vals["bw_overall_mibps"] * (1 << 20) / 1e9
    return vals


# ------------------------------------------------------ results → cells

def metrics_from_osu(kind, parsed):
    """One OSU-style run → {(kind, size): value} in table units."""
    out = {}
    for size, r in parsed.items():
        if kind == "lat":
            out[("lat", size)] = r["lat_us"]
        elif kind == "bw":
            out[("bw", size)] = r["mbps"] / 1e3
        elif kind == "mr":
            out[("mr", size)] = r["msgps"] / 1e6
        else:
            raise ValueError("kind %r: expected lat, bw or mr" % kind)
    return out


def metrics_from_ucx(kind, size, parsed):
    """One ucx_perftest run. Latency: the per-iteration median (50%ile) one-way,
    robust against the host's preemptions; bw and rate: overall figures."""
    if kind == "lat":
        return {("lat", size): parsed["lat_median_us"]}
    if kind == "bw":
        return {("bw", size): parsed["gbps"]}
    if kind == "mr":
        return {("mr", size): parsed["mr_overall"] / 1e6}
    raise ValueError("kind %r: expected lat, bw or mr" % kind)


def metrics_from_clping(parsed):
    """The cache-line rows: the 8 B latency cell is the line's one-way latency."""
    return {CL_ONE: {("lat", 8): parsed["one_line_ns"] / 1e3},
            CL_TWO: {("lat", 8): parsed["two_line_ns"] / 1e3}}


def parse_shm_floor(text):
    """shm_floor's stream lines → {payload bytes: million messages/s}."""
    units = {"B": 1, "KiB": 1024}
    out = {}
    for n, u, rate in re.findall(r"^stream (\d+) (B|KiB)\s+([\d.]+) M msg/s", text, re.M):
        out[int(n) * units[u]] = float(rate)
    if not out:
        raise ParseError("no 'stream N B ... M msg/s' line in shm_floor output")
    return out


def metrics_from_floor(parsed):
    return {RING_FLOOR: {("mr", s): v for s, v in parsed.items() if s in MR_SIZES}}


def parse_bench_copy(text):
    """`locus bench copy` table rows → {size in bytes: GB/s of the selector (locus column)}."""
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    out = {}
    for n, m, _glibc, loc in re.findall(r"^\s+(\d+)([KMG]?)\s+([\d.]+)\s+([\d.]+)\s", text, re.M):
        out[int(n) * mult[m]] = float(loc)
    if not out:
        raise ParseError("no size row in `locus bench copy` output")
    return out


def metrics_from_copy(parsed):
    return {COPY_LIMIT: {("bw", s): v for s, v in parsed.items() if s in BW_SIZES}}


def unit_verdict(unit, reference, max_busy=None):
    """kept | placement | busy | failed. A run counts when it succeeded, the
    placement probes before and after agree with each other and with the
    reference placement ("any": only with each other), and other processes
    used at most max_busy of the machine's CPU time while it ran (both cores
    spin in every benchmark here, so any foreign work distorts it)."""
    if not unit.get("ok"):
        return "failed"
    before, after = unit.get("before"), unit.get("after")
    if before is None or after is None or before != after:
        return "placement"
    if reference != "any" and before != reference:
        return "placement"
    busy = unit.get("foreign")
    if max_busy is not None and busy is not None and busy > max_busy:
        return "busy"
    return "kept"


def unit_kept(unit, reference, max_busy=None):
    return unit_verdict(unit, reference, max_busy) == "kept"


def aggregate(units, reference="near", max_busy=None):
    """units: [{"row", "ok", "before", "after", "foreign", "metrics": {(kind,size): v}}].

    Returns (medians {row: {cell: median}},
             counts {row: [kept, discarded for placement, discarded busy, failed]})."""
    values, counts = {}, {}
    slot = {"kept": 0, "placement": 1, "busy": 2, "failed": 3}
    for u in units:
        c = counts.setdefault(u["row"], [0, 0, 0, 0])
        values.setdefault(u["row"], {})
        v = unit_verdict(u, reference, max_busy)
        c[slot[v]] += 1
        if v == "kept":
            for cell, x in u["metrics"].items():
                values[u["row"]].setdefault(tuple(cell), []).append(x)
    med = {row: {cell: statistics.median(v) for cell, v in cells.items()}
           for row, cells in values.items()}
    return med, counts


def foreign_by_row(units, reference="near", max_busy=None):
    """Median share of the CPU time other processes used during a row's kept
    runs: the conditions its figures were measured in."""
    vals = {}
    for u in units:
        if unit_kept(u, reference, max_busy) and u.get("foreign") is not None:
            vals.setdefault(u["row"], []).append(u["foreign"])
    return {row: statistics.median(v) for row, v in vals.items()}


# ---------------------------------------------------------------- targets

def _ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def best_peer(med, cell, lower_is_better):
    """(row, value) of the best peer for a cell, or (None, None)."""
    cand = [(v[cell], row) for row, v in med.items()
            if row not in NOT_PEERS and v.get(cell) is not None]
    if not cand:
        return None, None
    v, row = min(cand) if lower_is_better else max(cand)
    return row, v


def targets(med, who=LOCUS):
    """The issue's targets for one locus row: (name, value, reference, ratio,
    limit, verdict); verdict is PASS, FAIL or n/a (a figure is missing)."""
    loc = med.get(who, {})
    out = []

    def add(name, value, ref_name, ref, ratio, limit, ok):
        verdict = "n/a" if ratio is None else ("PASS" if ok(ratio) else "FAIL")
        out.append((name, value, ref_name, ref, ratio, limit, verdict))

    row, v = best_peer(med, ("lat", 8), True)
    r = _ratio(loc.get(("lat", 8)), v)
    add("8 B latency vs best peer", loc.get(("lat", 8)), row, v, r,
        "<= %.1f" % LAT_VS_PEER_MAX, lambda x: x <= LAT_VS_PEER_MAX)
    two = med.get(CL_TWO, {}).get(("lat", 8))
    r = _ratio(loc.get(("lat", 8)), two)
    add("8 B latency vs two-line ping-pong", loc.get(("lat", 8)), CL_TWO, two, r,
        "<= %.1f" % LAT_VS_TWO_LINE_MAX, lambda x: x <= LAT_VS_TWO_LINE_MAX)
    for s in BW_SIZES:
        row, v = best_peer(med, ("bw", s), False)
        r = _ratio(loc.get(("bw", s)), v)
        add("bandwidth %s vs best peer" % size_label(s), loc.get(("bw", s)), row, v, r,
            ">= %.1f" % BW_VS_PEER_MIN, lambda x: x >= BW_VS_PEER_MIN)
    base = loc.get(("mr", 8))
    for s in MR_SIZES[1:]:
        r = _ratio(loc.get(("mr", s)), base)
        add("message rate %s vs 8 B" % size_label(s), loc.get(("mr", s)), "%s, 8 B" % who,
            base, r, ">= %.1f" % MR_VS_8B_MIN, lambda x: x >= MR_VS_8B_MIN)
    return out


# ---------------------------------------------------------------- markdown

def fmt(v, kind):
    if v is None:
        return "–"
    if kind == "lat":
        return "%.3f" % v if v < 0.1 else "%.2f" % v if v < 10 else "%.1f" % v if v < 100 \
            else "%.0f" % v
    if kind == "ratio":
        return "%.2f" % v
    return "%.2f" % v if v < 10 else "%.1f" % v


def render(med, counts, row_order=None, cells=CELLS, foreign=None):
    """The comparison table and the targets table, in markdown. foreign: the
    per-row share of CPU time used by other processes (adds a column)."""
    rows = list(row_order or [])
    rows += [r for r in med if r not in rows]
    rows = [r for r in rows if r in med or r in counts]
    head = ["transport"] + ["lat %s" % size_label(s) if k == "lat" else
                            "bw %s" % size_label(s) if k == "bw" else
                            "rate %s" % size_label(s) for k, s in cells]
    head += ["rate 128 B / 8 B", "rate 1 KiB / 8 B", "runs kept / discarded / failed"]
    if foreign is not None:
        head.append("other load")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        m = med.get(r, {})
        cols = [r] + [fmt(m.get(c), c[0]) for c in cells]
        for s in MR_SIZES[1:]:
            cols.append(fmt(_ratio(m.get(("mr", s)), m.get(("mr", 8))), "ratio"))
        k = counts.get(r, [0, 0, 0, 0])
        cols.append("%d / %d / %d" % (k[0], k[1] + k[2], k[3]))
        if foreign is not None:
            f = foreign.get(r)
            cols.append("–" if f is None else "%.0f %%" % (100 * f))
        lines.append("| " + " | ".join(cols) + " |")
    lines.append("")
    lines.append("Latency: one-way µs; bandwidth: GB/s (1e9 B/s); rate: million messages/s"
                 + ("; other load: median share of the CPU time other processes used during "
                    "the kept runs." if foreign is not None else "."))
    lines.append("")
    for row in [LOCUS] + [r for r in (LOCUS_PRIVATE, LOCUS_PRIVATE_COPY) if r in med]:
        lines.append("")
        lines.append("| target (%s) | locus | reference | reference value | ratio | limit | "
                     "verdict |" % row)
        lines.append("|---|---|---|---|---|---|---|")
        for name, val, ref_name, ref, ratio, limit, verdict in targets(med, row):
            kind = "lat" if "latency" in name else "bw" if "bandwidth" in name else "mr"
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                name, fmt(val, kind), ref_name or "–", fmt(ref, kind), fmt(ratio, "ratio"),
                limit, verdict))
        lim = med.get(COPY_LIMIT, {})
        bws = [(s, med.get(row, {}).get(("bw", s)), lim.get(("bw", s))) for s in BW_SIZES]
        bws = [(s, v, l) for s, v, l in bws if v and l]
        if bws:
            lines.append("")
            lines.append("Context: bandwidth against one core's copy in the same run (%s): %s." % (
                COPY_LIMIT, ", ".join("%s %s×" % (size_label(s), fmt(v / l, "ratio")) for s, v, l in bws)))
        floor = med.get(RING_FLOOR, {}).get(("mr", 1024))
        mine = med.get(row, {}).get(("mr", 1024))
        if floor and mine:
            lines.append("")
            lines.append("Context: the 1 KiB rate is %.2f× the bare ring's in the same run (%s: "
                         "%s M/s; its own 1 KiB / 8 B is %s)." % (
                             mine / floor, RING_FLOOR, fmt(floor, "mr"),
                             fmt(_ratio(floor, med[RING_FLOOR].get(("mr", 8))), "ratio")))
    touch = touch_context(med)
    if touch:
        lines += ["", touch]
    return "\n".join(lines) + "\n"


def touch_context(med):
    """One line on the --touch row (each message written before it is sent and
    read after it arrives) against the untouched heap row, or None."""
    t, h = med.get(LOCUS_TOUCH, {}), med.get(LOCUS, {})
    parts = []
    for s in MR_SIZES[1:]:
        r = _ratio(t.get(("mr", s)), t.get(("mr", 8)))
        if r is not None:
            parts.append("rate %s / 8 B %s" % (size_label(s), fmt(r, "ratio")))
    for c in [("mr", s) for s in MR_SIZES] + [("bw", s) for s in BW_SIZES]:
        r = _ratio(t.get(c), h.get(c))
        if r is not None:
            parts.append("%s %s %s× untouched" % ("rate" if c[0] == "mr" else "bw",
                                                  size_label(c[1]), fmt(r, "ratio")))
    if not parts:
        return None
    return ("Context (%s: the sender writes every message before sending it and the receiver "
            "reads it after, as an application would; the peers' benchmarks never touch their "
            "buffers): %s." % (LOCUS_TOUCH, "; ".join(parts)))


# ------------------------------------------------------------ persistence

def units_to_json(units):
    """Units with tuple cell keys → JSON-friendly (cells as "kind:size")."""
    out = []
    for u in units:
        v = dict(u)
        v["metrics"] = {"%s:%d" % c: x for c, x in u.get("metrics", {}).items()}
        out.append(v)
    return out


def units_from_json(data):
    out = []
    for u in data:
        v = dict(u)
        v["metrics"] = {(k.split(":")[0], int(k.split(":")[1])): x
                        for k, x in u.get("metrics", {}).items()}
        out.append(v)
    return out
