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
    rc = subprocess.run([os.path.join(b, "bin", "locus"), "profile", "-q", "-o", str(out), "--",
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
