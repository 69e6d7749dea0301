"""locus plot: the records of `bench copy`, `bench pingpong` and
`heap --compare` become valid PNG/SVG images with the expected series; several
files overlay (hosts named, runs of one host merged); bad input gives one clear
line and a non-zero exit."""
import copy
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from benchutil import locus_bin
from locus import plot
from locus.bench import host_label

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _write(tmp_path, name, record):
    p = tmp_path / name
    p.write_text(json.dumps(record))
    return str(p)


def _svg_text(path):
    """Every text element of an SVG (matplotlib keeps text as text: svg.fonttype none)."""
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    return " ".join("".join(e.itertext()) for e in root.iter() if e.tag.endswith("text"))


def _labels(drawn, metric):
    return next(p["labels"] for p in drawn if p["metric"] == metric)


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_copy_pingpong_heap_images(records, pingpong, tmp_path, ext):
    cases = {
        "copy": (records["copy"], "bandwidth", {"glibc memcpy", "locus_copy (selector)", "sse2"}),
        "pingpong": (pingpong, "latency", {"locus"}),
        "heap": (records["heap-compare"], "fault-in", {"serial touch, 1 thread", "memset limit, 1 thread"}),
    }
    for name, (rec, metric, want) in cases.items():
        out = str(tmp_path / f"{name}.{ext}")
        drawn = plot.draw([rec], out, [f"{name}.json"])
        labels = set(_labels(drawn, metric))
        assert want <= labels, (name, labels)
        with open(out, "rb") as f:
            head = f.read(8)
        if ext == "png":
            assert head == PNG_MAGIC and os.path.getsize(out) > 5000
        else:
            text = _svg_text(out)
            for label in want:
                assert label in text, (name, label)
            assert "Intel" in text or "AMD" in text or rec["host"]["vendor"] in text  # the host in the title


