"""Reports and plots of a `locus profile` JSON file.

    python -m locus.report locus-profile.json                 # text summary
    python -m locus.report locus-profile.json --html out.html # plots in one HTML file
    python -m locus.report locus-profile.json --check         # validate against the schema
    python -m locus.report prof.*.json                        # an MPI job: one report (locus.job)

The HTML embeds (as PNG) the placement of every shown variable (pages per
node) and the node x node matrix of sampled accesses (thread node x page node).
"""
from __future__ import annotations

import argparse
import base64
import html
import io
import json
import sys
from importlib import resources
from typing import Any, Dict, List

SCHEMA_ID = "locus-profile/1"


def load_schema() -> Dict[str, Any]:
    """The JSON Schema of the profile (python/locus/schema/profile.schema.json)."""
    text = resources.files("locus").joinpath("schema/profile.schema.json").read_text()
    return json.loads(text)


def validate(profile: Dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError if the profile does not match the schema."""
    import jsonschema

    jsonschema.validate(profile, load_schema())


def load(path: str) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def node_ids(profile: Dict[str, Any]) -> List[int]:
    return [n["id"] for n in profile["machine"]["nodes"]]


def remote_share(var: Dict[str, Any]) -> float | None:
    acc = var["accesses"]
    seen = acc["local"] + acc["remote"]
    return acc["remote"] / seen if seen else None


def exit_words(profile: Dict[str, Any]) -> str:
    """'exit 0', or 'exit 139: the program died of signal 11 (SIGSEGV) at x.c:12, address 0x0'."""
    ex = profile["exit"]
    if ex.get("signal") is None:
        return f"exit {ex['status']}"
    words = f"exit {ex['status']}: the program died of signal {ex['signal']} ({ex.get('signal_name', '?')})"
    if ex.get("fault"):
        words += f" at {ex['fault']['location'] or '?'}, address {ex['fault']['address']}"
    return words


def text_report(profile: Dict[str, Any], top: int = 10) -> str:
    nodes = node_ids(profile)
    out = [f"locus profile of {' '.join(profile['command'])}: {exit_words(profile)}, "
           f"{profile['duration_s']:.2f} s, {len(nodes)} NUMA node(s)"]
    if profile.get("job"):
        j = profile["job"]
        out.append(f"  MPI rank {j['rank']} of {j['size']} on {profile.get('host', '?')} (from {j['from']})")
    shim = profile.get("shim")
    if shim and shim["status"] != "ok":
        out.append(f"  no allocation log: {shim['status']}")
    for s in profile["samplers"]:
        out.append(f"  {s['name']:<12} {s['status']:<11} {s['samples']} samples  {s['detail']}")
    if profile["symbols"] == "missing":
        out.append("  note: symbols are missing for some code: locations are module+offset")
    out.extend(f"  note: {n}" for n in profile["notes"])
    out.append("")
    out.append(f"  {'variable':<20} {'kind':<6} {'pages per node':<24} {'first touch':<28} {'remote':>7}")
    for v in profile["variables"][:top]:
        pages = "/".join(str(p) for p in v["pages_by_node"])
        ft = v["first_touch"]["sites"][0]["location"] if v["first_touch"]["sites"] else "-"
        r = remote_share(v)
        rs = f"{100 * r:.0f} %" if r is not None else "-"
        out.append(f"  {v['name'][:20]:<20} {v['kind']:<6} {pages[:24]:<24} {ft[:28]:<28} {rs:>7}")
    threads = profile.get("threads", [])
    if len(threads) >= 2:
        out.append("")
        out.append("  threads (cpu -> node where the samples saw them):")
        for t in threads[:16]:
            where = ", ".join(f"cpu {c} -> node {n}" for c, n in zip(t["cpus"][:4], t["nodes"][:4])) or "-"
            out.append(f"    tid {t['tid']:<8} (pid {t['pid']}) {where:<40} {t['samples']:>6} samples")
    out.append("")
    out.append("  findings:")
    out.extend(f"  - {f}" for f in profile["findings"]) if profile["findings"] else out.append("    none")
    return "\n".join(out) + "\n"


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def placement_figure(profile: Dict[str, Any], top: int = 10):
    """Stacked horizontal bars: pages of each variable on each node."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    vars_ = [v for v in profile["variables"] if sum(v["pages_by_node"])][:top]
    nodes = node_ids(profile)
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * max(1, len(vars_))))
    left = [0] * len(vars_)
    for i, node in enumerate(nodes):
        vals = [v["pages_by_node"][i] for v in vars_]
        ax.barh([v["name"] for v in vars_], vals, left=left, label=f"node {node}")
        left = [a + b for a, b in zip(left, vals)]
    ax.invert_yaxis()
    ax.set_xlabel("pages")
    ax.set_title("placement per variable")
    ax.legend(loc="lower right", fontsize="small")
    return fig


