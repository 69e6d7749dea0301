"""Every benchmark's --json is one record format (docs/bench-schema.json): each
converted tool's real output validates, and holds the rows a reader expects;
progress shows on a terminal only, never with -q."""
import copy
import json
import os
import select
import subprocess
import time

import jsonschema
import pytest

from benchutil import ROOT, locus_bin
from locus import bench


def test_documented_schema_is_the_shipped_one():
    with open(os.path.join(ROOT, "docs", "bench-schema.json")) as f:
        assert json.load(f) == bench.load_schema(), \
            "docs/bench-schema.json and python/locus/schema/bench.schema.json differ: copy one onto the other"
    jsonschema.Draft202012Validator.check_schema(bench.load_schema())


@pytest.mark.parametrize("name", ["copy", "heap", "heap-compare", "stream", "regcache", "pingpong", "bw",
                                  "msgrate", "rma", "exchange"])
def test_real_output_validates(records, name):
    rec = records[name]
    bench.validate(rec, name)
    host = rec["host"]
    assert host["cores"] >= 1 and host["numa_nodes"] >= 1 and host["kernel"] == os.uname().release
    assert rec["command"][-1] == "--json"
    assert rec["rows"], "no rows"
    for row in rec["rows"] + rec["peers"]:
        assert row["y"] is None or row["y"] >= 0, row


def test_copy_rows(records):
    rec = records["copy"]
    assert rec["benchmark"] == "copy" and rec["params"]["sizes"] == "4K,64K" and rec["params"]["reps"] == 1
    bw = [r for r in rec["rows"] if r["metric"] == "bandwidth"]
    sel = [r for r in bw if r["series"] == "locus_copy (selector)"]
    assert sorted(r["x"] for r in sel) == [4096, 65536]
    assert all(r["highlight"] and r["x_unit"] == "bytes" and r["y_unit"] == "GB/s" and r["y"] > 0 for r in sel)
    assert all(0 < r["extra"]["ratio"] < 10 for r in sel)
    glibc = [r for r in rec["peers"] if r["series"] == "glibc memcpy"]
    assert sorted(r["x"] for r in glibc) == [4096, 65536]
    kernels = {r["series"] for r in bw} - {"locus_copy (selector)"}
    assert "sse2" in kernels, kernels
    pol = [r for r in rec["rows"] if r["metric"].startswith("re-read slowdown")]
    assert all(isinstance(r["x"], str) and r["y_unit"] == "x" and r["y"] > 0 for r in pol)
    # glibc, a regular, an NT and an NT + prefetch loop of one family; rep movsb
    # where the CPU has ERMS; the selector's kernel for 64 MiB if not among them
    names = [r["x"] for r in pol]
    family = "avx2" if "avx2" in names else "sse2"
    assert names[:4] == ["libc", family, family + "-nt", family + "-ntpf"], names
    assert len(names) == len(set(names)) and 4 <= len(names) <= 6, names
    assert set(names[4:]) <= kernels | {"libc"}, names


def test_heap_compare_rows(records):
    plain, cmp = records["heap"], records["heap-compare"]
    assert plain["peers"] == [] and plain["params"]["compare"] is False
    assert plain["summary"]["resident_bytes"] == 64 << 20 and plain["summary"]["pages"] == "4k"
    (row,) = cmp["rows"]
    assert row["metric"] == "fault-in" and row["x"] == 64 << 20 and row["y"] > 0
    assert {p["series"].split(",")[0] for p in cmp["peers"]} == {"serial touch", "memset limit"}
    assert len(cmp["peers"]) == 3 and all(p["x"] == row["x"] for p in cmp["peers"])


def test_stream_rows(records):
    rec = records["stream"]
    policies = {r["x"] for r in rec["rows"]}
    assert {"interleave", "firsttouch, serial init", "local"} <= policies and len(policies) == 5
    assert {r["stat"] for r in rec["rows"]} == {"median", "best"}
    assert all("error" not in r.get("extra", {}) for r in rec["rows"])


def test_regcache_rows(records):
    rec = records["regcache"]
    per_op = [r for r in rec["rows"] if r["metric"] == "time per op"]
    assert [r["x"] for r in per_op] == ["same", "hit100", "hit10k", "below", "above", "above-rnd", "adjacent"]
    assert all(r["y_unit"] == "ns/op" and r["y"] > 0 for r in per_op)
    thr = [r for r in rec["rows"] if r["metric"].startswith("throughput")]
    assert [r["x"] for r in thr] == ["1 thread", "2 threads"]
    if rec["params"]["ucx"]:
        assert {p["series"] for p in rec["peers"]} == {"ucs_rcache"}
        assert all(p["peer"].startswith("UCX") for p in rec["peers"])
    else:
        assert any("ucs_rcache not run" in n for n in rec["notes"])


