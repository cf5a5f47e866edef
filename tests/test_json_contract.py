"""The `--format json` output is a stable contract (SPEC "JSON output"): validated with jsonschema."""

from __future__ import annotations

import io
import json
import contextlib
from pathlib import Path

import jsonschema

from shaderlint.cli import main

ROOT = Path(__file__).resolve().parent.parent

POSITION = {"type": "integer", "minimum": 1}
DIAGNOSTIC_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message",
                     "kernel", "impact", "related", "fix"],
        "properties": {
            "path": {"type": "string"},
            "line": POSITION, "column": POSITION, "end_line": POSITION, "end_column": POSITION,
            "code": {"type": "string", "pattern": "^SL[0-9]{3}$"},
            "name": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
            "severity": {"enum": ["error", "warning", "info"]},
            "message": {"type": "string", "minLength": 1},
            "kernel": {"type": ["string", "null"]},
            "impact": {
                "oneOf": [
                    {"type": "null"},
                    {"type": "object",
                     "required": ["registers", "stack_bytes", "occupancy_before", "occupancy_after", "target"],
                     "properties": {
                         "registers": {"type": ["integer", "null"]},
                         "stack_bytes": {"type": ["integer", "null"]},
                         "occupancy_before": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                         "occupancy_after": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                         "target": {"type": "string"}}},
                ]
            },
            "related": {"type": "array", "items": {
                "type": "object", "required": ["path", "line", "column", "message"],
                "properties": {"path": {"type": "string"}, "line": POSITION, "column": POSITION,
                               "message": {"type": "string"}}}},
            "fix": {
                "oneOf": [
                    {"type": "null"},
                    {"type": "object", "required": ["applicability", "edits"],
                     "properties": {
                         "applicability": {"enum": ["safe", "unsafe"]},
                         "edits": {"type": "array", "minItems": 1, "items": {
                             "type": "object", "required": ["line", "column", "end_line", "end_column", "text"],
                             "properties": {"line": POSITION, "column": POSITION, "end_line": POSITION,
                                            "end_column": POSITION, "text": {"type": "string"}}}}}},
                ]
            },
        },
    },
}


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_json_output_on_examples_follows_the_schema():
    code, out, _ = run(["--format", "json", "--no-cache", "--extend-select", "ALL", str(ROOT / "examples")])
    data = json.loads(out)
    jsonschema.validate(data, DIAGNOSTIC_SCHEMA)
    assert code == 1 and data, "the examples contain findings"
    codes = {d["code"] for d in data}
    assert {"SL101", "SL201"} <= codes


def test_json_output_on_fixtures_follows_the_schema():
    code, out, _ = run(["--format", "json", "--no-cache", str(ROOT / "tests" / "fixtures")])
    data = json.loads(out)
    jsonschema.validate(data, DIAGNOSTIC_SCHEMA)
    with_related = [d for d in data if d["related"]]
    assert with_related, "SL101 reports dynamic indices as related locations"


def test_json_positions_are_one_based_characters(tmp_path):
    src = "// ünïcödé — 🚀\n__global__ void k(int* a, int n) { for (int i = threadIdx.x; i < n; i += 32) a[i] = i / n; }\n"
    f = tmp_path / "k.cu"
    f.write_text(src, encoding="utf-8")
    code, out, _ = run(["--format", "json", "--select", "SL201", str(f)])
    [d] = json.loads(out)
    line = src.splitlines()[1]
    assert d["line"] == 2
    assert line[d["column"] - 1] == "/"
    assert d["end_column"] == d["column"] + 1
    assert d["kernel"] == "k" and d["code"] == "SL201" and d["name"] == "variable-integer-division"


def test_clean_file_gives_empty_array_and_exit_0(tmp_path):
    f = tmp_path / "clean.comp"
    f.write_text("#version 450\nlayout(local_size_x = 64) in;\nvoid main() { }\n")
    code, out, _ = run(["--format", "json", str(f)])
    assert code == 0 and json.loads(out) == []
