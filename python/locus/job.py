"""One report for an MPI job from its per-rank profiles (`locus profile -o
prof.%r.json` under mpirun), like `locus profile --merge prof.*.json`.

    python -m locus.report prof.*.json            # job report (text)
    python -m locus.report prof.*.json --html o.html

Variables are aggregated over ranks by allocation site (kind, name, site);
where ranks differ -- unequal sizes, one rank whose memory is away from the
nodes its threads ran on, a finding in some ranks only -- the ranks' own rows
are shown; access matrices are summed per host.
"""
from __future__ import annotations

from typing import Any, Dict, List

MIB = 1 << 20


def _pct(a: int, b: int) -> int | None:
    return round(100 * a / b) if b else None


def _pct_str(a: int, b: int) -> str:
    p = _pct(a, b)
    return "-" if p is None else f"{p} %"


def _human(b: float) -> str:
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    i = 0
    while b >= 1024 and i < 4:
        b /= 1024
        i += 1
    return f"{b:.1f} {units[i]}" if i else f"{b:.0f} {units[i]}"


def _run_nodes(p: Dict[str, Any]) -> List[int]:
    """Node indices (into machine.nodes) where the rank's threads ran: the
    node each thread ran on most, else the cpu affinity of its first process."""
    ids = [n["id"] for n in p["machine"]["nodes"]]
    out = set()
    for t in p.get("threads", []):
        if t["nodes"] and t["nodes"][0] in ids:
            out.add(ids.index(t["nodes"][0]))
    if not out and p.get("processes"):
        cpus = set(p["processes"][0].get("cpus", []))
        for i, n in enumerate(p["machine"]["nodes"]):
            if cpus & set(n["cpus"]):
                out.add(i)
    return sorted(out)


def _policy(p: Dict[str, Any]) -> str:
    pol = (p.get("processes") or [{}])[0].get("policy")
    if not pol:
        return "unknown"
    if pol["mode"] in ("default", "local", "unknown"):
        return pol["mode"]
    return f"{pol['mode']} to node {','.join(str(n) for n in pol['nodes'])}"


def merge(profiles: List[Dict[str, Any]], files: List[str] | None = None) -> Dict[str, Any]:
    """The job (same facts as locus-job/1 written by `locus profile --merge`)."""
    files = files or [f"profile {i}" for i in range(len(profiles))]
    ranks, variables = [], {}
    for idx, (p, f) in enumerate(zip(profiles, files)):
        rank = p["job"]["rank"] if p.get("job") else idx
        if any(r["rank"] == rank for r in ranks):
            raise ValueError(f"'{f}' and another profile are both rank {rank}: profiles of two jobs?")
        run = _run_nodes(p)
        r = {"rank": rank, "host": p.get("host", "?"), "file": f, "exit": p["exit"]["status"],
             "command": p["command"][0], "ran_on_nodes": [p["machine"]["nodes"][i]["id"] for i in run],
             "policy": _policy(p), "pages": 0, "pages_local": 0, "node_ids": [n["id"] for n in p["machine"]["nodes"]],
             "matrix": p["access_matrix"]}
        for v in p["variables"]:
            if v["kind"] == "other":
                continue
            key = (v["kind"], v["name"], v["site"])
            pages = sum(v["pages_by_node"])
            local = sum(v["pages_by_node"][i] for i in run if i < len(v["pages_by_node"]))
            mv = variables.setdefault(key, {"name": v["name"], "kind": v["kind"], "site": v["site"], "per_rank": []})
            per = next((x for x in mv["per_rank"] if x["rank"] == rank), None)
            if per is None:
                per = {"rank": rank, "bytes": 0, "pages": 0, "pages_local": 0,
                       "pages_by_node": [0] * len(v["pages_by_node"]), "pattern": "", "finding": ""}
                mv["per_rank"].append(per)
            per["bytes"] += v["bytes"]
            per["pages"] += pages
            per["pages_local"] += local
            per["pages_by_node"] = [a + b for a, b in zip(per["pages_by_node"], v["pages_by_node"])]
            if not per["finding"] and v["finding"]:
                per["pattern"], per["finding"] = v["pattern"], v["finding"]
            r["pages"] += pages
            r["pages_local"] += local
        ranks.append(r)
    ranks.sort(key=lambda r: r["rank"])
    hosts = {r["rank"]: r["host"] for r in ranks}
    findings: List[str] = []
    own: List[Dict[str, Any]] = []  # per-rank findings, grouped by rank and cause below
    for v in variables.values():
        per = v["per_rank"]
        v["ranks"] = len(per)
        v["bytes"] = sum(x["bytes"] for x in per)
        v["pages"] = sum(x["pages"] for x in per)
        v["pages_local"] = sum(x["pages_local"] for x in per)
        sizes = [x["bytes"] for x in per]
        lo, hi = min(sizes), max(sizes)
        v["imbalance"] = len(per) >= 2 and hi > lo + lo // 4 and hi - lo >= MIB
        shares = [_pct(x["pages_local"], x["pages"]) for x in per if x["pages"]]
        v["remote_rank"] = len(per) >= 2 and any(s < 50 for s in shares) and any(s >= 80 for s in shares)
        v["pattern_differs"] = len({x["pattern"] for x in per}) > 1
        if v["imbalance"]:
            big = next(x["rank"] for x in per if x["bytes"] == hi)
            findings.append(f"{v['name']} ({v['site']}): ranks allocate unequal amounts: rank {big} {_human(hi)}, "
                            f"the smallest {_human(lo)} ({hi / lo if lo else 0:.1f}x) → balance the decomposition")
        if len(per) == len(ranks) and not v["pattern_differs"] and per[0]["finding"]:
            findings.append(f"all {len(ranks)} ranks: {per[0]['finding']}")
            continue
        for x in per:
            if x["finding"]:
                own.append({"rank": x["rank"], "pattern": x["pattern"], "bytes": x["bytes"], "name": v["name"],
                            "text": f"rank {x['rank']} ({hosts[x['rank']]}): {x['finding']}"})
            elif v["remote_rank"] and x["pages"] and _pct(x["pages_local"], x["pages"]) < 50:
                own.append({"rank": x["rank"], "pattern": "away", "bytes": x["bytes"], "name": v["name"],
                            "text": f"rank {x['rank']} ({hosts[x['rank']]}): {v['name']}"
                                    f"{'' if '@' in v['name'] else ' (' + v['site'] + ')'}: "
                                    f"{100 - _pct(x['pages_local'], x['pages'])} % of its pages are away from the "
                                    "nodes its threads ran on; the other ranks' are local → check that rank's "
                                    "memory binding"})
    findings += _group_own(own)
    order = sorted(variables.values(), key=lambda v: (not (v["imbalance"] or v["remote_rank"] or v["pattern_differs"]),
                                                        -v["bytes"], v["name"]))
    return {"schema": "locus-job/1", "ranks": ranks, "variables": order, "findings": findings,
            "matrices": _host_matrices(ranks)}


