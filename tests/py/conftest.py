"""Records of every converted benchmark, run once per session with tiny
parameters (shared by test_bench_json.py and test_plot.py)."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchutil import DATA, run_json  # noqa: E402


@pytest.fixture(scope="session")
def records():
    """benchmark name -> record, from the tools as a user runs them."""
    return {
        "copy": run_json("bench", "copy", "--sizes", "4K,64K", "--reps", "1"),
        "heap": run_json("heap", "--size", "64M", "--pages", "4k"),
        "heap-compare": run_json("heap", "--size", "64M", "--compare"),
        "stream": run_json("stream", "--size", "24M", "--reps", "2"),
        "regcache": run_json("bench", "regcache", "--reps", "3", "--ops", "100", "--thread-ops", "2000"),
    }


@pytest.fixture(scope="session")
def pingpong():
    """`locus bench pingpong` in the record format: a hand-written fixture until
    tools/cmd_bench_shm.c adopts the emitter."""
    with open(os.path.join(DATA, "bench_pingpong.json")) as f:
        return json.load(f)
