"""Records of every converted benchmark, run once per session with tiny
parameters (shared by test_bench_json.py and test_plot.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchutil import locus_bin, run_json  # noqa: E402


def run_shm_json(what, *args, env=None):
    """`locus bench pingpong|bw|msgrate|rma|exchange` between the 2 processes of
    `locus run -n 2 --bind core`, as the benchmarks' usage says. Unbound, on a
    machine loaded past its cpus (load 7 on 2), the scheduler can stack both
    ranks on one cpu beside other work, and every message of the pingpong
    then waits for a time slice: 3 of 20 runs took over 60 s (30 ms idle),
    none of 30 bound ones (2026-11-28)."""
    return run_json("run", "-n", "2", "--bind", "core", "--", locus_bin(), "bench", what, *args, env=env)


# a small symmetric heap: the default 256 MiB costs seconds per handle on a
# loaded machine, and exchange makes one per mode
SMALL_RMA_HEAP = {"LOCUS_RMA_HEAP_SIZE": "8M"}


@pytest.fixture(scope="session")
def records():
    """benchmark name -> record, from the tools as a user runs them."""
    return {
        "copy": run_json("bench", "copy", "--sizes", "4K,64K", "--reps", "1"),
        "heap": run_json("heap", "--size", "64M", "--pages", "4k"),
        "heap-compare": run_json("heap", "--size", "64M", "--compare"),
        "stream": run_json("stream", "--size", "24M", "--reps", "2"),
        "regcache": run_json("bench", "regcache", "--reps", "3", "--ops", "100", "--thread-ops", "2000"),
        # sizes up to 1 MiB: the plot tests read the latency axis up to "1M"
        "pingpong": run_shm_json("pingpong", "--sizes", "0,8,1K,64K,1M", "--reps", "1"),
        "bw": run_shm_json("bw", "--sizes", "8,64K,1M", "--reps", "1", "--window", "8"),
        "msgrate": run_shm_json("msgrate", "--sizes", "8,1K", "--reps", "1", "--mem", "private"),
        # rma and exchange over locus rma between the 2 ranks (on-node: the mapped heaps)
        "rma": run_shm_json("rma", "--sizes", "8,4K", "--reps", "1", "--time", "0.002", "--window", "4",
                            env=SMALL_RMA_HEAP),
        "exchange": run_shm_json("exchange", "--keys", "4K", "--rounds", "2", "--live", "2", env=SMALL_RMA_HEAP),
    }


@pytest.fixture(scope="session")
def pingpong(records):
    """A real `locus bench pingpong --json` run (locus run -n 2)."""
    return records["pingpong"]
