"""Shared by the benchmark-record tests: where the built tools are, running them."""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_dir():
    env = os.environ.get("LOCUS_BUILD_DIR")
    for d in ([env] if env else []) + [os.path.join(ROOT, "build")]:
        if os.path.exists(os.path.join(d, "bin", "locus")):
            return d
    return None


def locus_bin():
    b = build_dir()
    if b is None:
        pytest.skip("build the project first (bin/locus; LOCUS_BUILD_DIR names another build tree)")
    return os.path.join(b, "bin", "locus")


def run_json(*args, timeout=300, env=None):
    """Run `locus ARGS --json` (env: variables added to the environment); the
    record, after checking the exit status and a silent stderr (no progress
    when stderr is not a terminal)."""
    p = subprocess.run([locus_bin(), *args, "--json"], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **env) if env else None)
    assert p.returncode == 0, p.stderr
    assert p.stderr == "", p.stderr
    return json.loads(p.stdout)
