"""research/peers tools, built and run for real: clping (cache-line ping-pong and
placement probe) and osu_mpi under Open MPI (openmpi-bin / libopenmpi-dev are
in scripts/deps.sh). Their output must parse with peers_table and be
self-consistent; no speed is asserted."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.join(ROOT, "research", "peers")
sys.path.insert(0, PEERS)

import peers_table as pt  # noqa: E402

needs_two_cpus = pytest.mark.skipif((os.cpu_count() or 1) < 2 or
                                    not {0, 1} <= os.sched_getaffinity(0),
                                    reason="needs CPUs 0 and 1")


@pytest.fixture(scope="module")
def clping(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("clping") / "clping")
    subprocess.run(["cc", "-O2", "-std=gnu11", "-Wall", "-Werror", "-o", out,
                    os.path.join(PEERS, "clping.c")], check=True)
    return out


@needs_two_cpus
def test_clping_probe_parses_and_is_plausible(clping):
    r = subprocess.run([clping, "--probe"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    p = pt.parse_clping(r.stdout)
    assert p["placement"] in ("near", "far")
    for k in ("one_line_ns", "two_line_ns"):
        assert 1 < p[k] < 1e6          # a line transfer: more than 1 ns, less than 1 ms
    # the placement is the two-line latency against --far-ns
    assert (p["placement"] == "far") == (p["two_line_ns"] > 120)


@needs_two_cpus
def test_clping_json_reports_what_was_asked(clping):
    r = subprocess.run([clping, "--json", "--runs", "5", "--iters", "100", "--spin", "pure",
                        "--far-ns", "1e9"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    import json
    d = json.loads(r.stdout)
    assert d["runs"] == 5 and d["iters"] == 100 and d["spin"] == "pure"
    assert d["placement"] == "near"    # nothing is slower than a second
    assert pt.parse_clping(r.stdout)["two_line_ns"] == d["two_line_ns"]


def test_clping_rejects_bad_options(clping):
    for args in (["--cpus", "0,0"], ["--runs", "0"], ["--spin", "yield"], ["--bogus"]):
        r = subprocess.run([clping] + args, capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, args
        assert "clping:" in r.stderr


MPICC, MPIRUN = shutil.which("mpicc.openmpi"), shutil.which("mpirun.openmpi")


@pytest.fixture(scope="module")
def osu(tmp_path_factory):
    if not (MPICC and MPIRUN):
        pytest.skip("Open MPI (mpicc.openmpi, mpirun.openmpi) not installed")
    out = str(tmp_path_factory.mktemp("osu") / "osu_mpi")
    subprocess.run([MPICC, "-O2", "-Wall", "-Werror", "-o", out,
                    os.path.join(PEERS, "osu_mpi.c")], check=True)
    return out


def mpirun(osu, *args):
    cmd = [MPIRUN, "-np", "2", "--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl",
           "self,vader"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return subprocess.run(cmd + [osu] + list(args), capture_output=True, text=True, timeout=300)


def test_osu_mpi_lat_json(osu):
    r = mpirun(osu, "lat", "--sizes", "0,8,4K", "--reps", "3", "--json")
    assert r.returncode == 0, r.stderr
    rows = pt.parse_osu(r.stdout)
    assert sorted(rows) == [0, 8, 4096]
    for size, v in rows.items():
        assert v["lat_us"] > 0
        # one-way latency and rate describe the same run: msgps = 1e6 / lat_us
        assert v["msgps"] == pytest.approx(1e6 / v["lat_us"], rel=1e-3)
        assert v["mbps"] == pytest.approx(size * v["msgps"] / 1e6, rel=1e-2, abs=0.1)


def test_osu_mpi_bw_tsv_and_default_msgrate_sizes(osu):
    r = mpirun(osu, "bw", "--sizes", "64K", "--reps", "1", "--window", "4", "--tsv")
    assert r.returncode == 0, r.stderr
    bw = pt.parse_osu(r.stdout)
    assert list(bw) == [65536] and bw[65536]["mbps"] > 0
    r = mpirun(osu, "msgrate", "--max", "64", "--reps", "1", "--json")
    assert r.returncode == 0, r.stderr
    assert sorted(pt.parse_osu(r.stdout)) == [8, 16, 32, 64]


def test_osu_mpi_rejects_bad_usage(osu):
    r = mpirun(osu, "latency")
    assert r.returncode != 0 and "unknown benchmark" in r.stderr
    r = mpirun(osu, "lat", "--sizes", "8,2G")
    assert r.returncode != 0 and "--sizes" in r.stderr