@pytest.mark.parametrize("name, metric, unit, sizes, extras", [
    ("pingpong", "latency", "us", [0, 8, 1024, 65536, 1 << 20], {"gbps", "mmsgps", "iters"}),
    ("bw", "bandwidth", "GB/s", [8, 65536, 1 << 20], {"lat_us", "mmsgps", "iters"}),
    ("msgrate", "message rate", "M/s", [8, 1024], {"lat_us", "gbps", "iters"}),
])
def test_shm_rows(records, name, metric, unit, sizes, extras):
    """One row per size of the benchmark's metric, the other figures in extra,
    consistent with each other; the run's parameters and placement."""
    rec = records[name]
    assert rec["benchmark"] == name and rec["peers"] == [] and rec["notes"] == []
    rows = rec["rows"]
    assert [r["x"] for r in rows] == sizes
    for r in rows:
        assert (r["series"], r["metric"], r["x_unit"], r["y_unit"]) == ("locus", metric, "bytes", unit), r
        assert r["stat"] == "median" and r["n"] == 1 and r["y"] > 0, r
        assert set(r["extra"]) == extras and r["extra"]["iters"] >= 10, r
        lat_us = r["y"] if name == "pingpong" else r["extra"]["lat_us"]
        rate = r["y"] if name == "msgrate" else r["extra"]["mmsgps"]
        gbps = r["y"] if name == "bw" else r["extra"]["gbps"]
        assert rate == pytest.approx(1 / lat_us, rel=0.01)  # M/s and us per message
        assert gbps == pytest.approx(r["x"] * rate / 1e3, rel=0.01, abs=1e-5)
    p = rec["params"]
    assert p["reps"] == 1 and p["processes"] == 2 and p["touch"] is False
    assert p["mem"] == ("private" if name == "msgrate" else "heap")
    assert ("window" in p) == (name != "pingpong")
    cpus = os.cpu_count()
    assert all(0 <= rec["summary"][k] < cpus for k in ("cpu_rank0", "cpu_rank1"))


def test_rma_rows(records):
    """Latency (us) of put/get by size and fetch-add at 8 B, put_nbi bandwidth
    (GB/s) by size; the run's parameters, the path and the layer's notes."""
    rec = records["rma"]
    assert rec["benchmark"] == "rma" and rec["peers"] == []
    rows = rec["rows"]
    lat = [(r["series"], r["x"]) for r in rows if r["metric"] == "latency"]
    assert lat == [("put", 8), ("put", 4096), ("get", 8), ("get", 4096), ("fetch-add", 8)], lat
    bw = [(r["series"], r["x"]) for r in rows if r["metric"] == "bandwidth"]
    assert bw == [("put_nbi", 8), ("put_nbi", 4096)], bw
    for r in rows:
        assert r["x_unit"] == "bytes" and r["y_unit"] == ("GB/s" if r["metric"] == "bandwidth" else "us"), r
        assert r["stat"] == "median" and r["n"] == 1 and r["y"] > 0, r
        assert r["extra"]["iters"] >= 4, r
        assert ("window" in r["extra"]) == (r["metric"] == "bandwidth"), r
        assert "lat_typ_us" not in r["extra"], r  # on-node: no per-operation pass
    p = rec["params"]
    assert (p["sizes"], p["reps"], p["time"], p["window"], p["mem"], p["tests"], p["processes"]) == \
        ("8,4K", 1, 0.002, 4, "heap", "put,get,bw,amo", 2)
    assert p["reg"] in ("cache", "static", "none")
    assert rec["summary"] == {"path": "local"}
    assert any(n.startswith("heap: ") for n in rec["notes"]) and all("\n" not in n for n in rec["notes"])


def test_exchange_rows(records):
    """Per reg mode (categorical x, in the order run): keys/s per rank with the
    round time and the ratio to the first mode, registrations per round."""
    rec = records["exchange"]
    assert rec["benchmark"] == "exchange" and rec["peers"] == []
    modes = ["static", "cache", "none", "small"]
    rate = [r for r in rec["rows"] if r["metric"] == "key rate per rank"]
    regs = [r for r in rec["rows"] if r["metric"] == "registrations"]
    assert [r["x"] for r in rate] == modes and [r["x"] for r in regs] == modes
    for r in rate:
        assert (r["series"], r["x_unit"], r["y_unit"], r["stat"], r["n"]) == \
            ("locus", "reg mode", "Mkeys/s", "median", 2), r
        assert r["y"] > 0 and r["extra"]["ratio_to"] == "static", r
        # keys per round / round time = the rate
        assert r["y"] == pytest.approx(4096 / r["extra"]["round_ms"] / 1e3, rel=0.01), r
    assert rate[0]["extra"]["ratio"] == 1
    assert all(r["extra"]["ratio"] == pytest.approx(r["y"] / rate[0]["y"], rel=0.01) for r in rate)
    assert all((r["y_unit"], r["stat"]) == ("per round", "mean") and r["y"] >= 0 for r in regs)
    assert rec["params"] == {"keys": 4096, "rounds": 2, "live": 2, "modes": ",".join(modes), "processes": 2}
    assert rec["summary"] == {"path": "local"}
    heap = [n for n in rec["notes"] if n.startswith("heap: ")]
    assert len(heap) == 1, rec["notes"]  # every mode's handle says it: noted once