def matrix_figure(profile: Dict[str, Any]):
    """Heat map of sampled accesses: thread node (rows) x page node (columns)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = profile["access_matrix"]
    nodes = node_ids(profile)
    fig, ax = plt.subplots(figsize=(1.5 + 0.8 * len(nodes), 1.2 + 0.8 * len(nodes)))
    im = ax.imshow(m, cmap="Reds")
    ax.set_xticks(range(len(nodes)), [f"node {n}" for n in nodes])
    ax.set_yticks(range(len(nodes)), [f"node {n}" for n in nodes])
    ax.set_xlabel("page node")
    ax.set_ylabel("thread node")
    for i, row in enumerate(m):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", fontsize="small")
    ax.set_title("sampled accesses")
    fig.colorbar(im, ax=ax)
    return fig


def html_report(profile: Dict[str, Any], top: int = 10) -> str:
    import matplotlib.pyplot as plt

    figs = [placement_figure(profile, top), matrix_figure(profile)]
    imgs = [_png(f) for f in figs]
    for f in figs:
        plt.close(f)
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in profile["findings"]) or "<li>none</li>"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>locus profile</title></head><body>"
        f"<h1>locus profile: {html.escape(' '.join(profile['command']))}</h1>"
        f"<h2>Findings</h2><ul>{findings}</ul>"
        f"<h2>Placement per variable</h2><img alt='placement' src='data:image/png;base64,{imgs[0]}'>"
        f"<h2>Node x node accesses</h2><img alt='access matrix' src='data:image/png;base64,{imgs[1]}'>"
        f"<h2>Summary</h2><pre>{html.escape(text_report(profile, top))}</pre>"
        "</body></html>\n"
    )


def job_html(job: Dict[str, Any]) -> str:
    """The job report with one access-matrix plot per host."""
    from . import job as jobmod
    import matplotlib.pyplot as plt

    parts = []
    for host, m in job["matrices"].items():
        if len(m["nodes"]) < 2:
            continue
        fake = {"access_matrix": m["matrix"], "machine": {"nodes": [{"id": n} for n in m["nodes"]]}}
        fig = matrix_figure(fake)
        parts.append(f"<h2>{html.escape(host)}: node x node accesses</h2>"
                     f"<img alt='access matrix {html.escape(host)}' src='data:image/png;base64,{_png(fig)}'>")
        plt.close(fig)
    findings = "".join(f"<li>{html.escape(f)}</li>" for f in job["findings"]) or "<li>none</li>"
    return ("<!doctype html><html><head><meta charset='utf-8'><title>locus job profile</title></head><body>"
            f"<h1>locus profile: job of {len(job['ranks'])} ranks</h1><h2>Findings</h2><ul>{findings}</ul>"
            + "".join(parts) + f"<h2>Summary</h2><pre>{html.escape(jobmod.text_report(job))}</pre></body></html>\n")


def main_job(paths: List[str], html_out: str | None, top: int) -> int:
    from . import job as jobmod

    profiles = []
    for p in paths:
        try:
            prof = load(p)
            validate(prof)
        except (OSError, json.JSONDecodeError) as e:
            print(f"locus.report: cannot read '{p}': {e}", file=sys.stderr)
            return 1
        except Exception as e:  # jsonschema.ValidationError
            print(f"locus.report: '{p}' does not match the schema {SCHEMA_ID}: {getattr(e, 'message', e)}",
                  file=sys.stderr)
            return 1
        profiles.append(prof)
    try:
        job = jobmod.merge(profiles, paths)
    except ValueError as e:
        print(f"locus.report: {e}", file=sys.stderr)
        return 1
    if html_out:
        with open(html_out, "w", encoding="utf-8") as f:
            f.write(job_html(job))
        print(f"wrote {html_out}")
    else:
        sys.stdout.write(jobmod.text_report(job, top))
    return 0


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m locus.report", description=__doc__.splitlines()[0])
    ap.add_argument("profile", nargs="+", help="locus-profile.json written by `locus profile` (several: an MPI job)")
    ap.add_argument("--html", metavar="OUT", help="write an HTML report with the plots")
    ap.add_argument("--check", action="store_true", help="only validate against the schema")
    ap.add_argument("--top", type=int, default=10, help="variables shown (default 10)")
    a = ap.parse_args(argv)
    if len(a.profile) > 1 and not a.check:
        return main_job(a.profile, a.html, a.top)
    if len(a.profile) > 1:
        return max(main([p, "--check"]) for p in a.profile)
    a.profile = a.profile[0]
    try:
        profile = load(a.profile)
    except (OSError, json.JSONDecodeError) as e:
        print(f"locus.report: cannot read '{a.profile}': {e}", file=sys.stderr)
        return 1
    try:
        validate(profile)
    except Exception as e:  # jsonschema.ValidationError: say where
        print(f"locus.report: '{a.profile}' does not match the schema {SCHEMA_ID}: "
              f"{getattr(e, 'message', e)}", file=sys.stderr)
        return 1
    if a.check:
        print(f"{a.profile}: valid {SCHEMA_ID}")
        return 0
    if a.html:
        with open(a.html, "w", encoding="utf-8") as f:
            f.write(html_report(profile, a.top))
        print(f"wrote {a.html}")
    else:
        sys.stdout.write(text_report(profile, a.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
