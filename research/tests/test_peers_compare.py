"""research/peers: parsers, placement/busy filtering, targets and the markdown table
of compare.py, on outputs recorded on the development machine
(research/peers/fixtures/), without running the peers."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.join(ROOT, "research", "peers")
FIX = os.path.join(PEERS, "fixtures")
sys.path.insert(0, PEERS)

import peers_table as pt  # noqa: E402


def fixture(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


# ------------------------------------------------------------------ clping

def test_clping_probe_line():
    p = pt.parse_clping(fixture("clping_probe.txt"))
    assert p == {"placement": "far", "one_line_ns": 156.5, "two_line_ns": 217.1}


def test_clping_json_and_human_line():
    j = pt.parse_clping(fixture("clping.json"))
    assert j == {"placement": "far", "one_line_ns": 164.0, "two_line_ns": 212.7}
    h = pt.parse_clping(fixture("clping.txt"))
    assert h == {"placement": "near", "one_line_ns": 33.5, "two_line_ns": 39.7}
    rows = pt.metrics_from_clping(h)
    assert rows[pt.CL_ONE] == {("lat", 8): pytest.approx(0.0335)}
    assert rows[pt.CL_TWO] == {("lat", 8): pytest.approx(0.0397)}


def test_clping_rejects_other_text():
    with pytest.raises(pt.ParseError):
        pt.parse_clping("clping: responder on CPU 1 stopped answering\n")


# ------------------------------------------------------ OSU-style (locus, MPI)

def test_locus_pingpong_record():
    """`locus bench pingpong --json` writes the benchmark record (locus-bench/1):
    latency rows with bandwidth and message rate in extra."""
    r = pt.parse_osu(fixture("locus_pingpong.json"))
    assert sorted(r) == [8, 4096, 65536, 1048576]
    assert r[8]["lat_us"] == 1.51982
    assert r[1048576]["msgps"] == pytest.approx(0.0111185 * 1e6)
    assert r[4096]["mbps"] == pytest.approx(4096 * r[4096]["msgps"] / 1e6, rel=1e-3)
    m = pt.metrics_from_osu("lat", r)
    assert m[("lat", 65536)] == 41.795


def test_locus_bw_and_msgrate_units():
    bw = pt.metrics_from_osu("bw", pt.parse_osu(fixture("locus_bw.json")))
    assert bw == {("bw", 65536): pytest.approx(2.03771), ("bw", 1048576): pytest.approx(10.8478),
                  ("bw", 4194304): pytest.approx(11.3251)}
    mr = pt.metrics_from_osu("mr", pt.parse_osu(fixture("locus_msgrate.json")))
    assert mr[("mr", 8)] == pytest.approx(3.1052)
    assert mr[("mr", 1024)] == pytest.approx(2.66923)


def test_locus_record_errors_name_the_problem():
    rec = json.loads(fixture("locus_bw.json"))
    for mutate, needle in [
        (lambda r: r.update(schema="locus-profile/1"), "not a locus-bench/1 record"),
        (lambda r: r.update(rows=[]), "without locus rows"),
        (lambda r: r["rows"][0]["extra"].pop("lat_us"), "lacks a figure"),
        (lambda r: r["rows"][0].update(metric="fault-in"), "expected latency, bandwidth or message rate"),
    ]:
        bad = json.loads(json.dumps(rec))
        mutate(bad)
        with pytest.raises(pt.ParseError, match=needle):
            pt.parse_osu(json.dumps(bad))
    with pytest.raises(pt.ParseError, match="not JSON"):
        pt.parse_osu('{"schema": ')


def test_osu_mpi_json_and_tsv():
    lat = pt.parse_osu(fixture("osu_openmpi_cma_lat.json"))
    assert lat[8]["lat_us"] == 16.8018 and lat[4096]["mbps"] == 19.0
    bw = pt.metrics_from_osu("bw", pt.parse_osu(fixture("osu_mpich_bw.tsv")))
    assert bw[("bw", 1048576)] == pytest.approx(1.8194)
    assert bw[("bw", 4194304)] == pytest.approx(1.3083)
    mr = pt.metrics_from_osu("mr", pt.parse_osu(fixture("osu_openmpi_none_msgrate.json")))
    assert mr[("mr", 128)] == pytest.approx(0.102795)


def test_osu_rejects_text_output():
    with pytest.raises(pt.ParseError):
        pt.parse_osu("# osu_mpi lat: 2 ranks\n#   size lat_us\n  8 0.15 53 6000000\n")


# ------------------------------------------------------------ ucx_perftest

def test_ucx_table_takes_final_row_not_progress():
    r = pt.parse_ucx_perftest(fixture("ucx_posix_tag_lat_8.txt"))
    assert r["iterations"] == 100000
    assert r["lat_median_us"] == 0.646          # the progress row says 0.651
    assert r["lat_overall_us"] == 8.885
    assert pt.metrics_from_ucx("lat", 8, r) == {("lat", 8): 0.646}


def test_ucx_bandwidth_is_mib_per_s():
    r = pt.parse_ucx_perftest(fixture("ucx_sysv_tag_bw_1M.txt"))
    assert r["bw_overall_mibps"] == 197.53
    # 197.53 MiB/s = 197.53 * 2**20 B/s = 207.125e6 B/s
    assert pt.metrics_from_ucx("bw", 1 << 20, r)[("bw", 1 << 20)] == pytest.approx(0.2071252, rel=1e-6)
    mr = pt.parse_ucx_perftest(fixture("ucx_sm_tag_bw_128.txt"))
    assert pt.metrics_from_ucx("mr", 128, mr) == {("mr", 128): pytest.approx(0.150931)}


def test_ucx_csv_and_final_only_formats():
    csv = pt.parse_ucx_perftest(fixture("ucx_posix_cma_tag_bw_64K.csv"))
    assert csv["iterations"] == 5000 and csv["bw_overall_mibps"] == 265.44
    f = pt.parse_ucx_perftest(fixture("ucx_sysv_tag_lat_4K_f.txt"))
    assert f["iterations"] == 20000 and f["lat_median_us"] == 2.9 and f["mr_overall"] == 9225


def test_ucx_without_final_row_is_an_error():
    head = "\n".join(fixture("ucx_posix_tag_lat_8.txt").splitlines()[:6])
    with pytest.raises(pt.ParseError):
        pt.parse_ucx_perftest(head)


# ------------------------------------------------- filtering and medians

def unit(row, before, after, metrics, ok=True, foreign=0.0):
    return {"row": row, "ok": ok, "before": before, "after": after, "foreign": foreign,
            "metrics": metrics}


def test_aggregate_keeps_only_reference_placement_and_quiet_runs():
    units = [unit("X", "near", "near", {("lat", 8): 1.0}),
             unit("X", "near", "near", {("lat", 8): 3.0}),
             unit("X", "near", "near", {("lat", 8): 2.0}),
             unit("X", "near", "far", {("lat", 8): 50.0}),
             unit("X", "far", "far", {("lat", 8): 60.0}),
             unit("X", None, "near", {("lat", 8): 70.0}),
             unit("X", "near", "near", {("lat", 8): 80.0}, foreign=0.5),
             unit("X", "near", "near", {}, ok=False)]
    med, counts = pt.aggregate(units, "near", max_busy=0.1)
    assert med["X"][("lat", 8)] == 2.0
    assert counts["X"] == [3, 3, 1, 1]
    med_far, counts_far = pt.aggregate(units, "far", max_busy=0.1)
    assert med_far["X"][("lat", 8)] == 60.0 and counts_far["X"][0] == 1
    med_any, _ = pt.aggregate(units, "any")          # busy filter off
    assert med_any["X"][("lat", 8)] == 3.0           # median of 1, 2, 3, 60, 80


def sample_medians():
    return {pt.LOCUS: {("lat", 8): 0.10, ("bw", 65536): 30.0, ("bw", 1 << 20): 12.0,
                       ("bw", 4 << 20): 40.0, ("mr", 8): 5.0, ("mr", 128): 4.5,
                       ("mr", 1024): 3.0},
            "peer A": {("lat", 8): 0.15, ("bw", 65536): 20.0, ("bw", 1 << 20): 10.0,
                       ("bw", 4 << 20): 9.0, ("mr", 8): 14.0, ("mr", 128): 4.0},
            "peer B": {("lat", 8): 0.14, ("bw", 65536): 8.0, ("bw", 1 << 20): 11.0,
                       ("bw", 4 << 20): 30.0},
            pt.CL_ONE: {("lat", 8): 0.03},
            pt.CL_TWO: {("lat", 8): 0.04}}


def test_targets_use_best_peer_and_exclude_locus_and_cache_lines():
    t = {name: (val, ref_name, ref, ratio, verdict)
         for name, val, ref_name, ref, ratio, limit, verdict in pt.targets(sample_medians())}
    val, ref_name, ref, ratio, verdict = t["8 B latency vs best peer"]
    assert (ref_name, ref) == ("peer B", 0.14)       # not the cache line, not locus
    assert ratio == pytest.approx(0.10 / 0.14) and verdict == "PASS"
    assert t["8 B latency vs two-line ping-pong"][3] == pytest.approx(2.5)
    assert t["8 B latency vs two-line ping-pong"][4] == "FAIL"
    assert t["bandwidth 64 KiB vs best peer"][1:] == ("peer A", 20.0, 1.5, "PASS")
    assert t["bandwidth 1 MiB vs best peer"][1] == "peer B"
    assert t["bandwidth 1 MiB vs best peer"][4] == "FAIL"   # 12 / 11 < 1.2
    assert t["bandwidth 4 MiB vs best peer"][3] == pytest.approx(40 / 30)
    assert t["message rate 128 B vs 8 B"][3:] == (pytest.approx(0.9), "PASS")
    assert t["message rate 1 KiB vs 8 B"][3:] == (pytest.approx(0.6), "FAIL")


def test_targets_without_locus_are_not_applicable():
    med = sample_medians()
    del med[pt.LOCUS]
    assert {v for *_, v in pt.targets(med)} == {"n/a"}


def test_render_rows_cells_and_verdicts():
    med = sample_medians()
    counts = {pt.LOCUS: [5, 1, 2, 0], "peer A": [4, 0, 0, 1]}
    md = pt.render(med, counts, [pt.LOCUS, "peer A", "peer B", pt.CL_ONE, pt.CL_TWO])
    lines = md.splitlines()
    loc = next(ln for ln in lines if ln.startswith("| locus shm |"))
    cells = [c.strip() for c in loc.strip("|").split("|")]
    assert cells[1] == "0.10" and cells[2] == "–"           # lat 8 B, lat 4 KiB missing
    assert cells[5:8] == ["30.0", "12.0", "40.0"]            # bw 64 KiB, 1 MiB, 4 MiB
    assert cells[11:13] == ["0.90", "0.60"]                  # rate ratios
    assert cells[13] == "5 / 3 / 0"
    peer_a = next(ln for ln in lines if ln.startswith("| peer A |"))
    assert "0.29" in peer_a                                  # UCX-like cliff: 4 / 14
    assert "| 8 B latency vs best peer | 0.10 | peer B | 0.14 | 0.71 | <= 0.8 | PASS |" in lines
    assert sum(ln.endswith("| FAIL |") for ln in lines) == 3


def test_shm_floor_stream_lines():
    f = pt.parse_shm_floor(fixture("shm_floor.txt"))
    assert f == {8: 458.97, 128: 80.38, 1024: 18.86}
    assert pt.metrics_from_floor(f) == {pt.RING_FLOOR: {("mr", 8): 458.97, ("mr", 128): 80.38,
                                                         ("mr", 1024): 18.86}}
    with pytest.raises(pt.ParseError):
        pt.parse_shm_floor("shm_floor: cannot pin to CPU 1\n")


def test_bench_copy_rows():
    c = pt.parse_bench_copy(fixture("copy_limit.txt"))
    assert c == {65536: 135.27, 1 << 20: 62.92, 4 << 20: 66.59}
    assert pt.metrics_from_copy(c)[pt.COPY_LIMIT][("bw", 1 << 20)] == 62.92
    with pytest.raises(pt.ParseError):
        pt.parse_bench_copy("locus bench copy: --sizes '0': expected a size\n")


def test_copy_limit_is_context_not_a_peer():
    med = sample_medians()
    med[pt.COPY_LIMIT] = {("bw", 65536): 60.0, ("bw", 1 << 20): 24.0, ("bw", 4 << 20): 40.0}
    t = {name: ref_name for name, _, ref_name, *_ in pt.targets(med)}
    assert t["bandwidth 64 KiB vs best peer"] == "peer A"
    md = pt.render(med, {})
    assert "64 KiB 0.50×, 1 MiB 0.50×, 4 MiB 1.00×" in md


def test_floor_is_context_not_a_peer():
    med = sample_medians()
    med[pt.RING_FLOOR] = {("mr", 8): 400.0, ("mr", 128): 80.0, ("mr", 1024): 20.0}
    t = {name: ref_name for name, _, ref_name, *_ in pt.targets(med)}
    assert t["8 B latency vs best peer"] == "peer B"
    md = pt.render(med, {})
    assert "1 KiB rate is 0.15× the bare ring's in the same run" in md   # 3.0 / 20
    assert "its own 1 KiB / 8 B is 0.05" in md


def test_units_roundtrip_through_json():
    units = [unit("X", "near", "near", {("bw", 65536): 1.5, ("lat", 8): 0.2})]
    back = pt.units_from_json(json.loads(json.dumps(pt.units_to_json(units))))
    assert back[0]["metrics"] == {("bw", 65536): 1.5, ("lat", 8): 0.2}


# ------------------------------------------------- compare.py end to end

def test_compare_rerenders_a_recorded_run():
    """results_sample.json is a real (quick) compare.py run on this machine."""
    res = json.loads(fixture("results_sample.json"))
    out = subprocess.run([sys.executable, os.path.join(PEERS, "compare.py"), "--from-json",
                          os.path.join(FIX, "results_sample.json")],
                         capture_output=True, text=True, check=True).stdout
    med, counts = pt.aggregate(pt.units_from_json(res["units"]), res["reference"],
                               res["max_busy"])
    kept = sum(c[0] for c in counts.values())
    assert kept > 0
    assert "%d runs kept" % kept in out
    assert "| transport | lat 8 B |" in out
    # Every kept figure appears in its row, formatted as the table formats it.
    for row, cells in med.items():
        line = next(ln for ln in out.splitlines() if ln.startswith("| %s |" % row))
        for cell, v in cells.items():
            assert pt.fmt(v, cell[0]) in line


def test_private_buffer_row_gets_its_own_targets():
    med = sample_medians()
    med[pt.LOCUS_PRIVATE] = {("lat", 8): 0.2, ("mr", 8): 5.0, ("mr", 128): 5.0}
    md = pt.render(med, {})
    assert "| target (%s) |" % pt.LOCUS in md
    assert "| target (%s) |" % pt.LOCUS_PRIVATE in md
    priv = dict((n, v) for n, _, _, _, _, _, v in pt.targets(med, pt.LOCUS_PRIVATE))
    assert priv["8 B latency vs best peer"] == "FAIL"        # 0.2 / 0.14
    assert priv["message rate 128 B vs 8 B"] == "PASS"
    assert priv["bandwidth 1 MiB vs best peer"] == "n/a"
    refs = {n: r for n, _, r, _, _, _, _ in pt.targets(med, pt.LOCUS_PRIVATE)}
    assert refs["message rate 128 B vs 8 B"] == pt.LOCUS_PRIVATE + ", 8 B"


def test_other_load_column_is_the_median_over_kept_runs():
    units = [unit("X", "near", "near", {("lat", 8): 1.0}, foreign=0.02),
             unit("X", "near", "near", {("lat", 8): 1.0}, foreign=0.06),
             unit("X", "near", "near", {("lat", 8): 1.0}, foreign=0.08),
             unit("X", "near", "near", {("lat", 8): 1.0}, foreign=0.90),   # busy: not kept
             unit("X", "far", "far", {("lat", 8): 1.0}, foreign=0.00)]     # placement
    f = pt.foreign_by_row(units, "near", 0.1)
    assert f == {"X": pytest.approx(0.06)}
    med, counts = pt.aggregate(units, "near", 0.1)
    line = next(ln for ln in pt.render(med, counts, foreign=f).splitlines()
                if ln.startswith("| X |"))
    assert line.endswith("| 3 / 2 / 0 | 6 % |")


def test_compare_refilters_a_recorded_run():
    """--max-busy / --reference with --from-json re-filter the recorded runs."""
    path = os.path.join(FIX, "results_sample.json")
    res = json.loads(fixture("results_sample.json"))
    units = pt.units_from_json(res["units"])
    strict = 0.75
    expect, _ = pt.aggregate(units, "far", strict)
    kept = sum(1 for u in units if pt.unit_kept(u, "far", strict))
    busy = sum(1 for u in units if pt.unit_verdict(u, "far", strict) == "busy")
    assert 0 < kept < sum(1 for u in units if pt.unit_kept(u, "any", 1.0))
    out = subprocess.run([sys.executable, os.path.join(PEERS, "compare.py"), "--from-json", path,
                          "--reference", "far", "--max-busy", str(strict)],
                         capture_output=True, text=True, check=True).stdout
    assert "say **far** and other processes used at most 75 %" in out
    assert "%d runs kept" % kept in out and "%d discarded as busy" % busy in out
    for row, cells in expect.items():
        line = next(ln for ln in out.splitlines() if ln.startswith("| %s |" % row))
        for cell, v in cells.items():
            assert pt.fmt(v, cell[0]) in line


def test_cma_off_row_gets_its_own_targets_and_is_not_a_peer():
    med = sample_medians()
    med[pt.LOCUS_PRIVATE_COPY] = {("lat", 8): 0.06, ("bw", 1 << 20): 99.0}
    md = pt.render(med, {})
    assert "| target (%s) |" % pt.LOCUS_PRIVATE_COPY in md
    # Its 99 GB/s must not become the "best peer" that locus is measured against.
    refs = {n: r for n, _, r, _, _, _, _ in pt.targets(med, pt.LOCUS)}
    assert refs["bandwidth 1 MiB vs best peer"] != pt.LOCUS_PRIVATE_COPY


def test_touch_row_is_context_not_a_peer_nor_a_target_row():
    med = sample_medians()
    assert pt.touch_context(med) is None
    loc = med[pt.LOCUS]
    med[pt.LOCUS_TOUCH] = {("mr", 8): 10.0, ("mr", 128): 9.0, ("mr", 1024): 4.0,
                           ("bw", 1 << 20): 500.0}
    md = pt.render(med, {})
    line = next(ln for ln in md.splitlines() if ln.startswith("Context (%s" % pt.LOCUS_TOUCH))
    assert "rate 1 KiB / 8 B 0.40" in line and "rate 128 B / 8 B 0.90" in line
    assert "rate 8 B %s× untouched" % pt.fmt(10.0 / loc[("mr", 8)], "ratio") in line
    assert "| target (%s) |" % pt.LOCUS_TOUCH not in md
    refs = {n: r for n, _, r, _, _, _, _ in pt.targets(med, pt.LOCUS)}
    assert refs["bandwidth 1 MiB vs best peer"] != pt.LOCUS_TOUCH
