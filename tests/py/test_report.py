"""locus.report: profiles from `locus profile` validate against the schema,
bad ones are rejected, and the text/HTML reports carry the findings."""
import copy
import json
import os
import shutil
import subprocess

import jsonschema
import pytest

from locus import report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _build_dir():
    for d in ("build", "build-prof"):
        p = os.path.join(ROOT, d)
        if os.path.exists(os.path.join(p, "bin", "locus")) and os.path.exists(
                os.path.join(p, "examples", "numa_steps")):
            return p
    return None


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    b = _build_dir()
    if b is None:
        pytest.skip("build the project first (bin/locus and examples/numa_steps)")
    out = tmp_path_factory.mktemp("prof") / "p.json"
    # A fixed sampling period: the default rate control adapts its period on
    # the kernel's tick, so a 0.2 s program gets anywhere from 0 to all of
    # tmp's pages sampled; the findings below are about the report, not that.
    rc = subprocess.run([os.path.join(b, "bin", "locus"), "profile", "-q", "--period", "16", "-o", str(out), "--",
                         os.path.join(b, "examples", "numa_steps")], capture_output=True).returncode
    assert rc == 0
    return json.loads(out.read_text())


def test_real_profile_validates(profile):
    report.validate(profile)
    assert profile["schema"] == "locus-profile/1"
    names = [v["name"] for v in profile["variables"]]
    assert "tmp" in names and "state" in names


def test_allocated_afresh_finding(profile):
    tmp = next(v for v in profile["variables"] if v["name"] == "tmp")
    assert tmp["allocations"] == 24
    assert tmp["pattern"] == "allocated-afresh"
    assert "steps.c:" in tmp["first_touch"]["sites"][0]["location"]


def test_schema_rejects_bad_profiles(profile):
    for mutate in (lambda p: p.pop("variables"),
                   lambda p: p["exit"].update(status=-1),
                   lambda p: p["variables"][0].update(kind="stack"),
                   lambda p: p.update(schema="locus-profile/0"),
                   lambda p: p["samplers"][0].update(status="maybe")):
        bad = copy.deepcopy(profile)
        mutate(bad)
        with pytest.raises(jsonschema.ValidationError):
            report.validate(bad)


def test_text_and_html(profile, tmp_path):
    text = report.text_report(profile)
    assert "tmp" in text and "findings:" in text
    for f in profile["findings"]:
        assert f in text
    out = tmp_path / "out.html"
    assert report.main([_save(profile, tmp_path), "--html", str(out)]) == 0
    page = out.read_text()
    assert page.count("data:image/png;base64,") == 2
    assert "Placement per variable" in page
    assert "Node x node accesses" in page


def test_cli_rejects_invalid_file(tmp_path, capsys):
    p = tmp_path / "bad.json"
    p.write_text('{"schema": "nope"}')
    assert report.main([str(p), "--check"]) == 1
    assert "does not match the schema" in capsys.readouterr().err
    assert report.main([str(tmp_path / "missing.json")]) == 1


def _save(profile, d):
    p = d / "p.json"
    p.write_text(json.dumps(profile))
    return str(p)


def _rank(profile, rank, run_node, page_node, finding="", size=8 << 20):
    """A rank's profile made from the real one: its job, one thread on
    run_node, one variable 'field' with its pages on page_node."""
    p = copy.deepcopy(profile)
    nodes = [{"id": 0, "cpus": [0], "memory_bytes": 1 << 30}, {"id": 1, "cpus": [1], "memory_bytes": 1 << 30}]
    p["machine"] = {"nodes": nodes, "distances": [[10, 20], [20, 10]]}
    p["access_matrix"] = [[0, 0], [0, 0]]
    p["host"] = "h"
    p["job"] = {"rank": rank, "size": 2, "from": "PMIX_RANK"}
    p["threads"] = [{"pid": 1, "tid": 1, "samples": 10, "cpus": [run_node], "nodes": [run_node]}]
    v = copy.deepcopy(p["variables"][0])
    pages = [0, 0]
    pages[page_node] = size // 4096
    v.update(name="field", kind="heap", site="field.c:20", bytes=size, max_bytes=size, pages_by_node=pages,
             pattern="policy-placement" if finding else "", finding=finding)
    v["first_touch"]["by_node"] = [0, 0]
    v["first_touch"]["sites"] = []
    v["accesses"].update(samples=0, local=0, remote=0, lines=[])
    p["variables"] = [v]
    report.validate(p)
    return p


def test_job_report_names_the_rank_bound_away(profile, tmp_path, capsys):
    why = ("field: 100 % of pages on node 0, but first touched by threads on node 1 at field.c:24: the memory "
           "policy was set from outside (bind to node 0 ...), not by the first touch")
    files = []
    for r, (run, page, f) in enumerate([(0, 0, ""), (1, 0, why)]):
        path = tmp_path / f"prof.{r}.json"
        path.write_text(json.dumps(_rank(profile, r, run, page, f)))
        files.append(str(path))
    assert report.main(files[::-1]) == 0
    text = capsys.readouterr().out
    assert "2 rank(s) on 1 host(s)" in text
    assert "- rank 1 (h): field: 100 % of pages on node 0" in text
    assert "- rank 0" not in text
    assert "<- memory away from its threads" in text
    out = tmp_path / "job.html"
    assert report.main(files + ["--html", str(out)]) == 0
    assert "rank 1 (h): field" in out.read_text()


def test_job_report_imbalance_and_same_rank_twice(profile, tmp_path, capsys):
    from locus import job
    a, b = _rank(profile, 0, 0, 0, size=4 << 20), _rank(profile, 1, 1, 1, size=16 << 20)
    j = job.merge([a, b])
    assert any("ranks allocate unequal amounts: rank 1 16.0 MiB, the smallest 4.0 MiB" in f for f in j["findings"])
    assert not j["variables"][0]["remote_rank"]
    with pytest.raises(ValueError, match="both rank 0"):
        job.merge([a, copy.deepcopy(a)])


def test_job_report_agrees_with_locus_merge(profile, tmp_path):
    """The C merge and the Python one name the same rank and variable."""
    b = _build_dir()
    why = "field: 100 % of pages on node 0, but first touched by threads on node 1: set from outside"
    files = []
    for r, (run, page, f) in enumerate([(0, 0, ""), (1, 0, why)]):
        path = tmp_path / f"prof.{r}.json"
        path.write_text(json.dumps(_rank(profile, r, run, page, f)))
        files.append(str(path))
    c = subprocess.run([os.path.join(b, "bin", "locus"), "profile", "--merge"] + files, capture_output=True,
                       text=True)
    assert c.returncode == 0, c.stderr
    from locus import job
    py = job.text_report(job.merge([json.loads(open(f).read()) for f in files], files))
    for text in (c.stdout, py):
        assert "- rank 1 (h): " + why in text
        assert "- rank 0" not in text