def test_shm_usage_errors_are_one_line():
    p = subprocess.run([locus_bin(), "bench", "pingpong", "--json"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    assert "needs exactly 2 processes, got 1" in p.stderr, p.stderr


def test_schema_rejects_what_a_plotter_cannot_read(records):
    rec = records["copy"]
    for mutate, needle in [
        (lambda r: r["rows"][0].pop("y_unit"), "'y_unit' is a required property"),
        (lambda r: r["rows"][0].update(y="fast"), "rows/0/y"),
        (lambda r: r["host"].pop("kernel"), "'kernel' is a required property"),
        (lambda r: r.update(schema="locus-bench/0"), "expected 'locus-bench/1'"),
        (lambda r: r.update(extra_field=1), "extra_field"),
    ]:
        bad = copy.deepcopy(rec)
        mutate(bad)
        with pytest.raises(bench.RecordError, match=needle.replace("(", r"\(").replace(")", r"\)")):
            bench.validate(bad, "bad.json")


def test_bench_check_cli(records, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(records["stream"]))
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "locus-profile/1"}')
    p = subprocess.run([os.sys.executable, "-m", "locus.bench", str(good), str(bad)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert f"{good}: ok (stream, 10 rows" in p.stdout
    assert p.stderr.strip() == (f"locus bench: {bad}: not a locus benchmark record (schema 'locus-profile/1'; "
                                "expected 'locus-bench/1') (a `locus profile` file: use python -m locus.report)")


def _run_on_tty(args, timeout=120):
    """Run with stderr on a pseudo-terminal, stdout a pipe; (status, stderr bytes)."""
    import pty

    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    err, t_end = b"", time.monotonic() + timeout
    while time.monotonic() < t_end:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    return p.wait(timeout=10), err


def test_progress_on_a_terminal_only():
    args = [locus_bin(), "stream", "--size", "128M", "--reps", "400", "--policy", "local"]
    rc, err = _run_on_tty(args)
    assert rc == 0
    text = err.decode()
    assert "triad: " in text and "/400 (" in text and "ETA" in text, text
    assert text.endswith("\r\x1b[K"), "the progress line is cleared at the end: %r" % text[-40:]
    rc, err = _run_on_tty(args + ["-q"])
    assert rc == 0 and err == b"", err
    p = subprocess.run(args, capture_output=True, text=True)  # not a terminal
    assert p.returncode == 0 and p.stderr == ""


def test_tune_json_validates(tmp_path):
    """locus tune --json --dry-run (its self-test cache goes to a temporary XDG_CACHE_HOME)."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    p = subprocess.run([locus_bin(), "tune", "--reps", "1", "--dry-run", "--json"], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    rec = json.loads(p.stdout)
    bench.validate(rec, "tune")
    assert rec["params"]["dry_run"] is True
    assert {r["series"] for r in rec["peers"]} == {"glibc memcpy"}
    assert "locus_copy tuned" in {r["series"] for r in rec["rows"]}
    assert rec["summary"]["heap_fault_order"] in ("first", "last") or not any(
        r["metric"].startswith("fault-in") for r in rec["rows"])
    # shm: 3 rounds (--reps 1) measure every variant but choose nothing
    s = rec["summary"]
    assert s["shm_rounds"] == 3
    assert (s["shm_split"], s["shm_split_piece"], s["shm_ref"], s["shm_fbox"]) == \
        ("32.0 KiB", "128.0 KiB", "1.0 KiB", "64.0 KiB")
    assert all(s[k + "_before"] == s[k] and s[k + "_gain"] == 1
               for k in ("shm_split", "shm_split_piece", "shm_ref", "shm_fbox"))
    shm = [r for r in rec["rows"] if r["metric"].startswith("shm ")]
    split = {(r["series"], r["x"]) for r in shm if "split copy always" in r["metric"]}
    assert {"always", "never"} == {a for a, _ in split} and len(split) == 16
    fbox = {r["series"] for r in shm if "fast box" in r["metric"]}
    assert "64.0 KiB" in fbox and len(fbox) == 7
    assert all(r["y"] is None or r["y"] > 0 for r in shm) and all(r["n"] == 3 for r in shm)
    assert any("fewer than 5" in n for n in rec["notes"])