def test_scales_follow_the_kind(records, pingpong, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    drawn = plot.draw([pingpong], str(tmp_path / "p.svg"))
    (p,) = drawn
    assert p["x_unit"] == "bytes" and not p["categorical"]
    text = _svg_text(str(tmp_path / "p.svg"))
    assert "size (bytes)" in text and "latency (us)" in text and "1K" in text and "1M" in text
    drawn = plot.draw([records["regcache"]], str(tmp_path / "r.svg"))
    per_op = next(p for p in drawn if p["metric"] == "time per op")
    assert per_op["categorical"] and per_op["y_unit"] == "ns/op"
    assert "hit10k" in _svg_text(str(tmp_path / "r.svg"))
    drawn = plot.draw([records["stream"]], str(tmp_path / "s.png"))
    assert drawn[0]["labels"] == ["locus heap (median)", "locus heap (best)"]


def test_rma_curves_and_exchange_bars(records, tmp_path):
    """rma: latency (log-log) and bandwidth curves by size, like pingpong and bw;
    exchange: bars per reg mode."""
    out = str(tmp_path / "rma.svg")
    drawn = plot.draw([records["rma"], records["exchange"]], out)
    kinds = {(p["benchmark"], p["metric"]): (p["categorical"], p["x_unit"], p["labels"]) for p in drawn}
    assert kinds == {
        ("rma", "latency"): (False, "bytes", ["put", "get", "fetch-add"]),
        ("rma", "bandwidth"): (False, "bytes", ["put_nbi"]),
        ("exchange", "key rate per rank"): (True, "reg mode", ["locus"]),
        ("exchange", "registrations"): (True, "reg mode", ["locus"]),
    }, kinds
    text = _svg_text(out)
    assert all(w in text for w in ("rma: latency", "exchange: key rate per rank", "small", "4K", "Mkeys/s")), text


def test_several_hosts_are_named(records, tmp_path):
    intel = records["copy"]
    amd = copy.deepcopy(intel)
    amd["host"].update(cpu_model="AMD EPYC 9R14 96-Core Processor", vendor="AuthenticAMD", kernel="6.18.44-fc-v595")
    out = str(tmp_path / "hosts.svg")
    drawn = plot.draw([intel, amd], out, ["intel.json", "amd.json"], metrics=["bandwidth"], series="glibc|selector")
    labels = _labels(drawn, "bandwidth")
    assert len(labels) == 4
    assert any("AMD EPYC 9R14 96-Core, 6.18.44-fc-v595" in l for l in labels)
    assert f"glibc memcpy — {host_label(intel['host'])}" in labels, labels
    assert " vs " in _svg_text(out)


def test_runs_of_one_host_merge_or_are_named_by_file(records, tmp_path):
    small = records["heap-compare"]
    big = copy.deepcopy(small)
    for r in big["rows"] + big["peers"]:
        r["x"] = 256 << 20
    p = plot.panels([small, big], ["64m.json", "256m.json"])
    (panel,) = p
    assert all(len(s["points"]) == 2 for s in panel["series"].values())  # one curve over the sizes
    p = plot.panels([small, small], ["run1.json", "run2.json"])  # the same points twice: named by file
    labels = list(p[0]["series"])
    assert any(l.endswith("— run1") for l in labels) and any(l.endswith("— run2") for l in labels)


def _cli(args, via_locus):
    cmd = [locus_bin(), "plot", *args] if via_locus else [sys.executable, "-m", "locus.plot", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("via_locus", [True, False])
def test_cli_draws_and_checks(records, pingpong, tmp_path, via_locus):
    files = [_write(tmp_path, "copy.json", records["copy"]), _write(tmp_path, "pp.json", pingpong)]
    out = str(tmp_path / "both.png")
    r = _cli(files + ["-o", out], via_locus)
    assert r.returncode == 0, r.stderr
    assert "3 panel(s): bandwidth (" in r.stdout, r.stdout
    assert "; latency (1 series)" in r.stdout, r.stdout
    with open(out, "rb") as f:
        assert f.read(8) == PNG_MAGIC
    r = _cli(files + ["--check"], via_locus)
    assert r.returncode == 0 and r.stdout.count(": ok (") == 2, r.stdout


@pytest.mark.parametrize("via_locus", [True, False])
def test_cli_errors_are_one_clear_line(records, tmp_path, via_locus):
    prog = "locus plot" if via_locus else "python -m locus.plot"
    good = _write(tmp_path, "good.json", records["heap"])
    notjson = tmp_path / "notjson.json"
    notjson.write_text("{\"schema\": ")
    profile = _write(tmp_path, "profile.json", {"schema": "locus-profile/1", "command": ["x"]})
    broken = copy.deepcopy(records["heap"])
    del broken["rows"][0]["y_unit"]
    broken = _write(tmp_path, "broken.json", broken)
    out = str(tmp_path / "o.png")
    for args, needle in [
        ([str(tmp_path / "missing.json"), "-o", out], "missing.json: cannot read: No such file or directory"),
        ([str(notjson), "-o", out], "notjson.json: not JSON ("),
        ([profile, "-o", out], "profile.json: not a locus benchmark record (schema 'locus-profile/1'; "
                               "expected 'locus-bench/1')"),
        ([broken, "-o", out], "broken.json: does not match the locus-bench/1 schema at rows/0: "
                              "'y_unit' is a required property"),
        ([good, "-o", str(tmp_path / "o.pdf")], "expected a file name ending in .png or .svg"),
        ([good], "-o FILE.png|FILE.svg is required"),
        ([good, "-o", out, "--metric", "latency"], "no rows of metric 'latency'; the records have: fault-in"),
    ]:
        r = _cli(args, via_locus)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith(f"{prog}: ") and needle in r.stderr, (needle, r.stderr)
        assert r.stderr.count("\n") == 1, r.stderr
        assert not os.path.exists(out)


def test_locus_plot_says_what_is_missing(records, tmp_path):
    good = _write(tmp_path, "good.json", records["heap"])
    env = dict(os.environ, LOCUS_PYTHON=str(tmp_path / "no-python"))
    r = subprocess.run([locus_bin(), "plot", good, "-o", str(tmp_path / "o.png")], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 127
    assert r.stderr.startswith("locus plot: cannot run ") and "LOCUS_PYTHON" in r.stderr, r.stderr
