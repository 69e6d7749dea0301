"""Benchmark records (schema locus-bench/1): load, validate, describe.

Every `locus bench ... --json`, `locus heap --json`, `locus stream --json` and
`locus tune --json` writes one record (docs/bench-schema.json; the same file
ships here as schema/bench.schema.json). locus.plot draws them.

    python -m locus.bench RESULT.json...    # validate, one line per file
"""
from __future__ import annotations

import json
import re
import sys
from importlib import resources
from typing import Any, Dict, List

SCHEMA_ID = "locus-bench/1"


class RecordError(Exception):
    """A file that is not a valid benchmark record; the message names the file and why."""


def load_schema() -> Dict[str, Any]:
    """The JSON Schema of the record (python/locus/schema/bench.schema.json)."""
    text = resources.files("locus").joinpath("schema/bench.schema.json").read_text()
    return json.loads(text)


def _where(err) -> str:
    path = "/".join(str(p) for p in err.absolute_path)
    return f"at {path}: " if path else ""


def validate(record: Any, name: str = "record") -> None:
    """Raise RecordError unless `record` is a locus-bench/1 record."""
    if not isinstance(record, dict):
        raise RecordError(f"{name}: not a locus benchmark record (a JSON {type(record).__name__}, "
                          f"expected an object with \"schema\": \"{SCHEMA_ID}\")")
    sid = record.get("schema")
    if sid != SCHEMA_ID:
        what = f"schema {sid!r}" if sid is not None else "no \"schema\" field"
        hint = " (a `locus profile` file: use python -m locus.report)" if sid == "locus-profile/1" else ""
        raise RecordError(f"{name}: not a locus benchmark record ({what}; expected {SCHEMA_ID!r}){hint}")
    import jsonschema

    try:
        jsonschema.validate(record, load_schema())
    except jsonschema.ValidationError as e:
        raise RecordError(f"{name}: does not match the {SCHEMA_ID} schema {_where(e)}{e.message}") from None


def load(path: str) -> Dict[str, Any]:
    """Read and validate one record file; RecordError says what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise RecordError(f"{path}: cannot read: {e.strerror}") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    validate(record, path)
    return record


def cpu_label(host: Dict[str, Any]) -> str:
    """'Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.0GHz' -> 'Intel Xeon Platinum 8480+'."""
    s = re.sub(r"\((R|TM|tm|r)\)", "", host.get("cpu_model") or "")
    s = re.sub(r"\s*@.*$", "", s)
    s = re.sub(r"\b(CPU|Processor|processor)\b", "", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s or host.get("vendor") or "unknown cpu"


def host_label(host: Dict[str, Any]) -> str:
    """The CPU and kernel a record was measured on: 'Intel Xeon, 6.18.44-fc-v769'."""
    return f"{cpu_label(host)}, {host.get('kernel', '?')}"


def host_key(host: Dict[str, Any]) -> tuple:
    return (host.get("cpu_model"), host.get("kernel"), host.get("hostname"))


def describe(record: Dict[str, Any]) -> str:
    return (f"{record['benchmark']}, {len(record['rows'])} rows, {len(record['peers'])} peer rows, "
            f"{host_label(record['host'])}, {record['date']}")


def main(argv: List[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    rc = 0
    for path in args:
        try:
            print(f"{path}: ok ({describe(load(path))})")
        except RecordError as e:
            print(f"locus bench: {e}", file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