def _group_own(own: List[Dict[str, Any]]) -> List[str]:
    """One finding per rank and cause: the largest variable's, the others named after it."""
    out: List[str] = []
    own.sort(key=lambda o: (o["rank"], o["pattern"] == "away", o["pattern"], -o["bytes"], o["name"]))
    i = 0
    while i < len(own):
        j = i + 1
        while j < len(own) and own[j]["rank"] == own[i]["rank"] and own[j]["pattern"] == own[i]["pattern"]:
            j += 1
        if j - i == 1:
            out.append(own[i]["text"])
        else:
            n = j - i - 1
            names = ", ".join(o["name"] for o in own[i + 1:i + 6]) + (", ..." if n > 5 else "")
            out.append(f"{own[i]['text']} (the same for {n} more variable{'' if n == 1 else 's'} "
                       f"of rank {own[i]['rank']}: {names})")
        i = j
    return out


def _host_matrices(ranks: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    out: Dict[str, Dict[str, Any]] = {}
    for r in ranks:
        m = out.setdefault(r["host"], {"nodes": r["node_ids"],
                                       "matrix": [[0] * len(r["node_ids"]) for _ in r["node_ids"]]})
        for a, row in enumerate(r["matrix"]):
            for b, x in enumerate(row):
                if a < len(m["matrix"]) and b < len(m["matrix"]):
                    m["matrix"][a][b] += x
    return out


def text_report(job: Dict[str, Any], top: int = 20) -> str:
    ranks = job["ranks"]
    hosts = sorted({r["host"] for r in ranks})
    out = [f"locus profile: job report of {ranks[0]['command'] if ranks else '?'} — {len(ranks)} rank(s) "
           f"on {len(hosts)} host(s)", "",
           f"  {'rank':<5} {'host':<16} {'exit':<6} {'ran on node':<12} {'memory policy':<24} pages local"]
    for r in ranks:
        nodes = ",".join(str(n) for n in r["ran_on_nodes"]) or "?"
        out.append(f"  {r['rank']:<5} {r['host'][:16]:<16} {r['exit']:<6} {nodes:<12} {r['policy'][:24]:<24} "
                   f"{_pct_str(r['pages_local'], r['pages'])}")
    out += ["", f"  {'variable':<20} {'kind':<6} {'site':<24} {'ranks':>5} {'size':>10} {'pages local':>12}"]
    for v in job["variables"][:top]:
        out.append(f"  {v['name'][:20]:<20} {v['kind']:<6} {v['site'][:24]:<24} {v['ranks']:>5} "
                   f"{_human(v['bytes']):>10} {_pct_str(v['pages_local'], v['pages']):>12}")
        if v["imbalance"] or v["remote_rank"] or v["pattern_differs"]:
            for x in v["per_rank"]:
                away = v["remote_rank"] and x["pages"] and _pct(x["pages_local"], x["pages"]) < 50
                pages = "/".join(str(n) for n in x["pages_by_node"][:8])
                out.append(f"    rank {x['rank']:<4} {'':<40} {_human(x['bytes']):>10} "
                           f"{_pct_str(x['pages_local'], x['pages']):>12}  pages per node {pages}"
                           f"{'  <- memory away from its threads' if away else ''}"
                           f"{'  ' + x['pattern'] if x['pattern'] else ''}")
    for host, m in job["matrices"].items():
        if len(m["nodes"]) < 2 or not any(any(row) for row in m["matrix"]):
            continue
        out += ["", f"  {host}: sampled accesses, thread node (rows) x page node (columns):",
                "       " + "".join(f" {'node' + str(n):>9}" for n in m["nodes"])]
        for n, row in zip(m["nodes"], m["matrix"]):
            out.append(f"  node{n:<2}" + "".join(f" {x:>9}" for x in row))
    out += ["", "  findings:"]
    out += [f"  - {f}" for f in job["findings"]] or ["    none"]
    return "\n".join(out) + "\n"
